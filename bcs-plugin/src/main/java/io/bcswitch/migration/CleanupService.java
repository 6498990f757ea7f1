package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.concurrent.Windows;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Empties an old bookie cluster of what nothing needs any more, and retires it.
 *
 * <p>A ledger on the cluster is a target only when it is safe to delete:
 * <ul>
 *   <li>RELOCATED: its home is a copy elsewhere that exists and has the same content (closed, same last entry
 *       and length), and every live broker routes with the relocation epoch that moved it;</li>
 *   <li>STRAY_COPY: a copy this plugin made (its custom metadata says so) of a ledger whose home is elsewhere;
 *       a ledger that merely has an id of another cluster's range is never one;</li>
 *   <li>UNREFERENCED: nothing in the broker metadata names it, it is closed, and either its id is of a range
 *       the cluster issued and Pulsar made it as a managed-ledger or schema ledger (never a compacted-topic
 *       ledger: see {@link #DELETABLE_COMPONENTS}), or this plugin made it (a copy, a probe).</li>
 * </ul>
 * Ledgers of unknown origin are never deleted, nor any ledger a live broker holds open on the cluster. The plan
 * is made from one read of the metadata, and every batch is checked again against a fresh read right before it
 * is deleted. Refused (409) while the cluster is active, while a cutover or a migration is in progress, and,
 * unless forced, inside the rollback window of the latest switch.
 */
public final class CleanupService {
    private static final Logger log = LoggerFactory.getLogger(CleanupService.class);
    /**
     * Pulsar components whose unreferenced, closed ledgers cleanup deletes. Not compacted-topic ledgers: the one in
     * use may be named only by the compaction cursor's own ledger (its copy in the metadata store lags), and Pulsar
     * deletes the compacted ledgers a newer compaction replaced itself.
     */
    private static final Set<String> DELETABLE_COMPONENTS = Set.of("managed-ledger", "schema");
    /** Ledgers deleted per re-check of the metadata. */
    static final int BATCH = 200;
    private static final int MAX_NOTES = 100;
    /** Ledgers whose metadata cleanup reads at once while it decides (a cluster may hold many thousands). */
    static final int PARALLEL_DECISIONS = 32;

    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final MigrationOrchestrator orchestrator;
    private final ClusterDeprecation deprecation;
    private final SwitchConfig.Migration config;
    private final MigrationMetrics metrics;
    private final Clock clock;

    public CleanupService(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                          MigrationOrchestrator orchestrator, DrainReports drain, SwitchConfig.Migration config,
                          MigrationMetrics metrics, Clock clock) {
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
        this.orchestrator = orchestrator;
        this.deprecation = new ClusterDeprecation(registry, orchestrator, drain, clock);
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** What a cleanup of {@code src} would delete now (no guard but "not active"). */
    public CompletableFuture<List<CleanupTarget>> targets(String src) {
        return requireRegistered(src).thenCompose(rec -> snapshot()).thenCompose(snap -> plan(src, snap, copier))
                .thenApply(Plan::targets);
    }

    /** Cleanup targets on every registered cluster that is not active, from one read of the metadata. */
    public CompletableFuture<List<CleanupTarget>> targetsOnInactiveClusters() {
        return targetsOnInactiveClusters(copier);
    }

    /**
     * {@link #targetsOnInactiveClusters()}, reading the clusters' ledgers through {@code reads} (verify's, each read
     * bounded in time: a cluster whose metadata service does not answer must not hold verify's answer).
     */
    public CompletableFuture<List<CleanupTarget>> targetsOnInactiveClusters(LedgerCopier reads) {
        return snapshot().thenCompose(snap -> targetsOnInactiveClusters(snap, reads));
    }

    /**
     * {@link #targetsOnInactiveClusters(LedgerCopier)} on what the caller read already, in cleanup's order (the
     * routing, then the references, then the brokers): verify plans on its own picture of the world instead of
     * reading every managed ledger's metadata a second time.
     */
    public CompletableFuture<List<CleanupTarget>> targetsOnInactiveClusters(LedgerCopier reads, RegistryView view,
                                                                           Collection<LedgerReference> references,
                                                                           BrokerView brokers) {
        return targetsOnInactiveClusters(new Snapshot(view, referencedIds(references), brokers), reads);
    }

    private CompletableFuture<List<CleanupTarget>> targetsOnInactiveClusters(Snapshot snap, LedgerCopier reads) {
        return registry.listClusters().thenCompose(clusters -> {
            List<CompletableFuture<Plan>> each = new ArrayList<>();
            for (BookieClusterRecord c : clusters) {
                if (!c.name().equals(snap.view().activeCluster())) {
                    each.add(plan(c.name(), snap, reads));
                }
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<CleanupTarget> all = new ArrayList<>();
                each.forEach(f -> all.addAll(f.join().targets()));
                return all;
            });
        });
    }

    /**
     * @param notes why ledgers that look deletable are kept for now (held open by a broker, home copy missing)
     */
    private record Plan(List<CleanupTarget> targets, int kept, List<String> notes) {
    }

    /** What deciding reads from the metadata store: read once per plan, and again before every batch. */
    private record Snapshot(RegistryView view, Set<Long> referenced, BrokerView brokers) {
        boolean allBrokersApplied() {
            return !brokers.live().isEmpty() && brokers.relocationPending(view.relocationEpoch()).isEmpty();
        }
    }

    private CompletableFuture<Snapshot> snapshot() {
        return RegistryView.read(registry).thenCompose(this::snapshot);
    }

    private CompletableFuture<Snapshot> snapshot(RegistryView view) {
        return inventory.references().thenCombine(BrokerView.read(registry),
                (refs, brokers) -> new Snapshot(view, referencedIds(refs), brokers));
    }

    private static Set<Long> referencedIds(Collection<LedgerReference> refs) {
        Set<Long> referenced = new HashSet<>();
        for (LedgerReference r : refs) {
            referenced.add(r.ledgerId());
        }
        return referenced;
    }

    private CompletableFuture<Plan> plan(String src, Snapshot snap, LedgerCopier reads) {
        if (src.equals(snap.view().activeCluster())) {
            return CompletableFuture.failedFuture(activeCluster(src));
        }
        return reads.list(src).thenCompose(ids -> decide(src, ids, snap, reads));
    }

    /**
     * Which of {@code ids} (on {@code src}) may be deleted now, by {@code snap} and their relocations read one by one
     * right now.
     */
    private CompletableFuture<Plan> decide(String src, List<Long> ids, Snapshot listed, LedgerCopier reads) {
        // a referenced ledger that is home here by the snapshot is kept without asking further: a relocation made
        // since could only make it deletable, and a ledger kept is deleted by a later cleanup (on an old cluster
        // that is most of its ledgers, each of which would cost one or two reads of the relocation table)
        List<Long> open = new ArrayList<>();
        for (long id : ids) {
            if (!(listed.referenced().contains(id) && listed.view().home(id).map(src::equals).orElse(false))) {
                open.add(id);
            }
        }
        return registry.readRelocations(open).thenCompose(fresh -> decideWith(src, open, ids.size(), new Snapshot(
                listed.view().withFresh(fresh), listed.referenced(), listed.brokers()), reads));
    }

    private CompletableFuture<Plan> decideWith(String src, List<Long> ids, int listed, Snapshot snap,
                                               LedgerCopier reads) {
        List<String> notes = Collections.synchronizedList(new ArrayList<>());
        return Windows.map(ids, PARALLEL_DECISIONS, id -> decide(src, id, snap, notes, reads)).thenApply(decided -> {
            List<CleanupTarget> out = new ArrayList<>();
            decided.forEach(d -> d.ifPresent(out::add));
            List<String> kept = notes.size() > MAX_NOTES ? new ArrayList<>(notes.subList(0, MAX_NOTES)) : notes;
            return new Plan(out, listed - out.size(), List.copyOf(kept));
        });
    }

    private CompletableFuture<Optional<CleanupTarget>> decide(String src, long id, Snapshot snap, List<String> notes,
                                                              LedgerCopier reads) {
        RegistryView view = snap.view();
        Optional<String> home = view.home(id);
        if (home.isEmpty()) {
            return none(); // not in any range of ours
        }
        boolean referenced = snap.referenced().contains(id);
        if (referenced && home.get().equals(src)) {
            return none();
        }
        List<String> holders = snap.brokers().holdingOpen(src, id);
        if (!holders.isEmpty()) {
            notes.add("ledger " + id + " is open on broker(s) " + holders + " (a reader still uses it there)");
            return none();
        }
        return reads.facts(id, src).thenCompose(facts -> {
            if (facts.isEmpty()) {
                return none(); // gone meanwhile
            }
            LedgerCopier.LedgerFacts f = facts.get();
            if (!referenced) {
                // our brokers create ledgers on src only with ids of src's ranges: anything else there that is not
                // a copy or probe of ours belongs to someone else
                boolean ours = f.copyOf() != null || f.probe();
                boolean issuedHere = view.ranges().owner(id).map(src::equals).orElse(false);
                // no component: not a Pulsar ledger (and an immutable set throws when asked about null)
                String component = f.pulsarComponent();
                boolean deletable = f.closed() && (ours
                        || issuedHere && component != null && DELETABLE_COMPONENTS.contains(component));
                return deletable ? target(id, src, "UNREFERENCED") : none();
            }
            if (!snap.allBrokersApplied()) {
                return none(); // a broker that routes with an older relocation table may still read it here
            }
            if (!view.relocations().containsKey(id)) {
                // the home is the cluster that issued the id: only a copy of ours may go
                return f.copyOf() != null ? target(id, src, "STRAY_COPY") : none();
            }
            return reads.facts(id, home.get()).thenCompose(homeFacts -> {
                if (homeFacts.isPresent() && homeFacts.get().sameClosedContent(f)) {
                    return target(id, src, "RELOCATED");
                }
                notes.add("ledger " + id + ": its home copy on " + home.get() + " is "
                        + (homeFacts.isEmpty() ? "missing" : "different") + "; the one on " + src + " is kept");
                log.warn("bookie-cluster={} ledger={}: home copy on {} is {}; kept", src, id, home.get(),
                        homeFacts.isEmpty() ? "missing" : "different");
                return none();
            });
        });
    }

    private static CompletableFuture<Optional<CleanupTarget>> none() {
        return CompletableFuture.completedFuture(Optional.empty());
    }

    private static CompletableFuture<Optional<CleanupTarget>> target(long id, String src, String reason) {
        return CompletableFuture.completedFuture(Optional.of(new CleanupTarget(id, src, reason)));
    }

    /**
     * Deletes (or, with {@code dryRun}, lists) the targets on {@code src}, at most {@code maxDeletions}
     * (0: no limit), in batches each checked again against a fresh read of the metadata right before it is
     * deleted. When nothing the brokers reference is left on {@code src} afterwards, marks it DEPRECATED.
     */
    public CompletableFuture<CleanupResult> cleanup(String src, boolean dryRun, int maxDeletions, boolean force) {
        if (maxDeletions < 0) {
            return CompletableFuture.failedFuture(RegistryException.invalid("maxDeletions must be >= 0"));
        }
        // guards first: they are cheap, the inventory behind the plan is not
        return requireRegistered(src).thenCompose(rec -> RegistryView.read(registry)).thenCompose(view ->
                guards(src, force, view).thenCompose(epoch -> snapshot(view).thenCompose(snap -> plan(src, snap, copier))
                .thenCompose(plan -> {
            List<CleanupTarget> chosen = maxDeletions > 0 && plan.targets().size() > maxDeletions
                    ? plan.targets().subList(0, maxDeletions) : plan.targets();
            if (dryRun) {
                return CompletableFuture.completedFuture(new CleanupResult(true, src, List.copyOf(chosen), 0,
                        plan.kept(), List.of(), false, plan.notes()));
            }
            List<String> errors = Collections.synchronizedList(new ArrayList<>());
            List<String> notes = Collections.synchronizedList(new ArrayList<>(plan.notes()));
            List<CleanupTarget> deleted = Collections.synchronizedList(new ArrayList<>());
            return deleteInBatches(src, epoch, chosen, 0, deleted, errors, notes).thenCompose(v -> {
                int originals = (int) deleted.stream().filter(t -> t.reason().equals("RELOCATED")).count();
                metrics.deleted(src, deleted.size());
                log.info("bookie-cluster={} cleanup deleted {} ledger(s) ({} relocated originals), {} error(s), {} kept",
                        src, deleted.size(), originals, errors.size(), plan.kept() + chosen.size() - deleted.size());
                return deprecateIfDrained(src).thenApply(dep -> new CleanupResult(false, src,
                        List.copyOf(deleted), deleted.size(), plan.kept() + chosen.size() - deleted.size(),
                        List.copyOf(errors), dep, notes.size() > MAX_NOTES ? List.copyOf(notes.subList(0, MAX_NOTES))
                        : List.copyOf(notes)));
            });
        })));
    }

    /**
     * Each batch: a fresh read of the metadata, the batch decided again by it, the originals among it claimed on the
     * switch's migration state (which a rollback's intent checks in the same version-checked write: one of the two
     * goes first and the other sees it), then deleted. Stops when the switch changed, was rolled back meanwhile,
     * or {@code src} became active.
     */
    private CompletableFuture<Void> deleteInBatches(String src, long epoch, List<CleanupTarget> chosen, int from,
                                                    List<CleanupTarget> deleted, List<String> errors,
                                                    List<String> notes) {
        if (from >= chosen.size()) {
            return CompletableFuture.completedFuture(null);
        }
        List<CleanupTarget> batch = chosen.subList(from, Math.min(chosen.size(), from + BATCH));
        List<Long> ids = batch.stream().map(CleanupTarget::ledgerId).toList();
        boolean[] stop = {false};
        return snapshot().thenCompose(fresh -> {
            if (src.equals(fresh.view().activeCluster()) || fresh.view().switchEpoch() != epoch) {
                throw RegistryException.conflict("a switch was made while cleanup ran (now epoch "
                        + fresh.view().switchEpoch() + " on '" + fresh.view().activeCluster() + "'); cleanup of '"
                        + src + "' stopped, run it again");
            }
            return decide(src, ids, fresh, copier);
        }).thenCompose(recheck -> {
            int originals = (int) recheck.targets().stream().filter(t -> t.reason().equals("RELOCATED")).count();
            return (originals > 0 && epoch > 0 ? orchestrator.claimOriginalDeletions(epoch, originals)
                    : CompletableFuture.completedFuture((Void) null)).thenApply(v -> recheck);
        }).exceptionally(e -> {
            errors.add(String.valueOf(Failures.unwrap(e).getMessage()));
            log.warn("bookie-cluster={} cleanup stops: {}", src, Failures.unwrap(e).getMessage());
            stop[0] = true;
            return null;
        }).thenCompose(recheck -> {
            if (recheck == null) {
                return CompletableFuture.completedFuture(null);
            }
            notes.addAll(recheck.notes());
            Set<Long> still = new HashSet<>();
            recheck.targets().forEach(t -> still.add(t.ledgerId()));
            List<CompletableFuture<Void>> dels = new ArrayList<>();
            for (CleanupTarget t : recheck.targets()) {
                dels.add(copier.delete(t.ledgerId(), src).thenRun(() -> deleted.add(t)).exceptionally(e -> {
                    errors.add("ledger " + t.ledgerId() + ": " + e);
                    return null;
                }));
            }
            for (long id : ids) {
                if (!still.contains(id)) {
                    log.info("bookie-cluster={} ledger={}: no longer deletable when checked again; kept", src, id);
                }
            }
            return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new));
        }).thenCompose(v -> stop[0] ? CompletableFuture.completedFuture(null)
                : deleteInBatches(src, epoch, chosen, from + batch.size(), deleted, errors, notes));
    }

    /** The refusal of a cleanup of the active cluster (also given before an asynchronous cleanup is started). */
    public static RegistryException activeCluster(String src) {
        return RegistryException.conflict("bookie cluster '" + src + "' is the active cluster; nothing on it is "
                + "cleaned up");
    }

    /** Completes with the latest switch epoch when cleanup may run. */
    private CompletableFuture<Long> guards(String src, boolean force, RegistryView view) {
        if (src.equals(view.activeCluster())) {
            return CompletableFuture.failedFuture(activeCluster(src));
        }
        if (!view.directive().present()) {
            return CompletableFuture.completedFuture(0L);
        }
        long epoch = view.switchEpoch();
        long age = clock.millis() - view.directive().value().ts();
        if (!force && age < config.rollbackWindowHours() * 3_600_000L) {
            return CompletableFuture.failedFuture(RegistryException.conflict("the latest switch (epoch " + epoch
                    + ") is inside its rollback window of " + config.rollbackWindowHours() + " h; cleanup would make "
                    + "rollback impossible. Wait, or pass force"));
        }
        return BrokerView.read(registry).thenCompose(bs -> {
            if (!bs.cutoverComplete(epoch)) {
                throw RegistryException.conflict("the cutover of switch epoch " + epoch + " is still running on "
                        + bs.cutoverPending(epoch) + "; retry when status says it is complete");
            }
            return orchestrator.readState(epoch);
        }).thenApply(state -> {
            if (!state.present() || !state.value().phase().terminal()) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " has not finished ("
                        + (state.present() ? state.value().phase() : "not started") + "); retry when it has");
            }
            return epoch;
        });
    }

    /**
     * Marks {@code cluster} DEPRECATED when it owns nothing the broker cluster references and no live broker holds a
     * ledger handle on it; completes with whether it is DEPRECATED now (see {@link ClusterDeprecation}).
     */
    public CompletableFuture<Boolean> deprecateIfDrained(String cluster) {
        return deprecation.deprecate(cluster).thenApply(o -> o == ClusterDeprecation.Outcome.DEPRECATED);
    }

    /** What a request to deprecate {@code cluster} came to (close-client says why it stays as it was). */
    CompletableFuture<ClusterDeprecation.Outcome> deprecate(String cluster) {
        return deprecation.deprecate(cluster);
    }

    private CompletableFuture<BookieClusterRecord> requireRegistered(String name) {
        String problem = io.bcswitch.registry.ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        return registry.getCluster(name).thenApply(c -> c.orElseThrow(() ->
                RegistryException.notFound("bookie cluster '" + name + "' is not registered")));
    }
}
