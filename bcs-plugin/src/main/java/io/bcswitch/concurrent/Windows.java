package io.bcswitch.concurrent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Runs one asynchronous step per item, at most a given number at once (one window after the other), so that work
 * over every ledger of a cluster or every topic never puts thousands of metadata reads, bookie reads or broker
 * calls in flight together.
 */
public final class Windows {
    private Windows() {
    }

    /**
     * {@code step} applied to every item, at most {@code parallel} at once; the results in the items' order. The
     * first failure fails the result (windows after it are not started).
     */
    public static <I, R> CompletableFuture<List<R>> map(List<I> items, int parallel,
                                                        Function<I, CompletableFuture<R>> step) {
        if (parallel < 1) {
            throw new IllegalArgumentException("parallel must be >= 1: " + parallel);
        }
        List<R> out = new ArrayList<>(items.size());
        return from(items, 0, parallel, step, out).thenApply(v -> out);
    }

    private static <I, R> CompletableFuture<Void> from(List<I> items, int start, int parallel,
                                                       Function<I, CompletableFuture<R>> step, List<R> out) {
        int from = start;
        // windows whose steps are already done are taken in this loop, so a long list of quick steps does not
        // nest one call per window; the next window after one still running starts from its completion
        while (from < items.size()) {
            int to = Math.min(items.size(), from + parallel);
            List<CompletableFuture<R>> running = new ArrayList<>(to - from);
            for (int i = from; i < to; i++) {
                CompletableFuture<R> f;
                try {
                    f = step.apply(items.get(i));
                } catch (RuntimeException e) {
                    f = CompletableFuture.failedFuture(e);
                }
                running.add(f);
            }
            CompletableFuture<Void> all = CompletableFuture.allOf(running.toArray(CompletableFuture[]::new));
            if (!all.isDone() || all.isCompletedExceptionally()) {
                int next = to;
                return all.thenCompose(v -> {
                    running.forEach(f -> out.add(f.join()));
                    return from(items, next, parallel, step, out);
                });
            }
            running.forEach(f -> out.add(f.join()));
            from = to;
        }
        return CompletableFuture.completedFuture(null);
    }
}
