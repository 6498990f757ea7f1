package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ByteRateLimiterTest {
    private static final long S = TimeUnit.SECONDS.toNanos(1);

    @Test
    void shortBurstThenPaced() {
        AtomicLong now = new AtomicLong(1_000 * S);
        ByteRateLimiter l = new ByteRateLimiter(1000, null, now::get);
        assertEquals(0, l.reserve(100), "idle capacity of 100 ms is usable at once");
        assertEquals(S / 2, l.reserve(500), "then each byte waits its turn");
        assertEquals(S, l.reserve(500));
        now.addAndGet(10 * S);
        assertEquals(0, l.reserve(100), "idle again: capacity is back, but no more than 100 ms' worth");
        assertEquals(S, l.reserve(1000));
    }

    @Test
    void unlimitedNeverWaits() {
        ByteRateLimiter l = new ByteRateLimiter(0, null, () -> 0L);
        assertEquals(0, l.reserve(Long.MAX_VALUE / 4));
    }
}
