package io.bcswitch.migration;

import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-reads a run's migration state and the switch directive while the run goes on (BUILD and PROMOTE), and says when
 * the run must stop (rolled back, superseded, taken over, or this broker closing). A newer switch ends the run's
 * migration here (SUPERSEDED), whether or not another broker's pass did so already. Once stopped, the copies in flight
 * stop at their next batch, a copy waiting for its turn at the copy rate stops at once (see {@link #unlessStopped}),
 * and PROMOTE stops waiting for brokers to apply its last batch: so the run ends within about one watch period
 * ({@link MigrationOrchestrator#WATCH_MILLIS}) plus one batch's read and write.
 */
final class RunWatch {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;
    /** What waits for its turn at the copy rate now: failed at once when the run stops. */
    private final Set<CompletableFuture<Void>> waiting = ConcurrentHashMap.newKeySet();

    /** Set once the run must stop (rolled back, superseded, taken over): copies in flight stop at their next batch. */
    private volatile boolean stopped;

    RunWatch(MigrationOrchestrator o, long epoch) {
        this.o = o;
        this.epoch = epoch;
    }

    boolean stopped() {
        return stopped;
    }

    /**
     * {@code wait} (a copy's turn at the copy rate), failed at once with a {@link CancellationException} when the
     * run stops meanwhile, or when it has already: a low rate would otherwise hold a stopped run for as long as the
     * bytes ahead of it take.
     */
    CompletableFuture<Void> unlessStopped(CompletableFuture<Void> wait) {
        waiting.add(wait);
        wait.whenComplete((v, e) -> waiting.remove(wait));
        if (stopped) {
            wait.completeExceptionally(stoppedHere());
        }
        return wait;
    }

    private CancellationException stoppedHere() {
        return new CancellationException("the migration of switch epoch " + epoch + " stopped on this broker");
    }

    private void stop(String why) {
        if (!stopped) {
            log.info("switch epoch={} migration on broker {} stops its copies: {}", epoch, o.me(), why);
        }
        stopped = true;
        waiting.forEach(w -> w.completeExceptionally(stoppedHere()));
    }

    /**
     * While {@code until} runs, re-reads the state and the directive every {@link MigrationOrchestrator#WATCH_MILLIS}
     * (the run's {@link MigrationOrchestrator.Waits#watchMillis}, shorter in tests); stops the run when it must.
     */
    void watch(CompletableFuture<Void> until, long token) {
        o.delay(o.waits().watchMillis()).thenCompose(v -> until.isDone() ? CompletableFuture.completedFuture(null)
                : o.registry().readDirective().thenCompose(d -> d.present() && d.value().epoch() > epoch
                        // a newer switch: this migration ends now, whoever else notices it too
                        ? o.supersede(epoch, d.value().epoch())
                        : o.readState(epoch).thenApply(st -> st.value())).thenAccept(st -> {
                    if (until.isDone()) {
                        return; // the run ended meanwhile: its own last write (DONE) is no reason to stop anything
                    }
                    if (o.closed()) {
                        stop("closing");
                    } else if (st != null && !o.goOn(st, token)) {
                        stop(st.phase() + " owned by " + st.owner());
                    } else {
                        watch(until, token);
                    }
                })).exceptionally(e -> {
                    if (!until.isDone()) {
                        watch(until, token);
                    }
                    return null;
                });
    }
}
