package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every take-over hands the migration to a new run with the next token, and every write of a run carries its token:
 * a run that lost the migration is refused even on the broker that took it over again (its passes may overlap once
 * one hangs past its session).
 */
class RunTokenTest {
    private RegistryBed bed;
    private MigrationStates states;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        states = new MigrationStates(bed.registry, Clock.systemUTC(), () -> "broker-1",
                new DriverTimer(bed.scheduler));
        bed.registry.write(bed.registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 0, 1L << 32), -1)
                .get();
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    @Test
    void aRunTakenOverOnItsOwnBrokerWritesNothingMoreAndIsToldToStop() throws Exception {
        MigrationState first = states.takeOver(1, "b").get();
        assertEquals(1, first.runToken());
        MigrationState second = states.takeOver(1, "b").get();
        assertEquals(2, second.runToken());
        assertEquals("broker-1", second.owner());

        MigrationState stored = states.persist(1, 1, s -> s.moveTo(Phase.BUILD, 5)).get();
        assertEquals(Phase.PENDING, stored.phase(), "the first run's write is refused");
        assertFalse(states.goOn(stored, 1));
        assertTrue(states.goOn(stored, 2));
        assertFalse(states.stillMine(1, 1).get());
        assertTrue(states.stillMine(1, 2).get());
        assertEquals(Phase.PENDING, states.transition(1, 1, Phase.PENDING, Phase.BUILD).get().phase());
        assertEquals(Phase.BUILD, states.transition(1, 2, Phase.PENDING, Phase.BUILD).get().phase());
        assertEquals(Phase.BUILD, states.transition(1, 2, Phase.PENDING, Phase.BUILD).get().phase(),
                "not PENDING any more: left as it is");
        assertEquals(Phase.PROMOTE, states.persist(1, 2, s -> s.moveTo(Phase.PROMOTE, 6)).get().phase());
        // a run whose migration has stopped is refused whatever its token
        states.transition(1, java.util.Set.of(Phase.PROMOTE), Phase.SUPERSEDED, s -> s).get();
        assertEquals(Phase.SUPERSEDED, states.persist(1, 2, s -> s.edit().copies(9).build()).get().phase());
        assertEquals(0, states.read(1).get().value().copies());
        assertEquals(Phase.SUPERSEDED, states.takeOver(1, "b").get().phase());
        assertEquals(2, states.read(1).get().value().runToken(), "an ended migration is not taken over");
    }

    @Test
    void aPendingRunThatLostTheMigrationDoesNotMoveItToBuild() throws Exception {
        bed.broker("broker-1", 1, "b", 0, Map.of());
        states.takeOver(1, "b").get();
        states.takeOver(1, "b").get();
        PendingPhase pending = new PendingPhase(bed.registry, states, (epoch, target) -> {
            throw new AssertionError("no run is started");
        });
        pending.pending(1, "b", 1).get();
        assertEquals(Phase.PENDING, states.read(1).get().value().phase());
    }
}
