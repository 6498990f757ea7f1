package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.StaleRunException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Stores a run's tally in its migration state, after the ids of the copies made since the last store. */
final class ProgressStore {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);
    private final MigrationOrchestrator o;
    private final long epoch;

    ProgressStore(MigrationOrchestrator o, long epoch) {
        this.o = o;
        this.epoch = epoch;
    }

    /**
     * Stores the tally (and the copies made since the last store) unless the run must stop; completes with the stored
     * state, which says so ({@link MigrationOrchestrator#goOn}). Both writes carry the run's token: a run that lost
     * the migration neither overwrites nor drops what the run that took it over recorded.
     */
    CompletableFuture<MigrationState> persist(MigrationTally tally, UnaryOperator<MigrationState> and) {
        List<Long> copies;
        synchronized (tally.copies) {
            copies = new ArrayList<>(tally.copies);
        }
        int from = tally.copiesPersisted;
        // the copy ids first: a rollback reads them to know what to delete
        return o.registry().appendCopies(epoch, tally.token, copies.subList(from, copies.size())).thenCompose(v -> {
            tally.copiesPersisted = copies.size();
            return o.persist(epoch, tally.token, s -> and.apply(tally.apply(s, o.now())));
        }).exceptionallyCompose(e -> {
            if (!(Failures.unwrap(e) instanceof StaleRunException stale)) {
                return CompletableFuture.failedFuture(Failures.unwrap(e));
            }
            log.warn("switch epoch={} broker={} migration: {}; this run stops", epoch, o.me(), stale.getMessage());
            return o.readState(epoch).thenApply(st -> {
                if (!st.present()) {
                    throw stale;
                }
                return st.value(); // another run's: goOn says stop
            });
        }).thenCompose(s -> s == null || s.phase() != Phase.SUPERSEDED || !s.owner().equals(o.me())
                || s.runToken() != tally.token ? CompletableFuture.completedFuture(s)
                // a newer switch ended the migration under this run: its state keeps what the run did until it stopped
                : o.recordSuperseded(epoch, tally.token, x -> tally.apply(x, o.now())));
    }
}
