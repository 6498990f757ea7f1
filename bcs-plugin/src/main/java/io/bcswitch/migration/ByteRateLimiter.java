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
 *
 * <p>Why not Pulsar's {@code AsyncTokenBucket}: it throttles a shared balance (consume, then wait until the balance
 * is positive again), so every copy waiting would be released together once it is: the burst this class exists to
 * prevent. Here each acquisition gets its own slot on the timeline, and a rate changed by an operator moves the slots
 * of reads already waiting.
 */
public final class ByteRateLimiter {
    static final long BURST_MILLIS = 100;
    private static final long BURST_NANOS = TimeUnit.MILLISECONDS.toNanos(BURST_MILLIS);
    private final LongSupplier bytesPerSecond;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoTime;
    private long nextFreeNanos;
    /** The rate the timeline was last reserved at (0: unlimited). */
    private long lastRate;
    /** Rate changes that moved reservations ahead (rare: an operator's tuning); a waiter applies those after its own. */
    private final java.util.List<Rescale> rescales = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** A waiter re-checks its turn at least this often, so that a changed rate reaches waits already scheduled. */
    static final long MAX_SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** From {@code at} on, what was reserved ahead takes {@code factor} times as long (0: no time at all). */
    private record Rescale(long at, double factor) {
    }

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
        return reserveUntil(bytes) - nanoTime.getAsLong();
    }

    /** Reserves {@code bytes}; the time (nanoTime) from which they may be used. */
    private synchronized long reserveUntil(long bytes) {
        long rate = Math.max(0, bytesPerSecond.getAsLong());
        long now = nanoTime.getAsLong();
        if (rate != lastRate) {
            // the rate was changed (an operator's tuning): what is reserved ahead is stretched or shrunk to the new
            // rate, so a lower rate slows the next reservations and a higher one (or none) frees them at once
            long ahead = nextFreeNanos - now;
            if (ahead > 0) {
                double factor = rate <= 0 || lastRate <= 0 ? 0 : (double) lastRate / rate;
                nextFreeNanos = now + (long) (ahead * factor);
                rescales.add(new Rescale(now, factor));
            }
            lastRate = rate;
        }
        if (rate <= 0 || bytes <= 0) {
            return now;
        }
        // unused capacity is kept for at most the allowed burst
        long start = Math.max(nextFreeNanos, now - BURST_NANOS);
        nextFreeNanos = start + (long) (bytes * 1e9 / rate);
        return Math.max(now, nextFreeNanos);
    }

    public CompletableFuture<Void> acquire(long bytes) {
        int seen;
        long due;
        synchronized (this) {
            due = reserveUntil(bytes);
            seen = rescales.size();
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        waitUntil(due, seen, f);
        return f;
    }

    /**
     * Completes {@code f} at {@code due}, moved by every rate change after the first {@code seen}; a long wait is
     * taken in slices, so that a change made while waiting applies to it too.
     */
    private void waitUntil(long due, int seen, CompletableFuture<Void> f) {
        // a rate changed while nothing else reserves is noticed here (a reservation of nothing)
        synchronized (this) {
            reserveUntil(0);
        }
        java.util.List<Rescale> all = rescales;
        for (int i = seen; i < all.size(); i++) {
            Rescale r = all.get(i);
            if (due > r.at()) {
                due = r.at() + (long) ((due - r.at()) * r.factor());
            }
        }
        int now = all.size();
        long left = due - nanoTime.getAsLong();
        if (left <= 0) {
            f.complete(null);
            return;
        }
        long d = due;
        scheduler.schedule(() -> waitUntil(d, now, f), Math.min(left, MAX_SLICE_NANOS), TimeUnit.NANOSECONDS);
    }
}
