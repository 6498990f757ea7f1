package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
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
    private static final String EAST_URI = "metadata-store:zk:127.0.0.1:2";
    /** How long a precheck waits for the dead source's metadata service: nothing listens there, so any bound does. */
    private static final long DEAD_SOURCE_TIMEOUT_MILLIS = 250;

    private MetadataStoreExtended store;
    private ClusterMetadataAccess access;
    private SwitchService service;
    private RegistryStore registry;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/admin/bookie-clusters"));
        WestAndEast.seed(store, registry, DEAD_URI, EAST_URI);
        access = new io.bcswitch.precheck.ServedClusterMetadata(DEAD_SOURCE_TIMEOUT_MILLIS, java.util.Map.of(EAST_URI, store));
        service = new SwitchService(registry, access, 2, Clock.systemUTC(),
                () -> java.util.concurrent.CompletableFuture.completedFuture(java.util.List.of()));
    }

    @AfterEach
    void tearDown() throws Exception {
        access.close();
        store.close();
    }

    @Test
    void deadSourceIsReportedNotBlocking() {
        // every broker start records what the active cluster's id generator says (here: 31-bit ids only)
        registry.raiseWatermark("west", 0, 1000, 1, "broker start").join();
        PrecheckReport report = service.precheck("east").join();
        assertTrue(report.ok(), report.problems().toString());
        assertEquals("west", report.source());
        assertFalse(report.sourceReachable());
        assertNotNull(report.sourceError());
        assertEquals(2, report.proposedHighOrderBits(), "above every range handed out so far, with a margin: west "
                + "may have moved on since it was last seen");

        SwitchResult result = service.switchTo("east").join();
        assertEquals("east", result.directive().target());
        assertEquals("west", result.directive().origin());
        assertEquals(2L << 32, result.directive().firstLedgerId());
        assertTrue(registry.readRanges().join().orElseThrow().owner((2L << 32) + 5).orElseThrow().equals("east"));
        assertEquals(ClusterStatus.ACTIVE, registry.getCluster("east").join().orElseThrow().status());
        assertEquals(ClusterStatus.STANDBY, registry.getCluster("west").join().orElseThrow().status());
    }

    @Test
    void aDeadSourceWhoseIdsWereNeverSeenIsOnlySwitchedFromWithAnExplicitOverride() throws Exception {
        byte[] before = store.get(registry.paths().ranges()).join().orElseThrow().getValue();
        PrecheckReport report = service.precheck("east").join();
        assertFalse(report.ok());
        assertTrue(report.problems().get(0).contains("allowUnknownSourceIds"), report.problems().toString());
        java.util.concurrent.CompletionException refused = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.CompletionException.class, () -> service.switchTo("east").join());
        assertTrue(refused.getCause().getMessage().contains("nothing records which ledger ids it issued"),
                refused.getCause().getMessage());
        assertFalse(registry.readDirective().join().present(), "nothing switched");
        assertTrue(java.util.Arrays.equals(before, store.get(registry.paths().ranges()).join()
                .orElseThrow().getValue()));

        SwitchResult forced = service.switchTo("east", true).join();
        assertEquals(1L << 32, forced.directive().firstLedgerId());
        assertTrue(forced.precheck().warnings().stream().anyMatch(w -> w.contains("allowUnknownSourceIds")),
                forced.precheck().warnings().toString());
    }

    /**
     * west issued 63-bit ids under high-order bits 5 (seen by a precheck while it was readable); then it died.
     * The switch away from it must not hand east a range west may already have used.
     */
    @Test
    void idsASourceIssuedWhileReadableAreNeverHandedOutAgainAfterItDies() throws Exception {
        MetadataStoreExtended westStore = MetadataStoreExtended.create("memory:west", MetadataStoreConfig.builder()
                .build());
        java.util.concurrent.atomic.AtomicBoolean westAlive = new java.util.concurrent.atomic.AtomicBoolean(true);
        try (ClusterMetadataAccess flaky = new io.bcswitch.precheck.ServedClusterMetadata(DEAD_SOURCE_TIMEOUT_MILLIS, java.util.Map.of(EAST_URI, store)) {
            @Override
            public java.util.concurrent.CompletableFuture<io.bcswitch.precheck.ClusterMetadata> forLocation(
                    io.bcswitch.precheck.ClusterLocation location) {
                if (location.uri().equals(DEAD_URI)) {
                    return westAlive.get()
                            ? java.util.concurrent.CompletableFuture.completedFuture(
                                    new io.bcswitch.precheck.StoreClusterMetadata(new PulsarMetadataPort(westStore), "/ledgers", 1500))
                            : java.util.concurrent.CompletableFuture.failedFuture(
                                    new IllegalStateException("metadata service did not answer"));
                }
                return super.forLocation(location);
            }
        }) {
            for (String n : new String[] {"/ledgers/LAYOUT", "/ledgers/idgen-long/HOB-0000000005",
                    "/ledgers/available/w1:3181", "/ledgers/available/w2:3181"}) {
                westStore.put(n, (n.endsWith("LAYOUT")
                        ? "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1" : "")
                        .getBytes(StandardCharsets.UTF_8), Optional.empty()).join();
            }
            SwitchService svc = new SwitchService(registry, flaky, 2, Clock.systemUTC(),
                    () -> java.util.concurrent.CompletableFuture.completedFuture(java.util.List.of()));
            PrecheckReport whileReadable = svc.precheck("east").join();
            assertTrue(whileReadable.sourceReachable());
            assertEquals(6, whileReadable.proposedHighOrderBits(), "above west's high-order bits 5");

            westAlive.set(false);
            // the precheck recorded what it saw of west (its watermark), so the switch away needs no override and
            // starts east's range above it
            long hob = svc.switchTo("east").join().directive().firstLedgerId() >>> 32;
            assertTrue(hob > 5, "east's range starts at high-order bits " + hob + ", inside what west may have issued");
        } finally {
            westStore.close();
        }
    }
}
