package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.RetryDelays;
import org.junit.jupiter.api.Test;

class PulsarRetryDelaysTest {
    /**
     * Pulsar's back-off moves each delay by a little jitter (4.x: up to 10 % less; 5.0: up to 5 % either way) so that
     * brokers retrying together spread out.
     */
    private static void assertAbout(long expected, long actual) {
        assertTrue(Math.abs(actual - expected) <= expected / 10,
                "expected " + expected + " ms give or take 10 %, was " + actual);
    }

    @Test
    void doublesFromTheFirstDelayUpToTheCapAndStartsOverAfterReset() {
        RetryDelays d = PulsarRetryDelays.between(1_000, 30_000);
        assertAbout(1_000, d.nextMillis());
        assertAbout(2_000, d.nextMillis());
        assertAbout(4_000, d.nextMillis());
        assertAbout(8_000, d.nextMillis());
        assertAbout(16_000, d.nextMillis());
        for (int i = 0; i < 5; i++) {
            assertAbout(30_000, d.nextMillis());
        }
        d.reset();
        assertAbout(1_000, d.nextMillis());
    }

    @Test
    void smallDelaysStayNearTheFirstAndTheCap() {
        RetryDelays d = PulsarRetryDelays.between(50, 2_000);
        assertAbout(50, d.nextMillis());
        for (int i = 0; i < 10; i++) {
            long next = d.nextMillis();
            assertTrue(next >= 45 && next <= 2_200, String.valueOf(next));
        }
        assertAbout(2_000, d.nextMillis());
    }
}
