package io.bcswitch.migration;

import io.bcswitch.concurrent.ElasticWorkers;
import io.bcswitch.migration.MigrationPlan.Item;
import io.bcswitch.registry.LedgerIssue;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BUILD: copies every planned ledger to the target, a few at a time, and counts each outcome in the tally (stored
 * about once a second). Ledgers still open are tried again a few times, then left as skipped. Copies that failed
 * because a cluster could not be reached for now (bookies restarting, too few writable, a timeout) are tried again
 * in later passes, further apart each time, before they count as failed: a bookie that restarts during BUILD must
 * not leave work for the operator, and a cluster that is down for good (a disaster switch) costs the run the
 * waits once, not once per ledger.
 */
final class BuildPhase {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);
    private static final int OPEN_RETRY_PASSES = 3;
    /**
     * The waits before the passes that try again the copies that failed for an unreachable cluster, in multiples of
     * the run's open-ledger wait (2 s by default: 5, 10 and 20 s, together about as long as a bookie takes to
     * restart and register again after it lost its metadata session).
     */
    static final double[] RETRY_WAITS = {2.5, 5, 10};

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;
    private final RunWatch watch;
    private final ProgressStore progress;
    private final LedgerCopyStep copyStep;

    BuildPhase(MigrationOrchestrator o, long epoch, String target, RunWatch watch, ProgressStore progress,
               LedgerCopyStep copyStep) {
        this.o = o;
        this.epoch = epoch;
        this.target = target;
        this.watch = watch;
        this.progress = progress;
        this.copyStep = copyStep;
    }

    /** Copies {@code items}; completes when each is settled, or when the run must stop. */
    CompletableFuture<Void> copyAll(List<Item> items, MigrationTally tally) {
        return copyAll(items, tally, 1);
    }

    private CompletableFuture<Void> copyAll(List<Item> items, MigrationTally tally, int pass) {
        List<Item> stillOpen = Collections.synchronizedList(new ArrayList<>());
        List<Item> unreachable = Collections.synchronizedList(new ArrayList<>());
        boolean anotherTryFollows = pass <= RETRY_WAITS.length;
        // the concurrency is read again after every ledger: an operator's change applies to the copying under way
        return ElasticWorkers.run(items, o::concurrency,
                item -> copyOne(item, tally, stillOpen, unreachable, anotherTryFollows)).thenCompose(v -> {
            boolean stop = o.closed() || watch.stopped();
            List<Item> next = new ArrayList<>(unreachable); // when the run stops, a later run copies them
            if (pass >= OPEN_RETRY_PASSES || stop) {
                tally.skipped.addAll(stillOpen);
            } else {
                next.addAll(stillOpen);
            }
            if (next.isEmpty() || stop) {
                return CompletableFuture.completedFuture(null);
            }
            long wait = unreachable.isEmpty() ? o.waits().openRetryMillis()
                    : Math.round(o.waits().openRetryMillis() * RETRY_WAITS[pass - 1]);
            if (!unreachable.isEmpty()) {
                log.warn("switch epoch={} bookie-cluster={}: {} copies failed because a cluster cannot be reached for "
                        + "now; trying them again in {} ms ({} of {})", epoch, target, unreachable.size(), wait, pass,
                        RETRY_WAITS.length);
            }
            return o.delay(wait).thenCompose(x -> copyAll(next, tally, pass + 1));
        });
    }

    /** Copies one ledger; completes with whether the run goes on. */
    private CompletableFuture<Boolean> copyOne(Item item, MigrationTally tally, List<Item> stillOpen,
                                               List<Item> unreachable, boolean anotherTryFollows) {
        if (o.closed() || watch.stopped()) {
            return CompletableFuture.completedFuture(false);
        }
        tally.byId.put(item.ledgerId(), item);
        return copyStep.copy(item).thenCompose(out -> {
            if (out.result() == LedgerCopier.Result.FAILED && (watch.stopped() || o.closed())) {
                // cut short by the stop: no failure of the ledger's, and it is not settled (a later run copies it)
                return CompletableFuture.completedFuture(false);
            }
            if (out.result() == LedgerCopier.Result.FAILED && out.retriable() && anotherTryFollows) {
                unreachable.add(item); // not settled: the next pass tries it again
                return CompletableFuture.completedFuture(true);
            }
            record(item, out, tally, stillOpen);
            long now = o.now();
            if (now - tally.lastPersist >= o.waits().persistMillis()) {
                tally.lastPersist = now;
                return progress.persist(tally, s -> s).thenApply(s -> o.goOn(s, tally.token));
            }
            return CompletableFuture.completedFuture(true);
        });
    }

    private void record(Item item, LedgerCopier.Outcome out, MigrationTally tally, List<Item> stillOpen) {
        if (out.result() != LedgerCopier.Result.NOT_CLOSED) {
            tally.settled(item.ledgerId());
        }
        switch (out.result()) {
            case COPIED -> {
                tally.copied.incrementAndGet();
                tally.bytes.addAndGet(out.bytes());
                tally.unpersistedBytes.addAndGet(out.bytes());
                tally.copies.add(item.ledgerId());
                tally.toPromote.add(item.ledgerId());
                o.metrics().ledgerCopied(item.from(), target, out.bytes());
            }
            case ALREADY_PRESENT -> {
                tally.present.incrementAndGet();
                o.metrics().alreadyPresent(target);
                tally.copies.add(item.ledgerId());
                tally.toPromote.add(item.ledgerId());
            }
            case NOT_CLOSED -> stillOpen.add(item);
            case SOURCE_MISSING -> {
                tally.gone.add(item.ledgerId());
                log.info("switch epoch={} ledger={} bookie-cluster={} gone before it was copied (deleted meanwhile); "
                        + "nothing to move", epoch, item.ledgerId(), item.from());
            }
            case COLLISION -> {
                tally.collisions.incrementAndGet();
                o.metrics().collision(target);
                tally.issues.put(item.ledgerId(), new LedgerIssue(item.ledgerId(), item.kind().name(), item.from(),
                        "COLLISION", out.detail()));
                log.warn("switch epoch={} ledger={} COLLISION: bookie-cluster={} already holds a different ledger "
                        + "with this id; the ledger stays home on {}: {}", epoch, item.ledgerId(), target,
                        item.from(), out.detail());
            }
            case FAILED -> {
                tally.failed.incrementAndGet();
                o.metrics().verificationFailed(target);
                tally.issues.put(item.ledgerId(), new LedgerIssue(item.ledgerId(), item.kind().name(), item.from(),
                        "FAILED", out.detail()));
                log.warn("switch epoch={} ledger={} copy from bookie-cluster={} to {} failed; it stays home on {}: {}",
                        epoch, item.ledgerId(), item.from(), target, item.from(), out.detail());
            }
        }
    }
}
