package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterNames;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which cluster a starting broker writes to, in PIP-477's order (directive, ACTIVE record, configured name, name
 * derived from its own URI), and the bootstrap record and range table that only the first activation ever writes.
 */
class FirstActivationTest {
    private static final long B = 1L << 32;
    private static final Clock AT_1000 = Clock.fixed(Instant.ofEpochMilli(1000), ZoneOffset.UTC);

    private final InMemoryMetadataPort port = new InMemoryMetadataPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));

    @AfterEach
    void tearDown() {
        port.close();
    }

    private Ownership decide(String configuredName, String brokerUri) throws Exception {
        SwitchConfig config = new SwitchConfig("/bcs", configuredName, 50, true, 10);
        return new FirstActivation(registry, config, AT_1000).decide(brokerUri)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    private void cluster(String name, String uri, ClusterStatus status) {
        registry.write(registry.paths().cluster(name), new BookieClusterRecord(1, name, uri, status, 5L), -1).join();
    }

    private long version(String path) throws Exception {
        return port.get(path).get().orElseThrow().version();
    }

    @Test
    void aNewPulsarClusterRegistersItsBrokersOwnClusterUnderADerivedName() throws Exception {
        String uri = "metadata-store:zk:zk-1:2181/ledgers";
        Ownership o = decide("", uri);
        String name = ClusterNames.derive(uri);
        assertEquals(name, o.activeCluster());
        assertEquals(0, o.activeEpoch());
        BookieClusterRecord r = registry.getCluster(name).get().orElseThrow();
        assertEquals(ClusterStatus.ACTIVE, r.status());
        assertEquals(uri, r.metadataServiceUri());
        assertEquals(1000, r.registeredAt());
        assertEquals(new BootstrapRecord(1, name, 1000), registry.readBootstrap().get().orElseThrow());
        assertEquals(RangeTable.bootstrap(name, 1000), registry.readRanges().get().orElseThrow());
        assertEquals(RangeTable.bootstrap(name, 1000), o.ranges());
    }

    @Test
    void theConfiguredNameWinsOverTheDerivedOneAndARegisteredRecordKeepsItsUri() throws Exception {
        cluster("west", "zk:registered/ledgers", ClusterStatus.STANDBY);
        Ownership o = decide("west", "zk:configured/ledgers");
        assertEquals("west", o.activeCluster());
        BookieClusterRecord r = registry.getCluster("west").get().orElseThrow();
        assertEquals(ClusterStatus.ACTIVE, r.status());
        assertEquals("zk:registered/ledgers", r.metadataServiceUri(), "the registered URI is kept");
        assertEquals(5L, r.registeredAt());
        assertEquals(List.of("west"), registry.listClusters().get().stream().map(BookieClusterRecord::name).toList());
    }

    @Test
    void anActiveRecordDecidesAndNothingAlreadyWrittenIsRewritten() throws Exception {
        cluster("east", "zk:east", ClusterStatus.ACTIVE);
        cluster("west", "zk:west", ClusterStatus.STANDBY);
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "west", 3), -1).join();
        RangeTable table = RangeTable.bootstrap("west", 3).with(new IdRange("east", B, 1, 4));
        registry.write(registry.paths().ranges(), table, -1).join();
        long boot = version(registry.paths().bootstrap());
        long ranges = version(registry.paths().ranges());
        long east = version(registry.paths().cluster("east"));

        Ownership o = decide("west", "zk:west");
        assertEquals("east", o.activeCluster(), "the ACTIVE record wins over the configured name");
        assertEquals(table, o.ranges());
        assertEquals(boot, version(registry.paths().bootstrap()));
        assertEquals(ranges, version(registry.paths().ranges()));
        assertEquals(east, version(registry.paths().cluster("east")));
        assertEquals(ClusterStatus.STANDBY, registry.getCluster("west").get().orElseThrow().status());
    }

    @Test
    void aDirectiveDecidesEvenWithoutARangeTable() throws Exception {
        cluster("east", "zk:east", ClusterStatus.ACTIVE);
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "north", "east", 2, 9, B), -1).join();
        Ownership o = decide("west", "zk:west");
        assertEquals("north", o.activeCluster());
        assertEquals(2, o.activeEpoch());
        assertEquals(RangeTable.bootstrap("east", 9).with(new IdRange("north", B, 2, 9)), o.ranges());
        assertEquals(Optional.empty(), registry.readRanges().get(), "a broker starting writes no range table here");

        RangeTable table = RangeTable.bootstrap("east", 1);
        registry.write(registry.paths().ranges(), table, -1).join();
        assertEquals(table.with(new IdRange("north", B, 2, 9)), decide("west", "zk:west").ranges());
    }
}
