package io.bcswitch.concurrent;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.IntSupplier;

/**
 * Runs one asynchronous step per item with at most {@code width} workers, the width read again after every step:
 * a change (an operator's new migration concurrency) applies to the work under way. A worker beyond the width
 * stops after its step; new workers start when the width grows.
 */
public final class ElasticWorkers<T> {
    private final List<T> items;
    private final IntSupplier width;
    private final Function<T, CompletableFuture<Boolean>> step;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private volatile boolean stop;

    private ElasticWorkers(List<T> items, IntSupplier width, Function<T, CompletableFuture<Boolean>> step) {
        this.items = items;
        this.width = width;
        this.step = step;
    }

    /**
     * Applies {@code step} to every item, at most {@code width} at once; a step completing with false stops the
     * run (no new item is started). Completes when every started step has finished: with the first failure, if a
     * step failed (no new item is started after it).
     */
    public static <T> CompletableFuture<Void> run(List<T> items, IntSupplier width,
                                                  Function<T, CompletableFuture<Boolean>> step) {
        ElasticWorkers<T> w = new ElasticWorkers<>(items, width, step);
        if (items.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        w.topUp();
        return w.done;
    }

    private int allowed() {
        return Math.max(1, width.getAsInt());
    }

    private boolean moreToDo() {
        return !stop && next.get() < items.size();
    }

    /** Starts workers until the width is reached or nothing is left to start. */
    private void topUp() {
        while (moreToDo()) {
            int r = running.get();
            if (r >= allowed()) {
                return;
            }
            if (running.compareAndSet(r, r + 1)) {
                work();
            }
        }
    }

    /** One worker: takes items until none is left, the run stops, or it is beyond the width. */
    private void work() {
        while (true) {
            int r = running.get();
            if (r > allowed() && running.compareAndSet(r, r - 1)) {
                return; // narrower now: r - 1 >= 1 workers go on
            }
            int i = stop ? items.size() : next.getAndIncrement();
            if (i >= items.size()) {
                if (running.decrementAndGet() == 0) {
                    Throwable e = failure.get();
                    if (e == null) {
                        done.complete(null);
                    } else {
                        done.completeExceptionally(e);
                    }
                }
                return;
            }
            CompletableFuture<Boolean> f;
            try {
                f = step.apply(items.get(i));
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            if (!f.isDone()) {
                f.whenComplete((go, e) -> {
                    after(go, e);
                    topUp();
                    work();
                });
                return;
            }
            // done already: go on in this loop rather than nesting a call per item
            Boolean go = null;
            Throwable e = null;
            try {
                go = f.join();
            } catch (RuntimeException x) {
                e = x;
            }
            after(go, e);
            topUp();
        }
    }

    private void after(Boolean go, Throwable e) {
        if (e != null) {
            failure.compareAndSet(null, e instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                    ? c.getCause() : e);
            stop = true;
        } else if (!Boolean.TRUE.equals(go)) {
            stop = true;
        }
    }
}
