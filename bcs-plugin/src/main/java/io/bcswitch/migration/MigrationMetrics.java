package io.bcswitch.migration;

/** Counters of the migration, exported by the broker's metrics (see the adapter's implementation). */
public interface MigrationMetrics {
    MigrationMetrics NONE = new MigrationMetrics() { };

    default void ledgerCopied(String from, String to, long bytes) {
    }

    default void verificationFailed(String cluster) {
    }

    /**
     * A copy found an identical, closed ledger of the same id already on {@code cluster} (an earlier, interrupted run
     * made it) and took it as done: PIP-477's {@code migration_ledger_id_conflict_total}. Not a {@link #collision}.
     */
    default void alreadyPresent(String cluster) {
    }

    default void collision(String cluster) {
    }

    default void promoted(String cluster, int ledgers) {
    }

    default void rolledBack(String cluster) {
    }

    default void deleted(String cluster, int ledgers) {
    }

    /**
     * A pass of this broker's migration driver failed with {@code cause}; the next pass tries again. Passes that keep
     * failing leave a migration, a rollback or a deletion where it is.
     */
    default void passFailed(Throwable cause) {
    }
}
