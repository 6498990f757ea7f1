package io.bcswitch.migration;

import io.bcswitch.migration.MigrationPlan.Item;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.Relocation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PROMOTE: makes the target the home of the copied ledgers, batch by batch, each batch announced to every broker
 * before the next; then removes copies of ledgers Pulsar deleted meanwhile, checks that every planned ledger is
 * home or has an issue, and ends the migration DONE or DONE_WITH_FAILURES.
 */
final class PromotePhase {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;
    private final ProgressStore progress;
    private final DeletedLedgerCopies deletedCopies;
    private final HomeVerifier homes;
    private final RunWatch watch;
    /**
     * The checks' reads of ledger metadata in flight at once: a batch of 1,000 asks 2,000, on metadata stores that may
     * also serve the bookies and the brokers (ZooKeeper stops reading from its clients past 1,000 outstanding
     * requests by default).
     */
    private final io.bcswitch.concurrent.InFlightLimit checkReads = new io.bcswitch.concurrent.InFlightLimit(
            CHECK_READS_IN_FLIGHT);
    static final int CHECK_READS_IN_FLIGHT = 256;

    PromotePhase(MigrationOrchestrator o, long epoch, String target, ProgressStore progress,
                 DeletedLedgerCopies deletedCopies, HomeVerifier homes, RunWatch watch) {
        this.o = o;
        this.watch = watch;
        this.epoch = epoch;
        this.target = target;
        this.progress = progress;
        this.deletedCopies = deletedCopies;
        this.homes = homes;
    }

    CompletableFuture<Void> promote(MigrationTally tally) {
        List<Long> ids;
        synchronized (tally.toPromote) {
            ids = new ArrayList<>(tally.toPromote);
        }
        Collections.sort(ids);
        return promoteBatches(ids, 0, tally, check(batchAt(ids, 0), tally)).thenCompose(v -> o.closed()
                ? progress.persist(tally, s -> s)
                // a run that stopped (superseded, rolled back, taken over) concludes nothing: what it did is recorded
                : o.stillMine(epoch, tally.token).thenCompose(mine -> !mine ? progress.persist(tally, s -> s)
                : deletedCopies.discard(tally.token, Set.copyOf(tally.gone)).thenCompose(x -> homes.verify(tally))
                        .thenCompose(x -> finish(tally))))
                .thenAccept(s -> log.info("switch epoch={} migration to bookie-cluster={} {}: {} promoted, {} "
                        + "failed, {} skipped, {} collisions, {} not promoted", epoch, target, s.phase(), s.promoted(),
                        s.failed(), s.skipped(), s.collisions(), s.notPromoted()));
    }

    /** Ends the migration: DONE when nothing has an issue, else DONE_WITH_FAILURES (unless it left PROMOTE). */
    private CompletableFuture<MigrationState> finish(MigrationTally tally) {
        return progress.persist(tally, s -> {
            if (s.phase() != Phase.PROMOTE) {
                return s;
            }
            boolean clean = tally.allIssues().isEmpty();
            return s.moveTo(clean ? Phase.DONE : Phase.DONE_WITH_FAILURES, o.now());
        });
    }

    /** The batch of {@code ids} that starts at {@code from} (empty past the end). */
    private List<Long> batchAt(List<Long> ids, int from) {
        return ids.subList(Math.min(ids.size(), from), Math.min(ids.size(), from + o.config().promoteBatchSize()));
    }

    /** @param checks the checks of the batch starting at {@code from}, started before its turn */
    private CompletableFuture<Void> promoteBatches(List<Long> ids, int from, MigrationTally tally, Checks checks) {
        List<Long> batch = checks.batch();
        if (batch.isEmpty() || o.closed()) {
            return CompletableFuture.completedFuture(null);
        }
        int next = from + batch.size();
        // stop if the switch was rolled back or superseded, or another broker took over, while we copied
        return o.stillMine(epoch, tally.token).thenCompose(mine -> !mine ? CompletableFuture.completedFuture(null)
                : o.cancelDeletions(target, batch).thenCompose(v -> checks.done()).thenCompose(v -> {
                    // the next batch's checks are reads only: they run while this batch is written and every broker
                    // applies it (usually tens of ms, up to the 30 s a lagging broker may hold a batch). A ledger
                    // Pulsar deletes between its check and its promotion is promoted as before in that window: the
                    // end of PROMOTE deletes such a copy once nothing references it
                    // (DeletedLedgerCopies#discardPromoted), else a later run
                    Checks following = check(batchAt(ids, next), tally);
                    return promoteBatch(batch, tally, checks).thenCompose(re -> progress.persist(tally, s -> s)
                            .thenCompose(s -> !o.goOn(s, tally.token) ? CompletableFuture.completedFuture(null)
                                    : o.awaitApplied(epoch, re, watch::stopped).thenCompose(x ->
                                            promoteBatches(ids, next, tally, following))));
                }));
    }

