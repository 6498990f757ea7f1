package io.bcswitch.adapter;

import io.bcswitch.concurrent.RetryDelays;
import java.time.Duration;
import org.apache.pulsar.common.util.Backoff;

/**
 * {@link RetryDelays} on Pulsar's {@link Backoff}: doubling from the first delay, capped, with Pulsar's jitter (4.2: up
 * to 10 % less; 5.0: ±5 %).
 */
public final class PulsarRetryDelays implements RetryDelays {
    private final Backoff backoff;

    private PulsarRetryDelays(long firstMillis, long maxMillis) {
        this.backoff = Backoff.builder()
                .initialDelay(Duration.ofMillis(firstMillis))
                .maxBackoff(Duration.ofMillis(maxMillis))
                .build();
    }

    /** A {@link RetryDelays.Factory} method reference: {@code PulsarRetryDelays::between}. */
    public static RetryDelays between(long firstMillis, long maxMillis) {
        return new PulsarRetryDelays(firstMillis, maxMillis);
    }

    @Override
    public long nextMillis() {
        return backoff.next().toMillis();
    }

    @Override
    public void reset() {
        backoff.reset();
    }
}
