package io.bcswitch.migration;

import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-reads a run's migration state while it copies, and says when the run must stop (rolled back, superseded,
 * taken over, or this broker closing): the copies in flight stop at their next batch rather than at their end.
 */
final class RunWatch {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;

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
     * While {@code until} runs, re-reads the state every {@link MigrationOrchestrator#WATCH_MILLIS} (the run's
     * {@link MigrationOrchestrator.Waits#watchMillis}, shorter in tests); stops the run when it must.
     */
    void watch(CompletableFuture<Void> until, long token) {
        o.delay(o.waits().watchMillis()).thenCompose(v -> until.isDone() ? CompletableFuture.completedFuture(null)
                : o.readState(epoch).thenAccept(st -> {
                    if (o.closed() || (st.present() && !o.goOn(st.value(), token))) {
                        if (!stopped) {
                            log.info("switch epoch={} migration on broker {} stops its copies: {}", epoch, o.me(),
                                    st.present() ? st.value().phase() + " owned by " + st.value().owner() : "closing");
                        }
                        stopped = true;
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