    /**
     * What a batch's promotion depends on, per ledger: its copy on the target is there and closed; its original was
     * not deleted by Pulsar since it was copied.
     */
    private record Checks(List<Long> batch, Map<Long, CompletableFuture<Boolean>> present,
                          Map<Long, CompletableFuture<Boolean>> deleted) {
        CompletableFuture<Void> done() {
            List<CompletableFuture<Boolean>> all = new ArrayList<>(present.values());
            all.addAll(deleted.values());
            return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
        }
    }

    /** Starts the reads of {@link Checks} for {@code batch}; none of them fails (an error counts as "no"). */
    private Checks check(List<Long> batch, MigrationTally tally) {
        Map<Long, CompletableFuture<Boolean>> present = new LinkedHashMap<>();
        Map<Long, CompletableFuture<Boolean>> deleted = new LinkedHashMap<>();
        for (long id : batch) {
            // deletions run on this same driver, but the copy must still be there when it becomes the home
            present.put(id, checkReads.submit(() -> o.copier().facts(id, target))
                    .thenApply(f -> f.isPresent() && f.get().closed()).exceptionally(e -> false));
            // and the ledger must not have been deleted by Pulsar since it was copied (it deletes a ledger where it
            // is home): its copy would become the home of a ledger nothing has. Only a definite "no such ledger"
            // counts: a source that does not answer (its bookies dead) is what the copy is for
            Item item = tally.byId.get(id);
            deleted.put(id, item == null ? CompletableFuture.completedFuture(false)
                    : checkReads.submit(() -> o.copier().facts(id, item.from())).thenApply(Optional::isEmpty)
                            .exceptionally(e -> false));
        }
        return new Checks(batch, present, deleted);
    }

    /**
     * Makes the target the home of every ledger of {@code batch} whose verified copy is still there and whose home is
     * still the cluster it was copied from ({@code checks}, complete); completes with the relocation epoch that
     * announces it.
     */
    private CompletableFuture<Long> promoteBatch(List<Long> batch, MigrationTally tally, Checks checks) {
        Map<Long, CompletableFuture<Boolean>> present = checks.present();
        Map<Long, CompletableFuture<Boolean>> deleted = checks.deleted();
        // one announced change of the table (AnnouncedChange): cleanup deletes originals only once every broker
        // applied the epoch that covers it
        return AnnouncedChange.make(o.registry(), o.now(), () -> o.registry().readRanges().thenCompose(ranges ->
                        o.registry().updateRelocations(batch, (id, cur) -> {
                    Item item = tally.byId.get(id);
                    if (cur.isPresent() && cur.get().home().equals(target)) {
                        return cur; // promoted before (an earlier run, or another epoch)
                    }
                    String home = cur.map(Relocation::home).orElseGet(() -> ranges.flatMap(t -> t.owner(id))
                            .orElse(null));
                    if (!present.get(id).join() || item == null || !item.from().equals(home)
                            || deleted.get(id).join()) {
                        return cur; // checked below: an issue says why, or it is gone
                    }
                    String issuer = ranges.flatMap(t -> t.owner(id)).orElse(item.from());
                    return Optional.of(new Relocation(Relocation.FORMAT_VERSION, id, target, issuer,
                            item.kind().name(), epoch, o.now(), cur.map(Relocation::home).orElse(null),
                            cur.map(Relocation::switchEpoch).orElse(null)));
                })), stored -> batch).thenApply(announced -> {
                    Map<Long, Optional<Relocation>> stored = announced.result();
                    int ok = 0;
                    for (long id : batch) {
                        Optional<Relocation> r = stored.get(id);
                        if (r.isPresent() && r.get().home().equals(target)) {
                            ok++;
                        } else if (deleted.get(id).join()) {
                            tally.gone.add(id);
                            log.info("switch epoch={} ledger={} was deleted on bookie-cluster={} after it was copied; "
                                    + "its copy on {} is not promoted", epoch, id,
                                    tally.byId.get(id).from(), target);
                        } else {
                            Item item = tally.byId.get(id);
                            String why = !present.get(id).join() ? "its copy on " + target + " disappeared before it "
                                    + "could be promoted" : "its home changed while it was copied (now "
                                    + r.map(Relocation::home).orElse("its original") + ")";
                            tally.issues.put(id, new LedgerIssue(id, item == null ? "UNKNOWN" : item.kind().name(),
                                    item == null ? null : item.from(), "NOT_PROMOTED", why));
                            log.warn("switch epoch={} ledger={} not promoted to bookie-cluster={}: {}", epoch, id,
                                    target, why);
                        }
                    }
                    tally.promoted.addAndGet(ok);
                    o.metrics().promoted(target, ok);
                    log.info("switch epoch={} promoted {} ledger(s) to bookie-cluster={}, relocation epoch={}",
                            epoch, ok, target, announced.epoch());
                    return announced.epoch();
                });
    }
}
