package io.bcswitch.migration;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Paces copying to {@code bytesPerSecond} without blocking a thread: each acquisition reserves its bytes
 * on a shared timeline and completes when the timeline reaches it. After an idle period a burst of at
 * most {@value #BURST_MILLIS} ms' worth is allowed: a longer one (a whole second's worth, say) lands on
 * the target's bookies at once and shows as a publish-latency spike on the brokers. Zero or negative
 * means unlimited.
 */
public final class ByteRateLimiter {
    static final long BURST_MILLIS = 100;
    private static final long BURST_NANOS = TimeUnit.MILLISECONDS.toNanos(BURST_MILLIS);
    private final LongSupplier bytesPerSecond;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoTime;
    private long nextFreeNanos;

    public ByteRateLimiter(long bytesPerSecond, ScheduledExecutorService scheduler, LongSupplier nanoTime) {
        this(() -> bytesPerSecond, scheduler, nanoTime);
    }

    /** @param bytesPerSecond the bound now: read at every acquisition, so a change applies at once */
    public ByteRateLimiter(LongSupplier bytesPerSecond, ScheduledExecutorService scheduler, LongSupplier nanoTime) {
        this.bytesPerSecond = bytesPerSecond;
        this.scheduler = scheduler;
        this.nanoTime = nanoTime;
        this.nextFreeNanos = nanoTime.getAsLong() - BURST_NANOS;
    }

    /** Delay (nanoseconds) the caller must wait before using {@code bytes}; reserves them. */
    synchronized long reserve(long bytes) {
        long rate = bytesPerSecond.getAsLong();
        if (rate <= 0 || bytes <= 0) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        // unused capacity is kept for at most the allowed burst
        long start = Math.max(nextFreeNanos, now - BURST_NANOS);
        nextFreeNanos = start + (long) (bytes * 1e9 / rate);
        return Math.max(0, nextFreeNanos - now);
    }

    public CompletableFuture<Void> acquire(long bytes) {
        long delay = reserve(bytes);
        if (delay <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        scheduler.schedule(() -> f.complete(null), delay, TimeUnit.NANOSECONDS);
        return f;
    }
}
