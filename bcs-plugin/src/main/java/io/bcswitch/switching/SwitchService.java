package io.bcswitch.switching;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.precheck.SwitchPrecheck;
import io.bcswitch.registration.ClusterRegistration;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.ConfirmedChange;
import io.bcswitch.registry.IdWatermark;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's actions: list, register, unregister, precheck, switch, status. Any broker can serve them; they
 * act only on the registry (and, for a switch, the target's id generator), never on this broker's
 * clients: brokers apply a switch when they see its directive. The switch itself is done here; registration
 * ({@link ClusterRegistration}), the precheck ({@link SwitchPrecheck}) and the status ({@link StatusReporter}) by
 * their own components.
 */
public class SwitchService {
    private static final Logger log = LoggerFactory.getLogger(SwitchService.class);

    private final RegistryStore registry;
    private final Clock clock;
    private final SwitchPrecheck prechecks;
    private final ClusterRegistration registration;
    private final StatusReporter status;
    private final long prepareTimeoutMillis;
    private final java.util.function.LongConsumer switchCommitted;

    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory) {
        this(registry, metadata, requiredBookies, clock, inventory, ClusterProbe.NONE);
    }

    /**
     * @param probe proves a target can take ledgers from a broker's own client (see {@link ClusterProbe})
     */
    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory, ClusterProbe probe) {
        this(registry, metadata, requiredBookies, clock, inventory, probe, 0);
    }

    /**
     * @param prepareTimeoutMillis longest wait, before committing a switch, for every live broker to have its clients
     *                             of the target ready; 0: commit without announcing the switch first
     */
    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory, ClusterProbe probe, long prepareTimeoutMillis) {
        this(registry, metadata, requiredBookies, clock, inventory, probe, prepareTimeoutMillis, e -> { });
    }

    /**
     * @param switchCommitted told the epoch of each switch this service commits (the migration starts on this
     *                        broker)
     */
    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory, ClusterProbe probe, long prepareTimeoutMillis,
                         java.util.function.LongConsumer switchCommitted) {
        this.switchCommitted = switchCommitted;
        this.prepareTimeoutMillis = prepareTimeoutMillis;
        this.registry = registry;
        this.clock = clock;
        this.prechecks = new SwitchPrecheck(registry, metadata, requiredBookies, clock, probe);
        this.registration = new ClusterRegistration(registry, prechecks, inventory, clock);
        this.status = new StatusReporter(registry);
    }

    // ---- the operator's other actions, done by the component whose job each is ----

    public CompletableFuture<List<BookieClusterRecord>> list() {
        return registration.list();
    }

    public CompletableFuture<BookieClusterRecord> get(String name) {
        return registration.get(name);
    }

    /** See {@link ClusterRegistration#register}. */
    public CompletableFuture<BookieClusterRecord> register(String name, String metadataServiceUri) {
        return registration.register(name, metadataServiceUri);
    }

    /** See {@link ClusterRegistration#unregister}. */
    public CompletableFuture<BookieClusterRecord> unregister(String name) {
        return registration.unregister(name);
    }

    public CompletableFuture<StatusReport> status() {
        return status.status();
    }

    /** See {@link SwitchPrecheck#observe}. */
    public CompletableFuture<Void> observe(String cluster, String source) {
        return prechecks.observe(cluster, source);
    }

    /** See {@link SwitchPrecheck#facts(BookieClusterRecord)}. */
    public CompletableFuture<ClusterFacts> facts(BookieClusterRecord c) {
        return prechecks.facts(c);
    }

    public CompletableFuture<PrecheckReport> precheck(String target) {
        return precheck(target, false);
    }

    /**
     * The precheck report; what it read of the clusters' id generators is remembered (id watermarks), so that
     * a later switch away from one that cannot be read any more still knows which ids it issued.
     *
     * @param allowUnknownSourceIds switch although the source cannot be read and nothing records which ids it issued
     */
    public CompletableFuture<PrecheckReport> precheck(String target, boolean allowUnknownSourceIds) {
        return registration.get(target).thenCompose(rec -> registry.readDirective()
                .thenCompose(d -> prechecks.check(rec, d, allowUnknownSourceIds)))
                .thenCompose(report -> prechecks.remember(report, "precheck").thenApply(v -> report));
    }

    /** First high-order value above every id the broker cluster has used on any cluster. */
    static long proposedHighOrderBits(RangeTable ranges, Versioned<SwitchDirective> d, ClusterFacts source,
                                      ClusterFacts target, java.util.Collection<IdWatermark> marks) {
        return SwitchPrecheck.proposedHighOrderBits(ranges, d, source, target, marks);
    }

    // ---- the switch ----

    /**
     * Switches the broker cluster to {@code target}: refused (409) while a live broker would not follow it (it
     * runs without the plugin, or has not confirmed the current epoch: its agent could miss the new directive),
     * then the precheck inline (refused with the report when it fails); records the current directive's range in
     * the range table (so that every directive but the newest is in the table, whatever happened to the broker that
     * wrote it), moves the target's id generator to a fresh range, and writes the directive by compare-and-set on
     * the version read at the start, so that of two concurrent switches exactly one wins. Returns as soon as the
     * directive is written; brokers apply it asynchronously.
     */
    public CompletableFuture<SwitchResult> switchTo(String target) {
        return switchTo(target, false);
    }

    public CompletableFuture<SwitchResult> switchTo(String target, boolean allowUnknownSourceIds) {
        // the directive first, then the target's record: a command that changed the record (close-client,
        // unregister) confirms the directive after its change (ConfirmedChange), so either this switch reads the
        // record after that change, or its compare-and-set below fails
        // before the first switch, the bootstrap record stands in for the directive (ConfirmedChange.underSwitch):
        // read before the target's record, rewritten at that version just before the directive is created
        return registry.readDirective().thenCompose(d -> ConfirmedChange.underSwitch(registry, d).thenCompose(under ->
                registration.get(target).thenCompose(rec ->
                BrokerView.read(registry).thenCompose(brokers -> {
                    long current = d.present() ? d.value().epoch() : 0L;
                    List<String> notFollowing = brokers.wouldNotFollow(current);
                    if (!notFollowing.isEmpty()) {
                        throw RegistryException.conflict("cannot switch while live broker(s) would not follow the "
                                + "switch: " + String.join("; ", notFollowing) + ". Every broker must run the plugin "
                                + "and have applied switch epoch " + current + " (see status)");
                    }
                    return prechecks.check(rec, d, allowUnknownSourceIds);
                }).thenCompose(report -> {
                    if (!report.ok()) {
                        throw new RegistryException(RegistryException.Kind.CONFLICT,
                                "precheck failed for '" + target + "': " + String.join("; ", report.problems()),
                                report);
                    }
                    CompletableFuture<Void> previousRecorded = d.present()
                            ? RegistryFollowUp.recordRange(registry, d.value())
                            : CompletableFuture.completedFuture(null);
                    return previousRecorded
                            .thenCompose(v -> prechecks.advanceHighOrderBits(rec, report.proposedHighOrderBits()))
                            .thenCompose(v -> prepareBrokers(target, d.present() ? d.value().epoch() + 1 : 1,
                                    report.proposedFirstLedgerId()))
                            .thenCompose(v -> {
                                long epoch = d.present() ? d.value().epoch() + 1 : 1;
                                SwitchDirective next = new SwitchDirective(SwitchDirective.FORMAT_VERSION, target,
                                        report.source(), epoch, clock.millis(), report.proposedFirstLedgerId());
                                return ConfirmedChange.claimFirstSwitch(registry, under).thenCompose(c -> registry.write(
                                        registry.paths().switchTarget(), next, d.version())).thenApply(ver -> next);
                            })
                            .exceptionallyCompose(e -> !RegistryStore.isVersionConflict(e)
                                    ? CompletableFuture.failedFuture(Failures.unwrap(e))
                                    : registry.readDirective().thenApply(now -> {
                                        throw RegistryException.conflict(now.present() && (!d.present()
                                                || now.value().epoch() != d.value().epoch())
                                                ? "another switch was committed concurrently; check status and retry"
                                                : "a concurrent command that decided under the current switch "
                                                + "(close-client, cleanup, unregister or a rollback) changed what the "
                                                + "switch read; check status and retry");
                                    }))
                            .thenCompose(next -> {
                                log.info("bookie-cluster={} switch committed: epoch={}, origin={}, first ledger id={}",
                                        target, next.epoch(), next.origin(), next.firstLedgerId());
                                switchCommitted.accept(next.epoch());
                                return registry.raiseWatermark(target, report.proposedHighOrderBits(), -1,
                                                clock.millis(), "switch")
                                        .thenCompose(w -> prechecks.remember(report, "switch"))
                                        .exceptionally(e -> null)
                                        .thenCompose(w -> RegistryFollowUp.afterSwitch(registry, next))
                                        .exceptionally(e -> {
                                            log.warn("bookie-cluster={} epoch={} registry follow-up failed; brokers "
                                                    + "will complete it: {}", target, next.epoch(), e.toString());
                                            return null;
                                        })
                                        .thenApply(v -> new SwitchResult(next, report));
                            });
                }))));
    }

    private static final long PREPARE_FIRST_POLL_MILLIS = 25;
    private static final long PREPARE_MAX_POLL_MILLIS = 200;

    /**
     * Announces the switch about to be committed (its target already has the new range) and waits, at most
     * {@code prepareTimeoutMillis}, until every live broker says it has its clients of the target ready. Never
     * fails: the announcement only saves the brokers work in the first moments after the commit, so a broker that
     * is slow or cannot prepare is left to build its clients when it applies the directive, as without it.
     */
    private CompletableFuture<Void> prepareBrokers(String target, long epoch, long firstLedgerId) {
        if (prepareTimeoutMillis <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        long started = System.nanoTime();
        long deadline = started + prepareTimeoutMillis * 1_000_000L;
        var announcement = new io.bcswitch.registry.SwitchPreparation(
                io.bcswitch.registry.SwitchPreparation.FORMAT_VERSION, target, epoch, firstLedgerId, clock.millis());
        // the bound holds whatever the metadata store does: a read that hangs ends the wait like a slow broker
        return registry.update(registry.paths().switchPrepare(), io.bcswitch.registry.SwitchPreparation.class,
                        cur -> Optional.of(announcement))
                .thenCompose(w -> awaitPrepared(firstLedgerId, deadline, PREPARE_FIRST_POLL_MILLIS))
                .orTimeout(prepareTimeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
                .handle((waiting, e) -> {
                    long ms = (System.nanoTime() - started) / 1_000_000L;
                    if (e != null && Failures.unwrap(e) instanceof java.util.concurrent.TimeoutException) {
                        log.warn("bookie-cluster={} epoch={}: not every broker said it prepared its clients within "
                                + "{} ms; committing anyway (those that did not build them when they apply the "
                                + "switch)", target, epoch, prepareTimeoutMillis);
                    } else if (e != null) {
                        log.warn("bookie-cluster={} epoch={}: cannot announce the switch ({} ms), committing it "
                                + "anyway: {}", target, epoch, ms, SwitchPrecheck.rootMessage(e));
                    } else if (waiting.isEmpty()) {
                        log.info("bookie-cluster={} epoch={}: every live broker prepared its clients in {} ms", target,
                                epoch, ms);
                    } else {
                        log.warn("bookie-cluster={} epoch={}: broker(s) {} did not prepare their clients within {} ms;"
                                + " committing anyway (they build them when they apply the switch)", target, epoch,
                                waiting, prepareTimeoutMillis);
                    }
                    return null;
                });
    }

    /**
     * Live brokers not ready for the range starting at {@code firstLedgerId} at the deadline (empty: none). Wakes when
     * a broker record changes (the registry's change hint), or at the latest after {@code pollMillis}, backing off to
     * {@value #PREPARE_MAX_POLL_MILLIS} ms, since a notification may be lost.
     */
    private CompletableFuture<List<String>> awaitPrepared(long firstLedgerId, long deadlineNanos, long pollMillis) {
        // registered before the read: a record written after the read wakes the next one
        CompletableFuture<Void> changed = registry.nextChangeAtOrBelow(registry.paths().brokers());
        return BrokerView.read(registry).thenCompose(view -> {
            List<String> waiting = view.notPrepared(firstLedgerId);
            if (waiting.isEmpty() || System.nanoTime() >= deadlineNanos) {
                changed.cancel(false);
                return CompletableFuture.completedFuture(waiting);
            }
            CompletableFuture<Void> tick = CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(
                    pollMillis, java.util.concurrent.TimeUnit.MILLISECONDS));
            return CompletableFuture.anyOf(changed, tick).thenComposeAsync(x -> {
                changed.cancel(false);
                return awaitPrepared(firstLedgerId, deadlineNanos, Math.min(PREPARE_MAX_POLL_MILLIS, pollMillis * 2));
            });
        });
    }
}
