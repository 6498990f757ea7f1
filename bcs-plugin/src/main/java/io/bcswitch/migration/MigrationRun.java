package io.bcswitch.migration;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.migration.MigrationPlan.Item;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryView;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One BUILD-then-PROMOTE run of the migration after switch {@code epoch} to {@code target}, on the broker that
 * holds the orchestrator lock. Safe to start again from the beginning at any point (a resumed run replans from the
 * inventory: copies found identical on the target count as present, promotions found done count as promoted).
 *
 * <p>It ends DONE only when every ledger it planned is home on the target, or has an issue saying why not.
 * This class plans the run and moves it from phase to phase; {@link BuildPhase} copies, {@link PromotePhase}
 * promotes, and the {@link MigrationTally} they share is stored by {@link ProgressStore}.
 */
final class MigrationRun {
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;
    private final RunWatch watch;
    private final ProgressStore progress;
    private final PlannedLengths lengths;
    private final BuildPhase build;
    private final PromotePhase promotion;

    MigrationRun(MigrationOrchestrator orchestrator, long epoch, String target) {
        this.o = orchestrator;
        this.epoch = epoch;
        this.target = target;
        // one watch per run: its stop ends this run's copies only
        this.watch = new RunWatch(orchestrator, epoch);
        this.progress = new ProgressStore(orchestrator, epoch);
        this.lengths = new PlannedLengths(orchestrator, watch);
        this.build = new BuildPhase(orchestrator, epoch, target, watch, progress,
                new LedgerCopyStep(orchestrator, epoch, target, watch));
        this.promotion = new PromotePhase(orchestrator, epoch, target, progress,
                new DeletedLedgerCopies(orchestrator, epoch, target), new HomeVerifier(orchestrator, epoch, target),
                watch);
    }

    /** BUILD (unless already past it) then PROMOTE; the state's phase says where the run starts. */
    CompletableFuture<Void> run(MigrationState initial) {
        long started = System.nanoTime();
        return RegistryView.read(o.registry()).thenCompose(view -> o.inventory().picture()
                .thenApply(picture -> MigrationPlan.of(picture, view, target)).thenCompose(plan ->
                o.registry().readCopies(epoch).thenCompose(chunks -> {
            List<Item> items = plan.items();
            List<Long> earlier = new ArrayList<>();
            chunks.values().forEach(earlier::addAll);
            // a resumed run: what this migration already promoted counts as planned and promoted
            int prior = (int) view.relocations().values().stream()
                    .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).count();
            log.info("switch epoch={} migration BUILD on broker {}: {} ledger(s) to copy to bookie-cluster={}{}",
                    epoch, o.me(), items.size(), target, promotedBefore(prior));
            MigrationTally tally = new MigrationTally(items.size() + prior, earlier, initial.runToken());
            tally.promoted.set(prior);
            for (LedgerInventory.Unknown u : plan.unknown()) {
                // what is known moves now; this topic's ledger in use waits for a run that can learn it (or is
                // found home on the target when the run ends)
                tally.unknown.put(u, view.home(u.storedLedger()).orElse("(none)"));
                log.warn("switch epoch={} migration to bookie-cluster={}: {}: {}; the compacted ledger its stored "
                        + "cursor names (ledger={}) is planned, the one in use may not be", epoch, target,
                        u.referencedBy(), u.reason(), u.storedLedger());
            }
            lengths.sizeUp(items, tally);
            // watched while it copies and while it promotes: a newer switch or a rollback stops either within a watch
            CompletableFuture<Void> ran = new CompletableFuture<>();
            watch.watch(ran, tally.token);
            return build.copyAll(items, tally).thenCompose(v -> {
                if (o.closed()) {
                    // this broker is shutting down: keep the phase, another broker (or a restart) resumes
                    return progress.persist(tally, s -> s);
                }
                String[] rate = buildRate(started, System.nanoTime(), tally.copied.get(), tally.present.get(),
                        tally.bytes.get());
                log.info("switch epoch={} migration BUILD done: {} copied, {} already present, {} failed, {} skipped "
                        + "(open), {} collisions, {} bytes in {} s ({} ledgers/s, {} MB/s)", epoch, tally.copied.get(),
                        tally.present.get(), tally.failed.get(), tally.skipped.size(), tally.collisions.get(),
                        tally.bytes.get(), rate[0], rate[1], rate[2]);
                return progress.persist(tally, s -> s.phase() == Phase.BUILD ? s.moveTo(Phase.PROMOTE, o.now()) : s);
            }).thenCompose(s -> s.phase() != Phase.PROMOTE || !o.goOn(s, tally.token)
                    ? CompletableFuture.<Void>completedFuture(null)
                    : o.announce(epoch, view, watch::stopped).thenCompose(v -> promotion.promote(tally)))
                    .whenComplete((v, e) -> ran.complete(null));
        })));
    }

    /*
     * The two log figures below are computed apart from the run (same text as before) so that a unit test checks
     * them in microseconds: inside the run, every test that drives a run covered their arithmetic and none could
     * see it, which made them the costliest mutants of the package to run.
     */

    /** The BUILD log line's note of what a resumed run found promoted already: empty when nothing. */
    static String promotedBefore(int prior) {
        return prior > 0 ? " (" + prior + " promoted before)" : "";
    }

    /**
     * BUILD's duration and rates for its log line: seconds (at least 1 ms), ledgers copied or found present per
     * second, MB copied per second, between {@code startedNanos} and {@code endNanos} ({@link System#nanoTime}).
     */
    static String[] buildRate(long startedNanos, long endNanos, int copied, int present, long bytes) {
        double secs = Math.max(1e-3, (endNanos - startedNanos) / 1e9);
        return new String[] {String.format("%.2f", secs), String.format("%.1f", (copied + present) / secs),
                String.format("%.2f", bytes / secs / 1e6)};
    }
}
