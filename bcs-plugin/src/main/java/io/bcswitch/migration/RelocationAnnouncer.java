package io.bcswitch.migration;

import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PROMOTE's announcements to the brokers: the relocation epoch that makes every broker re-read the whole table when
 * a run starts promoting, and the wait, after each batch, until every live broker routes with the batch's epoch.
 */
final class RelocationAnnouncer {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);
    /** Brokers apply an epoch within milliseconds of its notification: polled often, the wait ends promptly. */
    private static final long APPLY_POLL_MILLIS = 100;

    private final RegistryStore registry;
    private final Clock clock;
    private final DriverTimer timer;
    private final long applyWaitNanos;

    /** @param applyWaitMillis how long to wait, after each batch, for every live broker to apply its epoch */
    RelocationAnnouncer(RegistryStore registry, Clock clock, DriverTimer timer, long applyWaitMillis) {
        this.registry = registry;
        this.clock = clock;
        this.timer = timer;
        this.applyWaitNanos = TimeUnit.MILLISECONDS.toNanos(applyWaitMillis);
    }

    /**
     * Every PROMOTE run starts with an epoch that lists nothing, so that every broker re-reads the whole
     * table once: an interrupted run (this switch's or an earlier one's) may have stopped between its
     * compare-and-sets and the bump that lists them, and brokers otherwise re-read only what an epoch lists. It also
     * announces a change whose bump was lost ({@link AnnouncedChange}), even one that left the table empty.
     */
    CompletableFuture<Void> announce(long epoch, RegistryView view, BooleanSupplier stop) {
        return registry.readRelocationEpochRecord().thenCompose(rec -> view.relocations().isEmpty()
                && !rec.unannounced() ? CompletableFuture.completedFuture(null) : bumpAndAwait(epoch, view, stop));
    }

    private CompletableFuture<Void> bumpAndAwait(long epoch, RegistryView view, BooleanSupplier stop) {
        return registry.bumpRelocationEpoch(clock.millis(), null).thenCompose(re -> {
            log.info("switch epoch={} PROMOTE starts: brokers re-read the relocation table ({} relocation(s)), "
                    + "relocation epoch={}", epoch, view.relocations().size(), re);
            return awaitApplied(epoch, re, stop);
        });
    }

    /**
     * Waits until every live broker routes with relocation epoch {@code re}, so that no broker falls more
     * than one batch behind the table; gives up waiting after the apply wait (a broker that is live but
     * stuck only slows PROMOTE down, and nothing it may read is deleted until it has caught up anyway). Stops
     * waiting as soon as {@code stop} says the run stops (a newer switch, a rollback: nothing waits for it then).
     */
    CompletableFuture<Void> awaitApplied(long epoch, long re, BooleanSupplier stop) {
        return awaitApplied(epoch, re, stop, System.nanoTime() + applyWaitNanos);
    }

    private CompletableFuture<Void> awaitApplied(long epoch, long re, BooleanSupplier stop, long deadlineNanos) {
        if (timer.closed() || stop.getAsBoolean()) {
            return CompletableFuture.completedFuture(null);
        }
        // asked for before reading, so that a broker applying the epoch while we read still wakes the wait below
        CompletableFuture<Void> applied = registry.nextChangeAtOrBelow(registry.paths().relocationApplied());
        return BrokerView.read(registry).whenComplete((b, e) -> {
            if (e != null) {
                applied.cancel(false);
            }
        }).thenCompose(brokers -> {
            List<String> behind = brokers.relocationPending(re);
            if (behind.isEmpty()) {
                applied.cancel(false);
                return CompletableFuture.completedFuture(null);
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                applied.cancel(false);
                log.warn("switch epoch={} PROMOTE goes on although broker(s) {} have not applied relocation epoch={} "
                        + "within {} s; nothing is deleted until they have", epoch, behind, re,
                        TimeUnit.NANOSECONDS.toSeconds(applyWaitNanos));
                return CompletableFuture.completedFuture(null);
            }
            // woken by a broker's applied record as soon as it is written, the poll being the safety net; the next
            // look runs on this orchestrator's thread, never on the metadata store's notification thread
            return CompletableFuture.anyOf(applied, timer.delay(APPLY_POLL_MILLIS)).thenComposeAsync(v -> {
                applied.cancel(false);
                return awaitApplied(epoch, re, stop, deadlineNanos);
            }, timer.scheduler());
        });
    }
}
