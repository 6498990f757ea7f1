package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.migration.ListedCopies.Look;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies a rollback left on its target ({@code copies/<epoch>/}): taken off the list when they are promoted
 * again, and deleted only after every live broker routes without them, never while their cluster is active, and
 * each id checked again right before: a ledger that is now any relocation's home, or that the cluster itself
 * issued, is never deleted; what is left is judged as every listed copy is ({@link ListedCopies}).
 */
final class RolledBackCopies {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    private final RegistryStore registry;
    private final MigrationStates states;
    private final PromotionReversal reversal;
    private final ListedCopies listed;
    private final MigrationMetrics metrics;
    private final Clock clock;

    RolledBackCopies(RegistryStore registry, MigrationStates states, PromotionReversal reversal, ListedCopies listed,
                     MigrationMetrics metrics, Clock clock) {
        this.registry = registry;
        this.states = states;
        this.reversal = reversal;
        this.listed = listed;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Before ledgers are promoted to {@code target}, they are taken off the deletion lists of rolled-back
     * switches to the same cluster: a ledger is never at once home somewhere and scheduled for deletion there.
     */
    CompletableFuture<Void> cancelDeletions(String target, List<Long> ids) {
        return states.all().thenCompose(all -> {
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            Set<Long> wanted = new TreeSet<>(ids);
            for (MigrationState s : all) {
                if (s.phase() == Phase.ROLLED_BACK && s.target().equals(target) && s.deletionsPending()) {
                    chain = chain.thenCompose(v -> dropFromCopies(s.switchEpoch(), wanted).thenCompose(removed -> {
                        if (removed == 0) {
                            return CompletableFuture.completedFuture(null);
                        }
                        log.info("switch epoch={}: {} rolled-back copy/copies on bookie-cluster={} are promoted again; "
                                + "they are no longer deleted", s.switchEpoch(), removed, target);
                        return registry.update(states.path(s.switchEpoch()), MigrationState.class, cur -> cur.map(c ->
                                c.edit().deletions(Math.max(0, c.pendingDeletionCount() - removed),
                                        c.deleteAfterRelocationEpoch()).build())).thenApply(x -> null);
                    }));
                }
            }
            return chain;
        });
    }

    /** Takes {@code ids} off switch {@code epoch}'s list of copies to delete; completes with how many were on it. */
    CompletableFuture<Integer> dropFromCopies(long epoch, Collection<Long> ids) {
        if (ids.isEmpty()) {
            return CompletableFuture.completedFuture(0);
        }
        Set<Long> drop = new TreeSet<>(ids);
        return registry.readCopies(epoch).thenCompose(chunks -> {
            // each chunk that holds one of them loses exactly those (ids appended meanwhile stay)
            List<CompletableFuture<Integer>> writes = new ArrayList<>();
            chunks.forEach((n, list) -> {
                if (list.stream().anyMatch(drop::contains)) {
                    writes.add(registry.removeCopies(epoch, n, drop));
                }
            });
            return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
                    .thenApply(v -> writes.stream().mapToInt(CompletableFuture::join).sum());
        });
    }

    /** Works off the deletion lists of {@code all} the rolled-back switches, as far as each can go now. */
    CompletableFuture<Void> process(List<MigrationState> all) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (MigrationState s : all) {
            if (s.deletionsPending()) {
                // one rollback's list that cannot be worked off now (a cluster it flips back to does not answer)
                // holds up neither the others nor the lists that can go
                chain = chain.thenCompose(v -> deleteCopies(s).exceptionally(e -> {
                    log.warn("switch epoch={} rollback: deleting the copies on bookie-cluster={} waits for the next "
                            + "pass: {}", s.switchEpoch(), s.target(), Failures.unwrap(e).toString());
                    return null;
                }));
            }
        }
        return chain;
    }

