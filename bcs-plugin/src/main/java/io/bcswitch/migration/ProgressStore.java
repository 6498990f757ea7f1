package io.bcswitch.migration;

import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/** Stores a run's tally in its migration state, after the ids of the copies made since the last store. */
final class ProgressStore {
    private final MigrationOrchestrator o;
    private final long epoch;

    ProgressStore(MigrationOrchestrator o, long epoch) {
        this.o = o;
        this.epoch = epoch;
    }

    /** Stores the tally (and the copies made since the last store) unless the run must stop. */
    CompletableFuture<MigrationState> persist(MigrationTally tally, UnaryOperator<MigrationState> and) {
        List<Long> copies;
        synchronized (tally.copies) {
            copies = new ArrayList<>(tally.copies);
        }
        int from = tally.copiesPersisted;
        // the copy ids first: a rollback reads them to know what to delete
        return o.registry().writeCopies(epoch, copies, from).thenCompose(v -> {
            tally.copiesPersisted = copies.size();
            return o.persist(epoch, s -> and.apply(tally.apply(s, o.now())));
        }).thenCompose(s -> s == null || s.phase() != Phase.SUPERSEDED || !s.owner().equals(o.me())
                ? CompletableFuture.completedFuture(s)
                // a newer switch ended the migration under this run: its state keeps what the run did until it stopped
                : o.recordSuperseded(epoch, x -> tally.apply(x, o.now())));
    }
}
