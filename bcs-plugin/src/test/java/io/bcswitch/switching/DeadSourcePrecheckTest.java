package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The disaster case: the active cluster's metadata service does not answer at all. Precheck must still
 * pass for a healthy target, say the source is unreachable, and the switch must go through.
 */
class DeadSourcePrecheckTest {
    private static final String DEAD_URI = "zk+hierarchical://127.0.0.1:1/ledgers";
    private static final String EAST_URI = "metadata-store:zk:127.0.0.1:2/ledgers";

    private MetadataStoreExtended store;
    private ClusterMetadataAccess access;
    private SwitchService service;
    private RegistryStore registry;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(store, new RegistryPaths("/admin/bookie-clusters"));
        put("/ledgers/LAYOUT", "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1");
        put("/ledgers/available/b1:3181", "");
        put("/ledgers/available/b2:3181", "");
        registry.write(registry.paths().cluster("west"), new BookieClusterRecord(1, "west", DEAD_URI,
                ClusterStatus.ACTIVE, 1L), -1).join();
        registry.write(registry.paths().cluster("east"), new BookieClusterRecord(1, "east", EAST_URI,
                ClusterStatus.STANDBY, 2L), -1).join();
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "west", 1L), -1).join();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("west", 1L), -1).join();
        access = new ClusterMetadataAccess(store, 1500);
        service = new SwitchService(registry, access, 2, Clock.systemUTC(),
                () -> java.util.concurrent.CompletableFuture.completedFuture(java.util.List.of()));
        service.setImplicitBrokerUri(EAST_URI);
    }

    @AfterEach
    void tearDown() throws Exception {
        access.close();
        store.close();
    }

    private void put(String path, String value) {
        store.put(path, value.getBytes(StandardCharsets.UTF_8), Optional.empty()).join();
    }

    @Test
    void deadSourceIsReportedNotBlocking() {
        PrecheckReport report = service.precheck("east").join();
        assertTrue(report.ok(), report.problems().toString());
        assertEquals("west", report.source());
        assertFalse(report.sourceReachable());
        assertNotNull(report.sourceError());
        assertEquals(1, report.proposedHighOrderBits(), "above every range handed out so far");

        SwitchResult result = service.switchTo("east").join();
        assertEquals("east", result.directive().target());
        assertEquals("west", result.directive().origin());
        assertEquals(1L << 32, result.directive().firstLedgerId());
        assertTrue(registry.readRanges().join().orElseThrow().owner((1L << 32) + 5).orElseThrow().equals("east"));
        assertEquals(ClusterStatus.ACTIVE, registry.getCluster("east").join().orElseThrow().status());
        assertEquals(ClusterStatus.STANDBY, registry.getCluster("west").join().orElseThrow().status());
    }
}
