package io.bcswitch.adapter;

import io.bcswitch.migration.ByteBudget;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.pulsar.broker.qos.AsyncTokenBucket;
import org.apache.pulsar.broker.qos.MonotonicClock;

/**
 * The copy rate's budget on Pulsar's {@link AsyncTokenBucket}, with a rate read at each use (so that an operator's
 * tuning applies to the next check). The bucket holds at most {@value #BURST_MILLIS} ms' worth: after an idle
 * period a longer burst (a whole second's worth, say) lands on the target's bookies at once and shows as a
 * publish-latency spike on the brokers.
 */
public final class PulsarByteBudget implements ByteBudget {
    static final long BURST_MILLIS = 100;
    /** The bucket recomputes its balance at most this often; finer than Pulsar's 16 ms default for small copies. */
    private static final long RESOLUTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private final AsyncTokenBucket bucket;

    private PulsarByteBudget(LongSupplier bytesPerSecond, MonotonicClock clock) {
        this.bucket = AsyncTokenBucket.builderForDynamicRate()
                // never 0: Pulsar's bucket divides by the rate (the limiter does not use a budget while unlimited)
                .rateFunction(() -> Math.max(1, bytesPerSecond.getAsLong()))
                .ratePeriodNanosFunction(() -> TimeUnit.SECONDS.toNanos(1))
                .capacityFactor(BURST_MILLIS / 1000.0)
                .initialFillFactor(BURST_MILLIS / 1000.0)
                .clock(clock)
                .addTokensResolutionNanos(RESOLUTION_NANOS)
                .build();
    }

    /** A budget on the JVM's monotonic clock. */
    public static ByteBudget refilledAt(LongSupplier bytesPerSecond) {
        return new PulsarByteBudget(bytesPerSecond, System::nanoTime);
    }

    /** For tests: a budget on a clock the test moves. */
    public static ByteBudget refilledAt(LongSupplier bytesPerSecond, LongSupplier nanoTime) {
        return new PulsarByteBudget(bytesPerSecond, nanoTime::getAsLong);
    }

    @Override
    public void take(long bytes) {
        bucket.consumeTokens(bytes);
    }

    @Override
    public long nanosUntilSettled() {
        return bucket.calculateThrottlingDuration(0);
    }
}
