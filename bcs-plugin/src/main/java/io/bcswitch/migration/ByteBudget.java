package io.bcswitch.migration;

import java.util.function.LongSupplier;

/**
 * A balance of bytes that refills at a rate and may be overdrawn: what {@link ByteRateLimiter} paces copies with. The
 * adapter backs it with Pulsar's own token bucket (the one the broker's publish and dispatch rate limits use).
 */
public interface ByteBudget {
    /** Takes {@code bytes} from the balance; it may go below zero, a debt that later takers wait out. */
    void take(long bytes);

    /** Nanoseconds until the balance is back at zero or above at the rate now; 0 when it already is. */
    long nanosUntilSettled();

    /** Makes a budget refilled at {@code bytesPerSecond} (read again as time goes on: an operator may change it). */
    interface Factory {
        /** @param bytesPerSecond always positive when the budget is used: an unlimited rate never reaches it */
        ByteBudget refilledAt(LongSupplier bytesPerSecond);
    }
}
