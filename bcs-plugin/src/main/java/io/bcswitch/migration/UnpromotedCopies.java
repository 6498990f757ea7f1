package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.migration.ListedCopies.Look;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies a migration made on its target and never promoted, once it has ended: nothing routes to them and, left
 * there, nothing would ever delete them (cleanup sweeps only a cluster an operator names, and the target is usually
 * the active one). Two kinds of ended migrations keep such copies on their list ({@code copies/<epoch>/}):
 * <ul>
 * <li>one a newer switch ended (SUPERSEDED), or one that finished (DONE, DONE_WITH_FAILURES) before a newer switch
 * was made: nothing can roll it back any more, so its whole list is worked off and then goes. Never while the target
 * is the active cluster (its own migration may promote the copies);</li>
 * <li>the latest switch's, finished: its list is what a rollback flips back, so the copies that became home stay
 * listed; the others (of ledgers Pulsar deleted while they were moved, whose home changed meanwhile, that could not
 * be promoted) are looked at once more and leave it. The end of PROMOTE looks for such copies once; this is the look
 * that does not depend on that one having seen everything. Looked at until none is left, then not again by this
 * broker unless the migration runs again.</li>
 * </ul>
 * Only once every live broker routes with the current relocation epoch, and each id checked again right before. A
 * copy that is a ledger's home there, that its cluster issued, or that a relocation goes back to on a rollback (its
 * previous home) is not one to delete: it stays (and leaves a list that goes). A copy whose home holds the same closed
 * ledger is deleted; one whose home does not (Pulsar deleted the ledger since, or the home lost it) only when a
 * complete inventory says nothing references it: else (or when the inventory cannot be read completely) it may be the
 * last one, and it stays for cleanup to decide. A target that is no longer registered, or whose clients are closed
 * (DEPRECATED), keeps its copies and the list of a migration nobody can roll back goes.
 */
final class UnpromotedCopies {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    private final RegistryStore registry;
    private final ListedCopies listed;
    private final MigrationMetrics metrics;
    /** The latest finished migrations (epoch, run, end) whose list has no copy left to decide about. */
    private final Set<Finished> settled = ConcurrentHashMap.newKeySet();

    /** One end of one migration: a run of it again (a retry) ends anew. */
    private record Finished(long epoch, long runToken, long finishedAt) {
        static Finished of(MigrationState s) {
            return new Finished(s.switchEpoch(), s.runToken(), s.finishedAt());
        }
    }

    UnpromotedCopies(RegistryStore registry, ListedCopies listed, MigrationMetrics metrics) {
        this.registry = registry;
        this.listed = listed;
        this.metrics = metrics;
    }

    /**
     * Whether switch {@code epoch}'s copy list is one this class works off whole and then drops: a superseded
     * migration's, or a finished one's that a newer switch made impossible to roll back. Kept also while its target
     * is the active cluster again, but not worked on then ({@link #workable}): that cluster's own migration may find
     * those copies present and promote them, and it may also be rolled back or superseded before it has.
     */
    static boolean keepsList(List<MigrationState> all, long epoch) {
        long latest = latest(all);
        return all.stream().anyMatch(s -> s.switchEpoch() == epoch && (s.phase() == Phase.SUPERSEDED
                || finished(s) && epoch < latest));
    }

    /** A kept list that a pass works on now: its target is not the {@code active} cluster. */
    private static boolean workable(List<MigrationState> all, MigrationState s, String active) {
        return keepsList(all, s.switchEpoch()) && !s.target().equals(active);
    }

    /**
     * Whether a pass has anything to do here, given the epochs that have a copy list ({@code listed}) and the
     * {@code active} cluster: a kept list whose target is active waits without the lock being taken every pass.
     */
    CompletableFuture<Boolean> hasWork(List<MigrationState> all, List<Long> listed, String active) {
        if (all.stream().anyMatch(s -> listed.contains(s.switchEpoch()) && workable(all, s, active))) {
            return CompletableFuture.completedFuture(true);
        }
        Optional<MigrationState> latest = latestToLookAt(all, listed);
        if (latest.isEmpty()) {
            return CompletableFuture.completedFuture(false);
        }
        // read without the lock: a list holding only homes (every switch's usual end) is settled here, and no
        // pass takes the lock (a metadata write) for it
        MigrationState s = latest.get();
        return registry.readCopies(s.switchEpoch()).thenCompose(chunks -> {
            List<Long> ids = new ArrayList<>();
            chunks.values().forEach(ids::addAll);
            return RegistryView.read(registry).thenCombine(registry.readRelocations(ids), RegistryView::withFresh)
                    .thenApply(now -> {
                        boolean any = ids.stream().anyMatch(id -> !homeOrOwn(now, id, s.target()));
                        if (!any) {
                            settled.add(Finished.of(s));
                        }
                        return any;
                    });
        }).exceptionally(e -> true); // looked at under the lock, which says what failed
    }

