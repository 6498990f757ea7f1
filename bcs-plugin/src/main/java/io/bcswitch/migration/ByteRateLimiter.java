package io.bcswitch.migration;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Paces copying to {@code bytesPerSecond} without blocking a thread. Zero or negative means unlimited.
 *
 * <p>The bytes are counted in a {@link ByteBudget} (Pulsar's token bucket): a copy takes its bytes when the budget is
 * not in debt and the next one waits until the debt is paid off. Copies wait in one queue and are let through one at a
 * time, in the order they asked: a bucket alone lets every waiter through together once its balance is positive
 * again, a burst on the target's bookies that this class exists to prevent. A wait is taken in slices of at most
 * {@value #MAX_SLICE_MILLIS} ms and the rate is read again after each, so that an operator's change (a higher rate,
 * unlimited, a lower one) applies to the copies already waiting.
 */
public final class ByteRateLimiter {
    static final long MAX_SLICE_MILLIS = 1_000;
    private static final long MIN_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private final LongSupplier bytesPerSecond;
    private final ByteBudget budget;
    private final ScheduledExecutorService scheduler;
    private final Queue<Waiter> waiting = new ArrayDeque<>();
    /** The one pending re-check of the queue's head, if any. */
    private ScheduledFuture<?> recheck;

    /** @param charge what it takes from the budget, given the rate when it is let through */
    private record Waiter(java.util.function.LongUnaryOperator charge, CompletableFuture<Void> turn) {
    }

    /** @param bytesPerSecond the bound now: read at every acquisition and every re-check, so a change applies at once */
    public ByteRateLimiter(LongSupplier bytesPerSecond, ByteBudget.Factory budgets,
                           ScheduledExecutorService scheduler) {
        this.bytesPerSecond = bytesPerSecond;
        this.budget = budgets.refilledAt(bytesPerSecond);
        this.scheduler = scheduler;
    }

    /** Completes when {@code bytes} may be copied. */
    public CompletableFuture<Void> acquire(long bytes) {
        long charge = Math.max(0, bytes);
        return enqueue(rate -> charge);
    }

    private CompletableFuture<Void> enqueue(java.util.function.LongUnaryOperator charge) {
        CompletableFuture<Void> turn = new CompletableFuture<>();
        synchronized (this) {
            waiting.add(new Waiter(charge, turn));
        }
        letThrough();
        return turn;
    }

    /**
     * What a ledger's copy costs besides its bytes, at most: a copy is also metadata work (the source's metadata read,
     * the target's ledger created and closed, the verification's open) on metadata stores and bookie journals that
     * topics share. Without a charge for it, ledgers of a few hundred bytes (schemas, cursors) are copied as fast as
     * the metadata stores answer, whatever the budget, and publish latency pays for it.
     */
    static final long LEDGER_COST_BYTES = 16 * 1024;
    /** ... and at most this share of a second's budget, so that a small budget is not spent on ledger counts. */
    static final long LEDGER_COST_SHARE = 64;

    /**
     * Completes when one more ledger's copy (or check of a copy already there) may start: it is charged {@value
     * #LEDGER_COST_BYTES} bytes, or 1/{@value #LEDGER_COST_SHARE} of a second's budget when that is less, at the
     * rate when its turn comes (nothing when unlimited). So ledgers of a few hundred bytes go at most 64 a second at
     * any budget up to 1 MB/s (the default), and at budget / 16 KB above it; a budget of a few KB/s still pays for
     * bytes, not for ledger counts.
     */
    public CompletableFuture<Void> acquireLedger() {
        return enqueue(ByteRateLimiter::ledgerCharge);
    }

    static long ledgerCharge(long bytesPerSecond) {
        return bytesPerSecond <= 0 ? 0 : Math.min(LEDGER_COST_BYTES, Math.max(1, bytesPerSecond / LEDGER_COST_SHARE));
    }

    /** Copies waiting for their turn (for tests and status). */
    synchronized int waiting() {
        return waiting.size();
    }

    /** Lets through, in order, the waiters whose turn it is; schedules the next look when one must wait. */
    void letThrough() {
        java.util.List<CompletableFuture<Void>> go = new java.util.ArrayList<>();
        synchronized (this) {
            if (recheck != null) {
                recheck.cancel(false);
                recheck = null;
            }
            while (!waiting.isEmpty()) {
                if (waiting.peek().turn().isDone()) {
                    waiting.poll(); // given up while it waited (its run stopped): it takes none of the budget
                    continue;
                }
                if (bytesPerSecond.getAsLong() > 0) {
                    long wait = budget.nanosUntilSettled();
                    if (wait > 0) {
                        long slice = Math.max(MIN_SLICE_NANOS,
                                Math.min(wait, TimeUnit.MILLISECONDS.toNanos(MAX_SLICE_MILLIS)));
                        recheck = scheduler.schedule(this::letThrough, slice, TimeUnit.NANOSECONDS);
                        break;
                    }
                    budget.take(waiting.peek().charge().applyAsLong(bytesPerSecond.getAsLong()));
                }
                go.add(waiting.poll().turn());
            }
        }
        // outside the lock: a completion runs the copy's next step on this thread
        go.forEach(f -> f.complete(null));
    }
}
