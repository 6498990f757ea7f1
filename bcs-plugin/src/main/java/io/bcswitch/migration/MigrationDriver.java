package io.bcswitch.migration;

import io.bcswitch.registry.RegistryException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This broker's migration driver: the periodic pass and the operator's actions (retry, rollback) are queued onto it
 * and run one step at a time, never beside each other, so that no two of them ever race for the same state.
 */
final class MigrationDriver {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    private final DriverTimer timer;
    private final Supplier<String> brokerId;
    private final Supplier<CompletableFuture<Void>> pass;
    private final MigrationMetrics metrics;
    private final Object driverLock = new Object();
    private CompletableFuture<Void> driverTail = CompletableFuture.completedFuture(null);
    private CompletableFuture<Void> queuedPass;
    private volatile ScheduledFuture<?> ticker;

    /** @param pass one pass of the driver ({@link MigrationPass#run}) */
    MigrationDriver(DriverTimer timer, Supplier<String> brokerId, Supplier<CompletableFuture<Void>> pass,
                    MigrationMetrics metrics) {
        this.timer = timer;
        this.brokerId = brokerId;
        this.pass = pass;
        this.metrics = metrics;
    }

    /** Checks for work every {@code periodMillis} (from the first call on; later calls change nothing). */
    synchronized void start(long periodMillis) {
        if (ticker == null) {
            ticker = timer.scheduler().scheduleWithFixedDelay(this::tick, periodMillis, periodMillis,
                    TimeUnit.MILLISECONDS);
        }
    }

    /** Runs {@code action} on the driver, after everything queued before it. */
    <T> CompletableFuture<T> enqueue(Supplier<CompletableFuture<T>> action) {
        synchronized (driverLock) {
            CompletableFuture<T> result = driverTail.thenCompose(v -> {
                if (timer.closed()) {
                    return CompletableFuture.<T>failedFuture(RegistryException.unavailable(
                            "the migration driver of broker " + brokerId.get() + " is closed"));
                }
                try {
                    return action.get();
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                }
            });
            driverTail = result.handle((x, e) -> null);
            return result;
        }
    }

    /**
     * Queues one pass (at most one is queued at a time); completes when that pass has run. A pass counts as queued
     * from before it is handed to the driver until it starts, so that whatever asks for a pass after one started
     * (an operator's retry, finished inside that pass's completion) always gets a pass of its own.
     */
    CompletableFuture<Void> tick() {
        synchronized (driverLock) {
            if (queuedPass != null) {
                return queuedPass;
            }
            CompletableFuture<Void> queued = new CompletableFuture<>();
            queuedPass = queued;
            enqueue(() -> {
                synchronized (driverLock) {
                    if (queuedPass == queued) {
                        queuedPass = null; // started: a tick from now on queues the next pass
                    }
                }
                return pass.get();
            }).whenComplete((v, e) -> {
                if (e != null && !timer.closed()) {
                    log.warn("migration pass failed on broker {} (will retry): {}", brokerId.get(), e.toString());
                    metrics.passFailed(e);
                }
                synchronized (driverLock) {
                    if (queuedPass == queued) {
                        queuedPass = null; // never started (the driver is closed)
                    }
                }
                if (e != null) {
                    queued.completeExceptionally(e);
                } else {
                    queued.complete(null);
                }
            });
            return queued;
        }
    }

    void close() {
        timer.close();
        ScheduledFuture<?> t = ticker;
        if (t != null) {
            t.cancel(false);
        }
    }
}
