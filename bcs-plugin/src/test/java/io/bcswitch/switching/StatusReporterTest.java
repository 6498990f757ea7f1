package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The status an operator reads, from registries in the states a real one passes through. */
class StatusReporterTest {
    private static final long B = 1L << 32;

    private final InMemoryMetadataPort port = new InMemoryMetadataPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));

    @AfterEach
    void tearDown() {
        port.close();
    }

    private StatusReport status() throws Exception {
        return new StatusReporter(registry).status().get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void anEmptyRegistryReportsNothingActiveAndNoRanges() throws Exception {
        StatusReport s = status();
        assertNull(s.activeCluster());
        assertEquals(0, s.epoch());
        assertNull(s.directive());
        assertEquals(List.of(), s.ranges());
        assertEquals(ReadMode.CURRENT, s.readMode());
    }

    @Test
    void theNewestDirectivesRangeIsShownBeforeTheRangeTableHasIt() throws Exception {
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "a", 3), -1).join();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 3), -1).join();
        StatusReport s = status();
        assertEquals("a", s.activeCluster(), "never switched: the bootstrap cluster");
        assertEquals(RangeTable.bootstrap("a", 3).ranges(), s.ranges());

        SwitchDirective d = new SwitchDirective(1, "b", "a", 1, 4, B);
        registry.write(registry.paths().switchTarget(), d, -1).join();
        registry.writeEphemeral(registry.paths().broker("br-1"), new BrokerCutoverRecord(1, "br-1", 0, "a", 0, 0, 0,
                1, 2)).join();
        s = status();
        assertEquals("b", s.activeCluster());
        assertEquals(1, s.epoch());
        assertEquals(d, s.directive());
        assertEquals(RangeTable.bootstrap("a", 3).with(new IdRange("b", B, 1, 4)).ranges(), s.ranges());
        assertEquals(List.of("br-1"), s.pendingBrokers());
        assertEquals(false, s.cutoverComplete());
    }

    @Test
    void afterARollbackTheRolledBackMigrationIsShownBesideTheSwitchBacks() throws Exception {
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "a", 3), -1).join();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 4, B), -1).join();
        MigrationState one = MigrationState.start(1, "b", "br-1", 5).moveTo(Phase.BUILD, 5).moveTo(Phase.PROMOTE, 5)
                .moveTo(Phase.DONE, 6);
        registry.write(registry.paths().orchestrator(1), one, -1).join();
        assertNull(status().rolledBack(), "the first switch has no switch before it");

        // switch 1 is rolled back: the switch back (2) is the latest, and switch 1's migration is still shown
        MigrationState rolledBack = one.moveTo(Phase.ROLLING_BACK, 7).moveTo(Phase.ROLLED_BACK, 8).edit()
                .issues(List.of(new LedgerIssue(5, "SCHEMA", "b", LedgerIssue.NOT_REVERSED, "stays home on b: ...")))
                .build();
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> java.util.Optional.of(
                rolledBack)).join();
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> java.util.Optional.of(
                new SwitchDirective(1, "a", "b", 2, 9, 2 * B))).join();
        StatusReport s = status();
        assertEquals(2, s.epoch());
        assertEquals(rolledBack, s.rolledBack());
        assertNull(s.migration(), "the switch back's migration has not started");

        // a later switch (3) follows the switch back: nothing was rolled back right before it
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> java.util.Optional.of(
                new SwitchDirective(1, "c", "a", 3, 10, 3 * B))).join();
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "a", "br-1", 9)
                .moveTo(Phase.BUILD, 9).moveTo(Phase.PROMOTE, 9).moveTo(Phase.DONE, 9), -1).join();
        assertNull(status().rolledBack());
    }
}
