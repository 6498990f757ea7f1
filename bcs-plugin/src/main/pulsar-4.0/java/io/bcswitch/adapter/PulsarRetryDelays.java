package io.bcswitch.adapter;

import io.bcswitch.concurrent.RetryDelays;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.common.util.Backoff;
import org.apache.pulsar.common.util.BackoffBuilder;

/** {@link RetryDelays} on Pulsar 4.0's {@link Backoff}: doubling from the first delay, capped, up to 10 % jitter. */
public final class PulsarRetryDelays implements RetryDelays {
    private final Backoff backoff;

    private PulsarRetryDelays(long firstMillis, long maxMillis) {
        this.backoff = new BackoffBuilder()
                .setInitialTime(firstMillis, TimeUnit.MILLISECONDS)
                .setMax(maxMillis, TimeUnit.MILLISECONDS)
                .setMandatoryStop(0, TimeUnit.MILLISECONDS)
                .create();
    }

    /** A {@link RetryDelays.Factory} method reference: {@code PulsarRetryDelays::between}. */
    public static RetryDelays between(long firstMillis, long maxMillis) {
        return new PulsarRetryDelays(firstMillis, maxMillis);
    }

    @Override
    public long nextMillis() {
        return backoff.next();
    }

    @Override
    public void reset() {
        backoff.reset();
    }
}
