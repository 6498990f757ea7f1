package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.InMemoryMetadataPort;
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
}
