package io.bcswitch.migration;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import java.time.Clock;
import java.util.ArrayList;
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
 * <p>A ledger on the cluster is a target only when it is safe to delete: its home is elsewhere
 * (relocated, and every live broker routes with the relocation epoch that moved it, or a stray copy),
 * or nothing in the broker metadata names it and Pulsar created it as a managed-ledger, schema or
 * compacted-topic ledger. Ledgers of unknown origin are never deleted. Refused (409) while the
 * cluster is active, while a cutover or a migration is in progress, and, unless forced, inside the
 * rollback window of the latest switch.
 */
public final class CleanupService {
    private static final Logger log = LoggerFactory.getLogger(CleanupService.class);
    private static final Set<String> DELETABLE_COMPONENTS = Set.of("managed-ledger", "schema", "compacted-ledger");

    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final MigrationOrchestrator orchestrator;
    private final DrainReports drain;
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
        this.drain = drain;
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** What a cleanup of {@code src} would delete now (no guard but "not active"). */
    public CompletableFuture<List<CleanupTarget>> targets(String src) {
        return requireRegistered(src).thenCompose(rec -> snapshot()).thenCompose(snap -> plan(src, snap))
                .thenApply(Plan::targets);
    }

    /** Cleanup targets on every registered cluster that is not active, from one read of the metadata. */
    public CompletableFuture<List<CleanupTarget>> targetsOnInactiveClusters() {
        return snapshot().thenCompose(snap -> registry.listClusters().thenCompose(clusters -> {
            List<CompletableFuture<Plan>> each = new ArrayList<>();
            for (BookieClusterRecord c : clusters) {
                if (!c.name().equals(snap.view().activeCluster())) {
                    each.add(plan(c.name(), snap));
                }
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<CleanupTarget> all = new ArrayList<>();
                each.forEach(f -> all.addAll(f.join().targets()));
                return all;
            });
        }));
    }

    private record Plan(List<CleanupTarget> targets, int kept) {
    }

    /** What planning reads from the metadata store: read once per request. */
    private record Snapshot(RegistryView view, Set<Long> referenced, boolean allBrokersApplied) {
    }

    private CompletableFuture<Snapshot> snapshot() {
        return RegistryView.read(registry).thenCompose(this::snapshot);
    }

    private CompletableFuture<Snapshot> snapshot(RegistryView view) {
        return inventory.references().thenCombine(
                registry.listRelocationApplied(), (refs, applied) -> {
                    Set<Long> referenced = new HashSet<>();
                    for (LedgerReference r : refs) {
                        referenced.add(r.ledgerId());
                    }
                    boolean allApplied = !applied.isEmpty()
                            && applied.values().stream().allMatch(e -> e >= view.relocationEpoch());
                    return new Snapshot(view, referenced, allApplied);
                });
    }

    private CompletableFuture<Plan> plan(String src, Snapshot snap) {
        RegistryView view = snap.view();
        if (src.equals(view.activeCluster())) {
            return CompletableFuture.failedFuture(activeCluster(src));
        }
        Set<Long> referenced = snap.referenced();
        boolean allApplied = snap.allBrokersApplied();
        return copier.list(src).thenCompose(ids -> {
            List<CompletableFuture<Optional<CleanupTarget>>> each = new ArrayList<>();
            for (long id : ids) {
                Optional<String> home = view.home(id);
                if (home.isEmpty()) {
                    each.add(CompletableFuture.completedFuture(Optional.empty())); // not ours
                } else if (!home.get().equals(src)) {
                    boolean relocated = view.relocations().containsKey(id);
                    each.add(CompletableFuture.completedFuture(!relocated || allApplied
                            ? Optional.of(new CleanupTarget(id, src, relocated ? "RELOCATED" : "STRAY_COPY"))
                            : Optional.empty()));
                } else if (!referenced.contains(id)) {
                    each.add(copier.facts(id, src).thenApply(f -> f.isPresent()
                            && DELETABLE_COMPONENTS.contains(f.get().pulsarComponent())
                            ? Optional.of(new CleanupTarget(id, src, "UNREFERENCED")) : Optional.empty()));
                } else {
                    each.add(CompletableFuture.completedFuture(Optional.empty()));
                }
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<CleanupTarget> out = new ArrayList<>();
                for (var f : each) {
                    f.join().ifPresent(out::add);
                }
                return new Plan(out, ids.size() - out.size());
            });
        });
    }

    /**
     * Deletes (or, with {@code dryRun}, lists) the targets on {@code src}, at most {@code maxDeletions}
     * (0: no limit). When nothing the brokers reference is left on {@code src} afterwards, marks it
     * DEPRECATED.
     */
    public CompletableFuture<CleanupResult> cleanup(String src, boolean dryRun, int maxDeletions, boolean force) {
        if (maxDeletions < 0) {
            return CompletableFuture.failedFuture(RegistryException.invalid("maxDeletions must be >= 0"));
        }
        // guards first: they are cheap, the inventory behind the plan is not
        return requireRegistered(src).thenCompose(rec -> RegistryView.read(registry)).thenCompose(view ->
                guards(src, force, view).thenCompose(epoch -> snapshot(view).thenCompose(snap -> plan(src, snap))
                .thenCompose(plan -> {
            List<CleanupTarget> chosen = maxDeletions > 0 && plan.targets().size() > maxDeletions
                    ? plan.targets().subList(0, maxDeletions) : plan.targets();
            if (dryRun) {
                return CompletableFuture.completedFuture(new CleanupResult(true, src, List.copyOf(chosen), 0,
                        plan.kept(), List.of(), false));
            }
            List<CompletableFuture<String>> dels = new ArrayList<>();
            for (CleanupTarget t : chosen) {
                dels.add(copier.delete(t.ledgerId(), src).thenApply(v -> (String) null)
                        .exceptionally(e -> "ledger " + t.ledgerId() + ": " + e));
            }
            return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                List<String> errors = dels.stream().map(CompletableFuture::join).filter(x -> x != null).toList();
                int deleted = chosen.size() - errors.size();
                int originals = (int) chosen.stream().filter(t -> t.reason().equals("RELOCATED")).count();
                metrics.deleted(src, deleted);
                log.info("bookie-cluster={} cleanup deleted {} ledger(s) ({} relocated originals), {} error(s), {} kept",
                        src, deleted, originals, errors.size(), plan.kept());
                CompletableFuture<Void> mark = originals > 0 && epoch > 0
                        ? orchestrator.originalsDeleted(epoch, originals) : CompletableFuture.completedFuture(null);
                return mark.thenCompose(x -> deprecateIfDrained(src)).thenApply(dep -> new CleanupResult(false, src,
                        List.copyOf(chosen), deleted, plan.kept(), errors, dep));
            });
        })));
    }

    private static RegistryException activeCluster(String src) {
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
        return registry.listBrokerProgress().thenCompose(bs -> {
            if (bs.isEmpty() || !bs.stream().allMatch(b -> b.appliedEpoch() == epoch && b.done())) {
                throw RegistryException.conflict("the cutover of switch epoch " + epoch + " is still running; "
                        + "retry when status says it is complete");
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

    /** Marks {@code cluster} DEPRECATED when it owns nothing the broker cluster references. */
    public CompletableFuture<Boolean> deprecateIfDrained(String cluster) {
        return drain.report(cluster).thenCompose(report -> {
            if (!report.empty() || report.active()) {
                return CompletableFuture.completedFuture(false);
            }
            return registry.update(registry.paths().cluster(cluster), BookieClusterRecord.class, cur ->
                    cur.filter(c -> c.status() != ClusterStatus.DEPRECATED)
                            .map(c -> c.withStatus(ClusterStatus.DEPRECATED)))
                    // no relocation changed; brokers react to the bump by closing the cluster's clients
                    .thenCompose(rec -> registry.bumpRelocationEpoch(clock.millis(), List.of()))
                    .thenApply(x -> {
                        log.info("bookie-cluster={} holds nothing the brokers reference: DEPRECATED; its clients "
                                + "are closed", cluster);
                        return true;
                    });
        });
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
