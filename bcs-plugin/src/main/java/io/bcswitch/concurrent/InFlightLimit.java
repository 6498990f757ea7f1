package io.bcswitch.concurrent;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * At most a given number of asynchronous operations in flight, the others queued in the order they were asked
 * for: what keeps one reading over 100,000 managed ledgers from putting 100,000 requests on the metadata store
 * at once. Unlike {@link Windows}, a slow operation holds up only its own slot, and operations that start
 * further operations (a tree walk) can share one limit: a slot is freed when its operation completes, not when
 * what it started does.
 *
 * <p>Operations start on the thread that frees a slot (or that asks, when a slot is free) and never nest: an
 * operation that completes at once does not start the next one from inside itself, so a long queue of quick
 * operations runs in a loop, not down the stack.
 */
public final class InFlightLimit {
    private final int limit;
    private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    /** Guarded by {@code this}. */
    private int inFlight;
    /** Guarded by {@code this}. */
    private int peak;
    private final AtomicInteger drainers = new AtomicInteger();

    public InFlightLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1: " + limit);
        }
        this.limit = limit;
    }

    public int limit() {
        return limit;
    }

    /** The most operations that were ever in flight at once. */
    public synchronized int peak() {
        return peak;
    }

    public synchronized int inFlight() {
        return inFlight;
    }

    /**
     * {@code operation} started once a slot is free; its outcome, completed after the slot is freed (so that what
     * runs on completion and asks for more finds the slot free). An operation that throws fails its outcome.
     */
    public <T> CompletableFuture<T> submit(Supplier<CompletableFuture<T>> operation) {
        CompletableFuture<T> outcome = new CompletableFuture<>();
        synchronized (this) {
            waiting.add(() -> start(operation, outcome));
        }
        drain();
        return outcome;
    }

    private <T> void start(Supplier<CompletableFuture<T>> operation, CompletableFuture<T> outcome) {
        CompletableFuture<T> running;
        try {
            running = operation.get();
            if (running == null) {
                running = CompletableFuture.failedFuture(new NullPointerException("an operation answered null"));
            }
        } catch (Throwable e) {
            // whatever it threw, the slot is freed below: a lost slot would stop every later operation for good
            running = CompletableFuture.failedFuture(e);
        }
        running.whenComplete((v, e) -> {
            synchronized (this) {
                inFlight--;
            }
            drain();
            if (e != null) {
                outcome.completeExceptionally(e);
            } else {
                outcome.complete(v);
            }
        });
    }

    /**
     * Starts queued operations while slots are free; one thread at a time does, the others only tell it to look
     * again.
     */
    private void drain() {
        if (drainers.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        while (true) {
            while (true) {
                Runnable next;
                synchronized (this) {
                    if (inFlight >= limit || waiting.isEmpty()) {
                        break;
                    }
                    next = waiting.poll();
                    inFlight++;
                    peak = Math.max(peak, inFlight);
                }
                next.run();
            }
            missed = drainers.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }
}
