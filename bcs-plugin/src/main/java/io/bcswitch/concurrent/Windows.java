package io.bcswitch.concurrent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Runs one asynchronous step per item, at most a given number at once, so that work over every ledger of a cluster
 * or every topic never puts thousands of metadata reads, bookie reads or broker calls in flight together. The window
 * slides: a step starts as soon as any running one ends, not when a whole group has ended (a group waits for its
 * slowest step, and over 100,000 ledgers those waits added up to seconds).
 */
public final class Windows {
    private Windows() {
    }

    /**
     * {@code step} applied to every item, at most {@code parallel} at once; the results in the items' order. The
     * first failure fails the result, and no step starts after it.
     */
    public static <I, R> CompletableFuture<List<R>> map(List<I> items, int parallel,
                                                        Function<I, CompletableFuture<R>> step) {
        if (parallel < 1) {
            throw new IllegalArgumentException("parallel must be >= 1: " + parallel);
        }
        if (items.isEmpty()) {
            return CompletableFuture.completedFuture(new ArrayList<>());
        }
        Sliding<I, R> s = new Sliding<>(items, parallel, step);
        s.pump();
        return s.done;
    }

    /** One run of {@link #map}: which item starts next, how many run, their results. */
    private static final class Sliding<I, R> {
        private final List<I> items;
        private final int parallel;
        private final Function<I, CompletableFuture<R>> step;
        private final Object[] results;
        private final CompletableFuture<List<R>> done = new CompletableFuture<>();
        private final AtomicInteger next = new AtomicInteger();
        private final AtomicInteger running = new AtomicInteger();
        private final AtomicInteger left;
        /** Whether a thread is starting steps: one at a time, and a step done at once does not nest a call. */
        private final AtomicBoolean pumping = new AtomicBoolean();

        Sliding(List<I> items, int parallel, Function<I, CompletableFuture<R>> step) {
            this.items = items;
            this.parallel = parallel;
            this.step = step;
            this.results = new Object[items.size()];
            this.left = new AtomicInteger(items.size());
        }

        private boolean canStart() {
            return !done.isDone() && running.get() < parallel && next.get() < items.size();
        }

        /** Starts steps while there is room; a step that ends while another thread starts them is seen by it. */
        void pump() {
            while (canStart() && pumping.compareAndSet(false, true)) {
                try {
                    while (canStart()) {
                        int i = next.getAndIncrement();
                        running.incrementAndGet();
                        CompletableFuture<R> f;
                        try {
                            f = step.apply(items.get(i));
                        } catch (RuntimeException e) {
                            f = CompletableFuture.failedFuture(e);
                        }
                        f.whenComplete((r, e) -> ended(i, r, e));
                    }
                } finally {
                    pumping.set(false);
                }
            }
        }

        @SuppressWarnings("unchecked")
        private void ended(int i, R r, Throwable e) {
            if (e != null) {
                done.completeExceptionally(e);
                return;
            }
            results[i] = r;
            running.decrementAndGet();
            if (left.decrementAndGet() == 0) {
                List<R> out = new ArrayList<>(results.length);
                for (Object o : results) {
                    out.add((R) o);
                }
                done.complete(out);
                return;
            }
            pump();
        }
    }
}
