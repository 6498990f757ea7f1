package io.bcswitch.registry;

/**
 * A write of a migration run refused because another run has taken the migration over (its token, stored where the
 * run writes, is higher): the run stops. Not retryable for that run.
 */
public final class StaleRunException extends RuntimeException {
    private final long epoch;
    private final long token;
    private final long newer;

    public StaleRunException(long epoch, long token, long newer) {
        super("switch epoch " + epoch + ": the run holding token " + token + " lost the migration to the run holding "
                + newer);
        this.epoch = epoch;
        this.token = token;
        this.newer = newer;
    }

    public long epoch() {
        return epoch;
    }

    public long token() {
        return token;
    }

    /** The token of the run that owns the migration now. */
    public long newer() {
        return newer;
    }
}
