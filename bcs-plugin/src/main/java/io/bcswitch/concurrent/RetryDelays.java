package io.bcswitch.concurrent;

/**
 * The waits between attempts at one thing that keeps failing: each longer than the one before, up to a maximum. The
 * adapter's are Pulsar's own back-off (doubling, with jitter so that brokers retrying the same thing spread out).
 * Not thread-safe: one per retried thing, used from the thread that retries it.
 */
public interface RetryDelays {
    /** The wait before the next attempt, in milliseconds. */
    long nextMillis();

    /** It worked: the next failure waits the first delay again. */
    void reset();

    /** Makes the delays for one retried thing. */
    interface Factory {
        RetryDelays between(long firstMillis, long maxMillis);
    }
}
