package io.bcswitch.concurrent;

/**
 * Retry delays for unit tests: a short fixed wait whatever the production bounds, so that a test of "failed, then
 * retried" takes milliseconds and a broken retry fails fast (which is what makes mutation runs affordable).
 */
public final class FastRetries implements RetryDelays {
    public static final long MILLIS = 20;
    public static final RetryDelays.Factory FACTORY = (first, max) -> new FastRetries();

    @Override
    public long nextMillis() {
        return MILLIS;
    }

    @Override
    public void reset() {
    }
}
