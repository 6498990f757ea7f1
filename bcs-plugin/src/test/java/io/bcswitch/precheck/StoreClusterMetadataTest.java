package io.bcswitch.precheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.util.StringUtils;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StoreClusterMetadataTest {
    private static final String ROOT = "/ledgers";
    private static final String HIERARCHICAL = "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1";

    private MetadataStoreExtended store;

    @BeforeEach
    void open() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
    }

    @AfterEach
    void close() throws Exception {
        store.close();
    }

    private void put(String path, String data) throws Exception {
        store.put(path, data.getBytes(StandardCharsets.UTF_8), Optional.empty()).get(5, TimeUnit.SECONDS);
    }

    private void put(String path) throws Exception {
        put(path, "");
    }

    private void ledger(String root, long id) throws Exception {
        put(root + StringUtils.getHybridHierarchicalLedgerPath(id), "metadata");
    }

    private ClusterFacts facts(String root) throws Exception {
        return new StoreClusterMetadata(new PulsarMetadataPort(store), root, 5000).facts().get(5, TimeUnit.SECONDS);
    }

    private void initialised(String root) throws Exception {
        put(root + "/LAYOUT", HIERARCHICAL);
        put(root + "/INSTANCEID", "abc");
        put(root + "/idgen/ID-0000000001");
    }

    @Test
    void layoutFactory() {
        assertEquals("org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory",
                StoreClusterMetadata.layoutFactory(HIERARCHICAL));
        assertEquals("org.apache.bookkeeper.meta.FlatLedgerManagerFactory",
                StoreClusterMetadata.layoutFactory("2\r\norg.apache.bookkeeper.meta.FlatLedgerManagerFactory:1\r\n"));
        assertEquals("org.example.Factory", StoreClusterMetadata.layoutFactory("org.example.Factory:3"));
        assertEquals("org.example.Factory", StoreClusterMetadata.layoutFactory("1\norg.example.Factory"));
        assertEquals("org.example.Factory", StoreClusterMetadata.layoutFactory("2\n  org.example.Factory  :1\n"));
        assertEquals("", StoreClusterMetadata.layoutFactory(""));
    }

    @Test
    void supportsLongIds() {
        assertTrue(StoreClusterMetadata.supportsLongIds("org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory"));
        assertTrue(StoreClusterMetadata.supportsLongIds(
                "org.apache.bookkeeper.meta.LongHierarchicalLedgerManagerFactory"));
        assertTrue(StoreClusterMetadata.supportsLongIds(
                "org.apache.pulsar.metadata.bookkeeper.PulsarLedgerManagerFactory"));
        assertTrue(StoreClusterMetadata.supportsLongIds("HierarchicalLedgerManagerFactory"));
        assertFalse(StoreClusterMetadata.supportsLongIds("org.apache.bookkeeper.meta.FlatLedgerManagerFactory"));
        assertFalse(StoreClusterMetadata.supportsLongIds(
                "org.apache.bookkeeper.meta.LegacyHierarchicalLedgerManagerFactory"));
        assertFalse(StoreClusterMetadata.supportsLongIds("org.apache.bookkeeper.meta.MSLedgerManagerFactory"));
        assertFalse(StoreClusterMetadata.supportsLongIds("org.example.MyHierarchicalLedgerManagerFactory"));
        assertFalse(StoreClusterMetadata.supportsLongIds(""));
    }

    @Test
    void ledgerPathsAreTheOnesBookKeeperUses() {
        // guards the fixtures below: long ids use the 3/4/4/4/L4 layout, short ids 2/4/L4
        assertEquals("/000/0000/0128/8490/L1893", StringUtils.getHybridHierarchicalLedgerPath((3L << 32) | 5));
        assertEquals("/00/0000/L0005", StringUtils.getHybridHierarchicalLedgerPath(5));
    }

    @Test
    void factsOfAnInitialisedCluster() throws Exception {
        initialised(ROOT);
        put(ROOT + "/available/bookie-1:3181");
        put(ROOT + "/available/bookie-2:3181");
        put(ROOT + "/available/bookie-3:3181");
        put(ROOT + "/available/readonly");
        put(ROOT + "/available/readonly/bookie-4:3181");
        put(ROOT + "/cookies/bookie-1:3181");
        put(ROOT + "/idgen-long/HOB-0000000001");
        put(ROOT + "/idgen-long/HOB-0000000003");
        put(ROOT + "/idgen-long/HOB-0000000002");
        put(ROOT + "/underreplication/ledgers");
        ledger(ROOT, 5);
        ledger(ROOT, 1_234_567);
        ledger(ROOT, (1L << 32) | 9);
        ledger(ROOT, (3L << 32) | 5);
        ledger(ROOT, (3L << 32) | 7);
        ledger(ROOT, (2L << 32) | 70_000);
        // another cluster's znodes next to this one are not counted
        put("/other/ledgers/available/bookie-9:3181");
        ledger("/other/ledgers", 9L << 32);

        ClusterFacts f = facts(ROOT);
        assertEquals(new ClusterFacts("org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory", true, 3L,
                (3L << 32) | 7, 3, 1, "abc"), f, "the instance id is the cluster's identity");
    }

    @Test
    void maxLedgerIdBacksOffFromEmptyBranches() throws Exception {
        initialised(ROOT);
        ledger(ROOT, (3L << 32) | 5);
        ledger(ROOT, (2L << 32) | 1);
        // larger branches with nothing at the bottom, at every level
        put(ROOT + "/999");                      // empty top-level branch
        put(ROOT + "/000/0001");                 // empty second level
        put(ROOT + "/000/0000/0900");            // empty third level
        put(ROOT + "/000/0000/0128/9999");       // empty fourth level (no L nodes)
        put(ROOT + "/000/0000/0128/8490/readme"); // not a ledger node
        put(ROOT + "/000/0000/0128/8490/L12");   // wrong width
        put(ROOT + "/000/0000/0128/84x0/L0001"); // non-numeric level
        assertEquals((3L << 32) | 5, facts(ROOT).maxLedgerId());
    }

    @Test
    void ledgersInTheProbeBandAreToldApartFromTheLargestIdBelowIt() throws Exception {
        initialised(ROOT);
        long below = io.bcswitch.registry.IdSpace.PROBE_FIRST_ID - 1;
        ledger(ROOT, 77);
        ledger(ROOT, (5L << 32) | 9);
        ledger(ROOT, Long.MAX_VALUE - 5);
        ledger(ROOT, io.bcswitch.registry.IdSpace.PROBE_FIRST_ID);
        ClusterFacts f = facts(ROOT);
        assertEquals((5L << 32) | 9, f.maxLedgerId(), "the probe band counts for no range");
        assertEquals(Long.MAX_VALUE - 5, f.maxProbeBandLedgerId());

        // the walk below the band backs off from branches that share the band's prefix but are all in it
        ledger(ROOT, below);
        ledger(ROOT, below - (1L << 20));
        f = facts(ROOT);
        assertEquals(below, f.maxLedgerId());
        assertEquals(Long.MAX_VALUE - 5, f.maxProbeBandLedgerId());

        StoreClusterMetadata m = new StoreClusterMetadata(new PulsarMetadataPort(store), ROOT, 5000);
        assertEquals(Long.MAX_VALUE - 5, m.maxLedgerId().get(5, TimeUnit.SECONDS), "everything, probes included");
    }

    @Test
    void aClusterWithoutProbesSaysSo() throws Exception {
        initialised(ROOT);
        ledger(ROOT, (7L << 32) | 3);
        assertEquals(-1L, facts(ROOT).maxProbeBandLedgerId());
        assertEquals((7L << 32) | 3, facts(ROOT).maxLedgerId());
    }

    @Test
    void shortLayoutOnly() throws Exception {
        initialised(ROOT);
        ledger(ROOT, 5);
        ledger(ROOT, 1_234_567);
        ledger(ROOT, 999);
        put(ROOT + "/99");          // empty short branch
        put(ROOT + "/00/9999");     // empty leaf level
        put(ROOT + "/12345/0000/L0001"); // not a ledger branch (width 5)
        assertEquals(1_234_567L, facts(ROOT).maxLedgerId());
        assertEquals(0L, facts(ROOT).maxHighOrderBits());
    }

    @Test
    void emptyCluster() throws Exception {
        initialised(ROOT);
        ClusterFacts f = facts(ROOT);
        assertEquals(-1L, f.maxLedgerId());
        assertEquals(0L, f.maxHighOrderBits());
        assertEquals(0, f.writableBookies());
        assertEquals(0, f.readOnlyBookies());
        assertTrue(f.supports63BitIds());
    }

    @Test
    void chrootedRootAndFlatLayout() throws Exception {
        String root = "/bk/west/ledgers";
        put(root + "/LAYOUT", "2\norg.apache.bookkeeper.meta.FlatLedgerManagerFactory:1");
        put(root + "/available/b1:3181");
        put(ROOT + "/LAYOUT", HIERARCHICAL);
        ClusterFacts f = facts(root);
        assertEquals("org.apache.bookkeeper.meta.FlatLedgerManagerFactory", f.layoutManagerFactory());
        assertFalse(f.supports63BitIds());
        assertEquals(1, f.writableBookies());
    }

    @Test
    void uninitialisedClusterFailsWithAnActionableMessage() {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> new StoreClusterMetadata(new PulsarMetadataPort(store), ROOT, 5000).facts().get(5, TimeUnit.SECONDS));
        Throwable cause = e.getCause();
        assertInstanceOf(IllegalStateException.class, cause);
        assertTrue(cause.getMessage().contains("/ledgers/LAYOUT"), cause.getMessage());
        assertTrue(cause.getMessage().contains("not initialised"), cause.getMessage());
    }

    @Test
    void factsAreBoundedByTheTimeout() {
        MetadataStore silent = (MetadataStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {MetadataStore.class}, (proxy, method, args) -> {
                    if (CompletableFuture.class.isAssignableFrom(method.getReturnType())) {
                        return new CompletableFuture<>(); // never answers
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        long start = System.nanoTime();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> new StoreClusterMetadata(new PulsarMetadataPort(silent), ROOT, 200).facts().get(5, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, e.getCause());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3));
        ExecutionException e2 = assertThrows(ExecutionException.class,
                () -> new StoreClusterMetadata(new PulsarMetadataPort(silent), ROOT, 200).advanceHighOrderBits(2).get(5, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, e2.getCause());
    }

    @Test
    void advanceHighOrderBitsCreatesTheHobNodeAndIsIdempotent() throws Exception {
        initialised(ROOT);
        StoreClusterMetadata m = new StoreClusterMetadata(new PulsarMetadataPort(store), ROOT, 5000);
        m.advanceHighOrderBits(4).get(5, TimeUnit.SECONDS);
        assertEquals(List.of("HOB-0000000004"), store.getChildren(ROOT + "/idgen-long").get());
        assertTrue(store.exists(ROOT + "/idgen-long").get());
        long version = store.get(ROOT + "/idgen-long/HOB-0000000004").get().orElseThrow().getStat().getVersion();

        m.advanceHighOrderBits(4).get(5, TimeUnit.SECONDS); // again: no error, no change
        assertEquals(List.of("HOB-0000000004"), store.getChildren(ROOT + "/idgen-long").get());
        assertEquals(version,
                store.get(ROOT + "/idgen-long/HOB-0000000004").get().orElseThrow().getStat().getVersion());
        assertEquals(4L, facts(ROOT).maxHighOrderBits());

        m.advanceHighOrderBits(12).get(5, TimeUnit.SECONDS);
        assertEquals(List.of("HOB-0000000004", "HOB-0000000012"), store.getChildren(ROOT + "/idgen-long").get());
        assertEquals(12L, facts(ROOT).maxHighOrderBits());

        m.advanceHighOrderBits(Integer.MAX_VALUE - 1).get(5, TimeUnit.SECONDS);
        assertTrue(store.exists(ROOT + "/idgen-long/HOB-2147483646").get(), "the last range there is");
    }

    @Test
    void advanceHighOrderBitsWhenTheGeneratorNodeAlreadyExists() throws Exception {
        initialised(ROOT);
        put(ROOT + "/idgen-long");
        put(ROOT + "/idgen-long/HOB-0000000001");
        new StoreClusterMetadata(new PulsarMetadataPort(store), ROOT, 5000).advanceHighOrderBits(2).get(5, TimeUnit.SECONDS);
        assertEquals(List.of("HOB-0000000001", "HOB-0000000002"), store.getChildren(ROOT + "/idgen-long").get());
        assertEquals(2L, facts(ROOT).maxHighOrderBits());
    }

    @Test
    void advanceHighOrderBitsRejectsOutOfRangeValues() throws Exception {
        StoreClusterMetadata m = new StoreClusterMetadata(new PulsarMetadataPort(store), ROOT, 5000);
        // the last high-order value is the probe band's: no range starts there
        for (long bad : new long[] {0, -1, Integer.MAX_VALUE, Integer.MAX_VALUE + 1L, Long.MAX_VALUE}) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> m.advanceHighOrderBits(bad).get(5, TimeUnit.SECONDS), String.valueOf(bad));
            assertInstanceOf(IllegalArgumentException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains(String.valueOf(bad)), e.getCause().getMessage());
        }
        assertFalse(store.exists(ROOT + "/idgen-long").get());
    }

    @Test
    void emptyLongTreeFallsBackToShortLedgers() throws Exception {
        initialised(ROOT);
        ledger(ROOT, 1_234_567);
        put(ROOT + "/000/0000"); // long tree left behind, no ledger in it
        assertEquals(1_234_567L, facts(ROOT).maxLedgerId());
    }
}
