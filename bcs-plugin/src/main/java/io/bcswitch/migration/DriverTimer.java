package io.bcswitch.migration;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The migration driver's scheduler, and whether the driver is closed: every wait of a pass or a run is scheduled
 * here rather than blocking a thread, and checks {@link #closed()} so that closing the driver ends them all.
 */
final class DriverTimer {
    private final ScheduledExecutorService scheduler;
    private volatile boolean closed;

    DriverTimer(ScheduledExecutorService scheduler) {
        this.scheduler = scheduler;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    CompletableFuture<Void> delay(long millis) {
        CompletableFuture<Void> later = new CompletableFuture<>();
        // a Runnable, not a Callable: nothing reads what complete returns (as a Callable's result it was a mutant
        // no test could see)
        scheduler.schedule(() -> {
            later.complete(null);
        }, millis, TimeUnit.MILLISECONDS);
        return later;
    }

    boolean closed() {
        return closed;
    }

    void close() {
        closed = true;
    }
}