    /** Copy lists of switches that can no longer be rolled back (a newer switch exists): not needed any more. */
    CompletableFuture<Void> dropCopyLists(List<Long> epochs) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (long e : epochs) {
            // each on its own: one that cannot be dropped now is dropped by a later pass, the others now
            chain = chain.thenCompose(v -> registry.dropCopies(e).exceptionally(x -> {
                log.warn("switch epoch={}: its copy list is dropped at a later pass: {}", e,
                        Failures.unwrap(x).toString());
                return null;
            }));
        }
        return chain;
    }

    /**
     * Deletes the copies a rollback left on the rolled-back target, once every live broker routes with the epoch
     * that flipped them back, never while the target is the active cluster (its own migration wants them), and
     * each id checked again right before: a ledger that is now home on the target, that the target itself issued,
     * or that a broker holds open there, is not deleted.
     */
    private CompletableFuture<Void> deleteCopies(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return registry.getCluster(target).thenCompose(rec -> {
            if (rec.isEmpty() || rec.get().status() == ClusterStatus.DEPRECATED) {
                // a cluster nobody uses any more (its clients are closed, or it is not even registered): the list
                // goes, the copies stay there and go with the cluster
                log.warn("switch epoch={} rollback: bookie-cluster={} is {}; its {} rolled-back copy/copies are left "
                        + "on it", epoch, target, rec.isEmpty() ? "no longer registered" : "DEPRECATED",
                        s.pendingDeletionCount());
                return registry.dropCopies(epoch).thenCompose(v -> registry.update(states.path(epoch),
                        MigrationState.class, cur -> cur.map(c -> c.edit().deletions(0, c.deleteAfterRelocationEpoch())
                                .build()))).thenApply(x -> null);
            }
            return deleteCopiesOn(s);
        });
    }

    private CompletableFuture<Void> deleteCopiesOn(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return RegistryView.read(registry).thenCompose(view -> {
            if (target.equals(view.activeCluster())) {
                return CompletableFuture.completedFuture(null);
            }
            return registry.readCopies(epoch).thenCompose(chunks -> {
                Map<Integer, List<Long>> work = new TreeMap<>(chunks);
                if (!s.pendingDeletions().isEmpty()) {
                    work.put(-1, s.pendingDeletions()); // an earlier version's list
                }
                Set<Long> listed = new TreeSet<>();
                work.values().forEach(listed::addAll);
                boolean straggling = view.relocations().values().stream().anyMatch(r -> r.switchEpoch() == epoch
                        && r.home().equals(target) && listed.contains(r.ledgerId()));
                if (straggling) {
                    return flipStragglers(s, view);
                }
                // not only the epoch recorded when the copies were flipped back: a flip whose bump (or its record)
                // was lost is covered by no epoch the brokers applied until it is announced (AnnouncedChange)
                return AnnouncedChange.settle(registry, clock.millis()).thenCompose(covering ->
                        BrokerView.read(registry).thenCompose(brokers -> {
                            List<String> behind = brokers.relocationPending(Math.max(s.deleteAfterRelocationEpoch(),
                                    Math.max(covering, view.relocationEpoch())));
                            if (brokers.live().isEmpty() || !behind.isEmpty()) {
                                return CompletableFuture.completedFuture(null); // a broker may still read the copies
                            }
                            return deleteChunks(s, view, brokers, work);
                        }));
            });
        });
    }

    /**
     * A promotion that raced with the rollback (its copy is on the deletion list, yet it is home on the target):
     * flipped back now and announced ({@link AnnouncedChange}); one that cannot go back leaves the list. Deletions
     * wait for the new epoch, and, should its bump be lost, for the one that announces the flip later.
     */
    private CompletableFuture<Void> flipStragglers(MigrationState s, RegistryView view) {
        long epoch = s.switchEpoch();
        return AnnouncedChange.make(registry, clock.millis(), () -> reversal.unpromote(epoch, s.target(), view)
                        .thenCompose(u -> dropFromCopies(epoch, u.stayed())), removed -> null)
                .thenCompose(a -> registry.update(states.path(epoch), MigrationState.class, cur -> cur.map(c ->
                        c.edit().deletions(Math.max(0, c.pendingDeletionCount() - a.result()), a.epoch()).build())))
                .thenApply(x -> null);
    }

    private CompletableFuture<Void> deleteChunks(MigrationState s, RegistryView listed, BrokerView brokers,
                                                 Map<Integer, List<Long>> chunks) {
        List<Long> all = new ArrayList<>();
        chunks.values().forEach(all::addAll);
        // each id's relocation read right now, one by one: the table's listing may lag behind a promotion
        return registry.readRelocations(all).thenCompose(fresh -> deleteChunksWith(s, listed.withFresh(fresh), brokers,
                chunks));
    }

    private CompletableFuture<Void> deleteChunksWith(MigrationState s, RegistryView view, BrokerView brokers,
                                                     Map<Integer, List<Long>> chunks) {
        String target = s.target();
        RangeTable ranges = view.ranges();
        Map<Long, CompletableFuture<Look>> looks = new TreeMap<>();
        for (List<Long> ids : chunks.values()) {
            for (long id : ids) {
                looks.computeIfAbsent(id, x -> {
                    if (view.home(id).map(target::equals).orElse(false) || ranges.owner(id).map(target::equals)
                            .orElse(false)) {
                        // home there (or issued there): not a copy to delete any more
                        return CompletableFuture.completedFuture(Look.NOT_ONE);
                    }
                    if (!brokers.holdingOpen(target, id).isEmpty()) {
                        return CompletableFuture.completedFuture(Look.LATER);
                    }
                    return listed.look(id, target, view.home(id).orElse(null), "rolled-back copy");
                });
            }
        }
        return listed.workOff(s.switchEpoch(), target, chunks, looks, "rollback").thenCompose(w -> {
            metrics.deleted(target, w.deleted());
            log.info("switch epoch={} rollback: deleted {} copy/copies from bookie-cluster={}, {} left",
                    s.switchEpoch(), w.deleted(), target, w.remaining());
            return registry.update(states.path(s.switchEpoch()), MigrationState.class, cur -> cur.map(c ->
                    c.edit().deletions(w.remaining(), c.deleteAfterRelocationEpoch()).updatedAt(clock.millis())
                            .build())).thenApply(x -> null);
        });
    }
}