    private static long latest(List<MigrationState> all) {
        return all.stream().mapToLong(MigrationState::switchEpoch).max().orElse(0);
    }

    private static boolean finished(MigrationState s) {
        return s.phase() == Phase.DONE || s.phase() == Phase.DONE_WITH_FAILURES;
    }

    /** The latest switch's migration, when it has finished, has a list and this broker has not settled it. */
    private Optional<MigrationState> latestToLookAt(List<MigrationState> all, List<Long> listed) {
        long latest = latest(all);
        return all.stream().filter(s -> s.switchEpoch() == latest && finished(s) && listed.contains(latest)
                && !settled.contains(Finished.of(s))).findFirst();
    }

    /**
     * Works off the copy lists ({@code listed}: the epochs that have one) of the ended migrations among {@code all},
     * as far as each can go now; one that cannot (its cluster does not answer) holds up none of the others. Under
     * the lock. Never fails.
     */
    CompletableFuture<Void> process(List<MigrationState> all, List<Long> listed, String active) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (MigrationState s : all) {
            if (listed.contains(s.switchEpoch()) && workable(all, s, active)) {
                chain = chain.thenCompose(v -> workOff(s).exceptionally(e -> {
                    log.warn("switch epoch={} {}: deleting its copies on bookie-cluster={} waits for the next pass: {}",
                            s.switchEpoch(), what(s), s.target(), Failures.unwrap(e).toString());
                    return null;
                }));
            }
        }
        Optional<MigrationState> latest = latestToLookAt(all, listed);
        if (latest.isPresent()) {
            MigrationState s = latest.get();
            chain = chain.thenCompose(v -> lookAtUnpromoted(s).exceptionally(e -> {
                log.warn("switch epoch={} {}: the copies it made on bookie-cluster={} and did not promote are looked at "
                        + "at the next pass: {}", s.switchEpoch(), what(s), s.target(), Failures.unwrap(e).toString());
                return null;
            }));
        }
        return chain;
    }

    /** How log lines name an ended migration: "superseded", "finished", "finished with failures". */
    private static String what(MigrationState s) {
        return switch (s.phase()) {
            case SUPERSEDED -> "superseded";
            case DONE_WITH_FAILURES -> "finished with failures";
            default -> "finished";
        };
    }

    /**
     * The latest switch's finished migration: its copies that are not home on the target leave its list, deleted or
     * kept as {@link ListedCopies} decides; the ones that are home stay on it for a rollback.
     */
    private CompletableFuture<Void> lookAtUnpromoted(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return RegistryView.read(registry).thenCompose(view -> BrokerView.read(registry).thenCompose(brokers -> {
            if (brokers.live().isEmpty() || !brokers.relocationPending(view.relocationEpoch()).isEmpty()) {
                return CompletableFuture.<Void>completedFuture(null); // a broker may route by an older table
            }
            return registry.readCopies(epoch).thenCompose(chunks -> {
                List<Long> ids = new ArrayList<>();
                chunks.values().forEach(ids::addAll);
                return registry.readRelocations(ids).thenCompose(fresh -> {
                    RegistryView now = view.withFresh(fresh);
                    Map<Integer, List<Long>> unpromoted = new TreeMap<>();
                    chunks.forEach((chunk, in) -> {
                        List<Long> rest = in.stream().filter(id -> !homeOrOwn(now, id, target)).toList();
                        if (!rest.isEmpty()) {
                            unpromoted.put(chunk, rest);
                        }
                    });
                    if (unpromoted.isEmpty()) {
                        settled.add(Finished.of(s));
                        return CompletableFuture.<Void>completedFuture(null);
                    }
                    List<Long> named = unpromoted.values().stream().flatMap(List::stream).sorted().toList();
                    log.info("switch epoch={} migration {}: ledger(s) {} it copied to bookie-cluster={} are not home "
                            + "there; looking at whether each copy is still there and needed", epoch, what(s), named,
                            target);
                    Map<Long, CompletableFuture<Look>> looks = new TreeMap<>();
                    named.forEach(id -> looks.put(id, !brokers.holdingOpen(target, id).isEmpty()
                            ? CompletableFuture.completedFuture(Look.LATER) // a broker still reads it there
                            : listed.look(id, target, now.home(id).orElse(null),
                                    "copy a finished migration made and did not promote")));
                    return listed.workOff(epoch, target, unpromoted, looks, "migration " + what(s),
                            id -> stillUnpromoted(s, id)).thenAccept(w -> {
                        metrics.deleted(target, w.deleted());
                        if (w.deleted() > 0) {
                            log.warn("switch epoch={} migration {}: deleted {} copy/copies it made on bookie-cluster={}"
                                    + " and did not promote, found after it ended", epoch, what(s), w.deleted(),
                                    target);
                        }
                        if (w.remaining() == 0) {
                            settled.add(Finished.of(s));
                        }
                    });
                });
            });
        }));
    }

    /**
     * The ledger {@code id} on the latest switch's target is its home there or the target's own: it stays, and stays
     * listed (a rollback flips the homes back by this list). Unlike {@link #notACopyToDelete}, a relocation that goes
     * back to the target on a rollback does not keep it: such a relocation is an older switch's (this switch's
     * promotions to its target are homes there), and only the latest switch can be rolled back.
     */
    private static boolean homeOrOwn(RegistryView view, long id, String target) {
        return view.home(id).map(target::equals).orElse(false)
                || view.ranges().owner(id).map(target::equals).orElse(false);
    }

    /**
     * Right before a copy of {@code s}'s list is deleted from the active cluster: the migration is still the one that
     * ended so (a retry, which takes the lock, ends it anew with another run token; a broker whose lock expired may be
     * the one asking) and the ledger is still not home there. Read from the store now.
     */
    private CompletableFuture<Boolean> stillUnpromoted(MigrationState s, long id) {
        return registry.read(registry.paths().orchestrator(s.switchEpoch()), MigrationState.class).thenCompose(now ->
                !now.present() || now.value().phase() != s.phase() || now.value().runToken() != s.runToken()
                        || now.value().finishedAt() != s.finishedAt() ? CompletableFuture.completedFuture(false)
                        : registry.readRelocations(List.of(id)).thenApply(r -> r.getOrDefault(id, Optional.empty())
                                .map(x -> !x.home().equals(s.target())).orElse(true)));
    }

    private CompletableFuture<Void> workOff(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return registry.getCluster(target).thenCompose(rec -> {
            if (rec.isEmpty() || rec.get().status() == ClusterStatus.DEPRECATED) {
                log.warn("switch epoch={} {}: bookie-cluster={} is {}; the copies its migration made are left on it",
                        epoch, what(s), target, rec.isEmpty() ? "no longer registered" : "DEPRECATED");
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
                target, "copy a " + what(s) + " migration made"))));
        return listed.workOff(epoch, target, chunks, looks, what(s)).thenCompose(w -> {
            metrics.deleted(target, w.deleted());
            // nothing said of a list that only waits (every pass), nor of a finished migration's that held only
            // copies that became home (the usual end of every switch's list)
            if (w.deleted() > 0 || w.remaining() == 0 && s.phase() == Phase.SUPERSEDED) {
                log.info("switch epoch={} {}: deleted {} copy/copies its migration made on bookie-cluster={} "
                        + "and never promoted, {} left", epoch, what(s), w.deleted(), target, w.remaining());
            }
            return w.remaining() == 0 ? registry.dropCopies(epoch) : CompletableFuture.completedFuture(null);
        });
    }

    private CompletableFuture<Look> look(RegistryView view, BrokerView brokers, long id, String target, String what) {
        if (notACopyToDelete(view, id, target)) {
            return CompletableFuture.completedFuture(Look.NOT_ONE);
        }
        if (!brokers.holdingOpen(target, id).isEmpty()) {
            return CompletableFuture.completedFuture(Look.LATER); // a broker still reads it there
        }
        return listed.look(id, target, view.home(id).orElse(null), what);
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
