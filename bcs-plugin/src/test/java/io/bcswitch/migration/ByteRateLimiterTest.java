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

    @Test
    void aRateChangedWhileCopiesWaitAppliesToTheWaitsAlreadyScheduled() throws Exception {
        java.util.concurrent.ScheduledExecutorService scheduler =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            AtomicLong rate = new AtomicLong(100); // an operator's mistake: 100 bytes per second
            ByteRateLimiter l = new ByteRateLimiter(rate::get, scheduler, System::nanoTime);
            l.acquire(10).get(5, TimeUnit.SECONDS);
            var slow = l.acquire(100_000); // about 1,000 s at that rate
            var after = l.acquire(100);
            Thread.sleep(300);
            assertEquals(false, slow.isDone());
            rate.set(0); // unlimited
            slow.get(5, TimeUnit.SECONDS);
            after.get(5, TimeUnit.SECONDS);

            rate.set(1_000_000);
            var waits = l.acquire(5_000_000); // 5 s at 1 MB/s
            rate.set(100_000_000); // 100 MB/s: the 5 s left shrink to 50 ms
            waits.get(3, TimeUnit.SECONDS);
        } finally {
            scheduler.shutdownNow();
        }
    }
}
