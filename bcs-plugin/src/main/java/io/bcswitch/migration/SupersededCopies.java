package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.migration.ListedCopies.Look;
import io.bcswitch.migration.ListedCopies.Settled;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies a migration made on its target before a newer switch ended it (SUPERSEDED) and that it never promoted:
 * nothing routes to them, no later migration lists them, and cleanup sweeps only a cluster an operator names, so
 * they are deleted here. Their list ({@code copies/<epoch>/}) is kept when the migration ends and worked off under the
 * lock, after the superseded run has let go of it: never while the target is the active cluster (its own migration
 * may promote them), only once every live broker routes with the current relocation epoch, and each id checked again
 * right before. A copy that is a ledger's home there, that its cluster issued, or that a relocation goes back to on
 * a rollback (its previous home) is not one to delete: it leaves the list and stays. A copy whose home holds the same
 * closed ledger is deleted; one whose home does not (Pulsar deleted the ledger since, or the home lost it) only when a
 * complete inventory says nothing references it: else (or when the inventory cannot be read completely) it may be the
 * last one, and it stays for cleanup to decide. A
 * target that is no longer registered, or whose clients are closed (DEPRECATED), keeps its copies and the list goes.
 */
final class SupersededCopies {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    private final RegistryStore registry;
    private final ListedCopies listed;
    private final MigrationMetrics metrics;

    SupersededCopies(RegistryStore registry, ListedCopies listed, MigrationMetrics metrics) {
        this.registry = registry;
        this.listed = listed;
        this.metrics = metrics;
    }

    /** Whether switch {@code epoch}'s copy list is one this class works off. */
    static boolean keepsList(List<MigrationState> all, long epoch) {
        return all.stream().anyMatch(s -> s.switchEpoch() == epoch && s.phase() == Phase.SUPERSEDED);
    }

    /**
     * Works off the copy lists ({@code listed}: the epochs that have one) of the superseded migrations among
     * {@code all}, as far as each can go now; one that cannot (its cluster does not answer) holds up none of the
     * others. Under the lock. Never fails.
     */
    CompletableFuture<Void> process(List<MigrationState> all, List<Long> listed) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (MigrationState s : all) {
            if (s.phase() == Phase.SUPERSEDED && listed.contains(s.switchEpoch())) {
                chain = chain.thenCompose(v -> workOff(s).exceptionally(e -> {
                    log.warn("switch epoch={} superseded: deleting its copies on bookie-cluster={} waits for the next "
                            + "pass: {}", s.switchEpoch(), s.target(), Failures.unwrap(e).toString());
                    return null;
                }));
            }
        }
        return chain;
    }

    private CompletableFuture<Void> workOff(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return registry.getCluster(target).thenCompose(rec -> {
            if (rec.isEmpty() || rec.get().status() == ClusterStatus.DEPRECATED) {
                log.warn("switch epoch={} superseded: bookie-cluster={} is {}; the copies its migration made are left "
                        + "on it", epoch, target, rec.isEmpty() ? "no longer registered" : "DEPRECATED");
                return registry.dropCopies(epoch);
            }
            return RegistryView.read(registry).thenCompose(view -> target.equals(view.activeCluster())
                    ? CompletableFuture.completedFuture(null)
                    : BrokerView.read(registry).thenCompose(brokers -> {
                        if (brokers.live().isEmpty() || !brokers.relocationPending(view.relocationEpoch()).isEmpty()) {
                            return CompletableFuture.<Void>completedFuture(null); // a broker may route by an older table
                        }
                        return registry.readCopies(epoch).thenCompose(chunks -> {
                            List<Long> ids = new ArrayList<>();
                            chunks.values().forEach(ids::addAll);
                            // each id's relocation read right now: the table's listing may lag a promotion
                            return registry.readRelocations(ids).thenCompose(fresh -> deleteChunks(s,
                                    view.withFresh(fresh), brokers, chunks));
                        });
                    }));
        });
    }

    private CompletableFuture<Void> deleteChunks(MigrationState s, RegistryView view, BrokerView brokers,
                                                 Map<Integer, List<Long>> chunks) {
        long epoch = s.switchEpoch();
        String target = s.target();
        Map<Long, CompletableFuture<Look>> looks = new TreeMap<>();
        chunks.values().forEach(ids -> ids.forEach(id -> looks.computeIfAbsent(id, x -> look(view, brokers, id,
                target))));
        return listed.workOff(epoch, target, chunks, looks, "superseded").thenCompose(w -> {
            metrics.deleted(target, w.deleted());
            if (w.deleted() > 0 || w.remaining() == 0) { // (nothing said of a list that only waits, every pass)
                log.info("switch epoch={} superseded: deleted {} copy/copies its migration made on bookie-cluster={} "
                        + "and never promoted, {} left", epoch, w.deleted(), target, w.remaining());
            }
            return w.remaining() == 0 ? registry.dropCopies(epoch) : CompletableFuture.completedFuture(null);
        });
    }

    private CompletableFuture<Look> look(RegistryView view, BrokerView brokers, long id, String target) {
        if (notACopyToDelete(view, id, target)) {
            return CompletableFuture.completedFuture(Look.NOT_ONE);
        }
        if (!brokers.holdingOpen(target, id).isEmpty()) {
            return CompletableFuture.completedFuture(Look.LATER); // a broker still reads it there
        }
        return listed.look(id, target, view.home(id).orElse(null), "copy a superseded migration made");
    }

    /**
     * Whether the ledger {@code id} on {@code target} is no copy to delete: its home there, its cluster's own, or the
     * copy its relocation goes back to if that is rolled back.
     */
    static boolean notACopyToDelete(RegistryView view, long id, String target) {
        Relocation r = view.relocations().get(id);
        return view.home(id).map(target::equals).orElse(false)
                || view.ranges().owner(id).map(target::equals).orElse(false)
                || r != null && target.equals(r.previousHome());
    }
}
