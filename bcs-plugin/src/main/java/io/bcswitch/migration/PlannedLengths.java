package io.bcswitch.migration;

import io.bcswitch.migration.MigrationPlan.Item;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * Learns the lengths of the planned ledgers from their homes' metadata, a few at a time and beside the copying
 * (never ahead of it: a home whose metadata does not answer must not hold up the copies), for the bytes the
 * run still has to copy ({@code bytesRemaining}, a metric). A length that cannot be learnt is left out.
 */
final class PlannedLengths {
    /** Lengths learnt at once for the bytes-remaining figure: few, the copies read the same metadata. */
    private static final int SIZE_CONCURRENCY = 4;
    /** A home whose metadata does not answer within this leaves that ledger's length out. */
    private static final long SIZE_TIMEOUT_SECONDS = 10;

    private final MigrationOrchestrator o;
    private final RunWatch watch;

    PlannedLengths(MigrationOrchestrator o, RunWatch watch) {
        this.o = o;
        this.watch = watch;
    }

    void sizeUp(List<Item> items, MigrationTally tally) {
        Queue<Item> left = new ConcurrentLinkedQueue<>(items);
        for (int i = 0; i < SIZE_CONCURRENCY; i++) {
            sizeNext(left, tally);
        }
    }

    private void sizeNext(Queue<Item> left, MigrationTally tally) {
        Item item = left.poll();
        if (item == null || watch.stopped() || o.closed()) {
            return;
        }
        CompletableFuture<Optional<LedgerCopier.LedgerFacts>> facts;
        try {
            facts = o.copier().facts(item.ledgerId(), item.from());
        } catch (RuntimeException e) {
            facts = CompletableFuture.failedFuture(e);
        }
        facts.orTimeout(SIZE_TIMEOUT_SECONDS, TimeUnit.SECONDS).whenCompleteAsync((f, e) -> {
            if (e == null && f.isPresent()) {
                tally.sized(item.ledgerId(), f.get().length());
            }
            sizeNext(left, tally);
        }, o.scheduler());
    }
}
