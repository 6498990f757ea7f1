package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bcswitch.registry.IdChunk;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.StaleRunException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A run's progress: its copies appended with its token, then its tally written into the state, unless a newer run
 * holds the migration: then nothing of it is written, and it is answered with the newer run's state (so it stops).
 */
class ProgressStoreTest {
    private RegistryBed bed;
    private ProgressStore progress;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        progress = new ProgressStore(bed.orchestrator(() -> CompletableFuture.completedFuture(List.of())), 1);
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    private MigrationTally tally(long token, Long... copies) {
        MigrationTally t = new MigrationTally(copies.length, List.of(), token);
        t.copies.addAll(List.of(copies));
        return t;
    }

    /** The stored state as the take-over that gave the migration to the run holding {@code token} left it. */
    private void state(long token) throws Exception {
        MigrationState.Edit s = MigrationState.start(1, "b", "broker-1", 0).moveTo(Phase.BUILD, 0).edit();
        for (long i = 0; i < token; i++) {
            s.nextRunToken();
        }
        MigrationState taken = s.build();
        bed.registry.update(bed.registry.paths().orchestrator(1), MigrationState.class,
                cur -> java.util.Optional.of(taken)).get();
    }

    @Test
    void theCopiesGoFirstThenTheTallyWithTheRunsToken() throws Exception {
        state(1);
        MigrationState s = progress.persist(tally(1, 5L, 6L), x -> x).get();
        assertEquals(2, s.copies());
        assertEquals(List.of(5L, 6L), bed.registry.readCopies(1).get().get(0));
        assertEquals(1, bed.registry.read(bed.registry.paths().copiesChunk(1, 0), IdChunk.class).get().value()
                .token());
    }

    @Test
    void aRunThatLostTheMigrationWritesNothingAndGetsTheNewerRunsState() throws Exception {
        state(1);
        progress.persist(tally(2, 5L), x -> x).get(); // the newer run (token 2) recorded its copy
        state(2);
        MigrationState newer = bed.registry.read(bed.registry.paths().orchestrator(1), MigrationState.class).get()
                .value();
        MigrationState answered = progress.persist(tally(1, 7L), x -> x.edit().copies(99).build()).get();
        assertEquals(newer, answered, "the newer run's state: goOn says stop");
        assertEquals(List.of(5L), bed.registry.readCopies(1).get().get(0));
    }

    @Test
    void aRefusalWithNoStateAndAnyOtherFailureFailThePersist() throws Exception {
        bed.registry.appendCopies(1, 3, List.of(1L)).get();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> progress.persist(tally(1, 7L), x -> x).get());
        assertInstanceOf(StaleRunException.class, e.getCause());
        bed.store.put(bed.registry.paths().orchestrator(1), "not json".getBytes(), java.util.Optional.empty()).get();
        e = assertThrows(ExecutionException.class, () -> progress.persist(tally(3, 8L), x -> x).get());
        assertEquals(false, e.getCause() instanceof StaleRunException, e.getCause().toString());
    }
}
