package io.bcswitch.migration;

import io.bcswitch.migration.MigrationPlan.Item;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copy of one planned ledger to the target, paced by the rate limit: from its home, or when that fails from
 * the other clusters that held the same closed ledger (a copy that failed for a cluster that cannot be reached
 * for now is tried again by a later pass of {@link BuildPhase}). It stops at the next batch once the run must stop.
 */
final class LedgerCopyStep {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;
    private final RunWatch watch;

    LedgerCopyStep(MigrationOrchestrator o, long epoch, String target, RunWatch watch) {
        this.o = o;
        this.epoch = epoch;
        this.target = target;
        this.watch = watch;
    }

    /**
     * Copies {@code item} from its home; when that fails (the home's bookies do not answer, say), from its
     * alternates in turn, each of which held the same closed ledger the home copy was verified against. A ledger
     * that is open, missing at home or collides is not looked for elsewhere.
     */
    CompletableFuture<LedgerCopier.Outcome> copy(Item item) {
        // a copy the stop cut short failed for that, not because its home is unreadable
        return copyFrom(item, item.from()).thenCompose(out -> out.result() == LedgerCopier.Result.FAILED
                && !item.alternates().isEmpty() && !watch.stopped() && !o.closed() ? fromAlternate(item, 0, out)
                : CompletableFuture.completedFuture(out));
    }

    private CompletableFuture<LedgerCopier.Outcome> fromAlternate(Item item, int i, LedgerCopier.Outcome atHome) {
        if (i >= item.alternates().size() || watch.stopped() || o.closed()) {
            return CompletableFuture.completedFuture(atHome);
        }
        String other = item.alternates().get(i);
        log.warn("switch epoch={} ledger={} cannot be copied from its home bookie-cluster={} ({}); copying the same "
                + "closed ledger from bookie-cluster={} instead", epoch, item.ledgerId(), item.from(),
                atHome.detail(), other);
        return copyFrom(item, other).thenCompose(out -> out.result() == LedgerCopier.Result.FAILED
                || out.result() == LedgerCopier.Result.SOURCE_MISSING ? fromAlternate(item, i + 1, atHome)
                : CompletableFuture.completedFuture(out));
    }

    /**
     * The rate limit, and the stop: a copy in flight fails at its next batch once the run must stop, and one waiting
     * for its turn at the rate fails as soon as the run stops.
     */
    private CompletableFuture<Void> pace(long bytes) {
        return turn(() -> o.limiter().acquire(bytes));
    }

    /** A ledger's turn at the rate, which charges its metadata work (ByteRateLimiter#acquireLedger). */
    private CompletableFuture<Void> ledgerTurn() {
        return turn(() -> o.limiter().acquireLedger());
    }

    private CompletableFuture<Void> turn(java.util.function.Supplier<CompletableFuture<Void>> acquire) {
        if (watch.stopped() || o.closed()) {
            return CompletableFuture.failedFuture(new CancellationException(
                    "the migration of switch epoch " + epoch + " stopped on this broker"));
        }
        return watch.unlessStopped(acquire.get());
    }

    private CompletableFuture<LedgerCopier.Outcome> copyFrom(Item item, String source) {
        return ledgerTurn().thenCompose(v -> o.copier().copy(item.ledgerId(), source, target, this::pace))
                .exceptionally(e -> new LedgerCopier.Outcome(LedgerCopier.Result.FAILED, 0, String.valueOf(e)));
    }
}
