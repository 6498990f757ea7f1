package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.InFlightLimit;
import io.bcswitch.inventory.LedgerReference;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ManagedLedgerInfoCallback;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.mledger.ManagedLedgerInfo;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The inventory over a real (in-memory) metadata store, with the managed-ledger factory's info read scripted: what a
 * "not found" from that read means. Pulsar answers "not found" both when the managed ledger is gone and when one of
 * its cursors is deleted while the cursors are read; only the first may leave its ledgers out.
 */
class MetadataLedgerInventoryTest {
    private static final String ML = "t/ns/persistent/topic";

    private MetadataStoreExtended store;
    /** what each info read answers, in turn (true: the metadata, false: "not found"); then the metadata */
    private final List<Boolean> answers = new ArrayList<>();
    private final AtomicInteger reads = new AtomicInteger();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        store.put("/managed-ledgers/" + ML, new byte[] {1}, Optional.empty()).get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        store.close();
    }

    private MetadataLedgerInventory inventory() {
        ManagedLedgerFactory factory = (ManagedLedgerFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ManagedLedgerFactory.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("asyncGetManagedLedgerInfo")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    ManagedLedgerInfoCallback cb = (ManagedLedgerInfoCallback) args[1];
                    int n = reads.getAndIncrement();
                    if (n < answers.size() && !answers.get(n)) {
                        cb.getInfoFailed(new ManagedLedgerException.MetadataNotFoundException(
                                "/managed-ledgers/" + ML + "/sub-1 not found"), null);
                    } else {
                        ManagedLedgerInfo info = new ManagedLedgerInfo();
                        ManagedLedgerInfo.LedgerInfo l = new ManagedLedgerInfo.LedgerInfo();
                        l.ledgerId = 5;
                        info.ledgers = List.of(l);
                        cb.getInfoComplete(info, null);
                    }
                    return null;
                });
        return new MetadataLedgerInventory(store, () -> factory, new InFlightLimit(4));
    }

    /**
     * Of a cursor's mark-delete properties only the compacted ledger names a ledger: deduplication keeps each
     * producer's last sequence id there and a replicated subscription a flag (1). Read as ledger ids they pinned the
     * cluster whose id range holds them, for good: unregister of a drained cluster was refused ("ledger 999 of
     * .../pulsar.dedup#p-traffic-0") while the drain report was empty.
     */
    @Test
    void onlyTheCompactedLedgerPropertyOfACursorIsALedger() {
        ManagedLedgerInfo info = new ManagedLedgerInfo();
        info.cursors = new java.util.TreeMap<>();
        info.cursors.put("pulsar.dedup", cursor(12, java.util.Map.of("p-traffic-0", 999L, "p-other", 5L)));
        info.cursors.put("sub", cursor(13, java.util.Map.of("pulsar.replicated.subscription", 1L)));
        info.cursors.put("__compaction", cursor(14, java.util.Map.of("CompactedTopicLedger", 77L)));
        List<LedgerReference> refs = MetadataLedgerInventory.toReferences(ML, info);
        assertEquals(List.of("12 CURSOR", "13 CURSOR", "14 CURSOR", "77 COMPACTION"),
                refs.stream().map(r -> r.ledgerId() + " " + r.kind()).sorted().toList(), refs.toString());
    }

    private static ManagedLedgerInfo.CursorInfo cursor(long ledgerId, java.util.Map<String, Long> properties) {
        ManagedLedgerInfo.CursorInfo c = new ManagedLedgerInfo.CursorInfo();
        c.cursorsLedgerId = ledgerId;
        c.properties = properties;
        return c;
    }

    @Test
    void aCursorDeletedWhileTheManagedLedgerIsReadLeavesNoLedgerOfItOut() throws Exception {
        answers.add(false); // a subscription removed between listing the cursors and reading one of them
        List<LedgerReference> refs = inventory().references().get(10, TimeUnit.SECONDS);
        assertEquals(List.of(5L), refs.stream().map(LedgerReference::ledgerId).toList(),
                "the managed ledger's data ledger is still referenced");
        assertEquals(2, reads.get());
    }

    @Test
    void aManagedLedgerWhoseNodeIsGoneIsTakenAsDeleted() throws Exception {
        // the walk finds the node; by the time the info read answers "not found", the node is gone
        ManagedLedgerFactory deleting = (ManagedLedgerFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ManagedLedgerFactory.class}, (proxy, method, args) -> {
                    store.delete("/managed-ledgers/" + ML, Optional.empty()).join();
                    ((ManagedLedgerInfoCallback) args[1]).getInfoFailed(
                            new ManagedLedgerException.MetadataNotFoundException("gone"), null);
                    return null;
                });
        List<LedgerReference> refs = new MetadataLedgerInventory(store, () -> deleting, new InFlightLimit(4))
                .references().get(10, TimeUnit.SECONDS);
        assertTrue(refs.isEmpty(), refs.toString());
    }

    @Test
    void aManagedLedgerThatKeepsReadingAsNotFoundWhileItsNodeExistsFailsTheReading() {
        for (int i = 0; i < MetadataLedgerInventory.NOT_FOUND_ATTEMPTS; i++) {
            answers.add(false);
        }
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> inventory().references().get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("exists but its metadata read"), e.toString());
        assertEquals(MetadataLedgerInventory.NOT_FOUND_ATTEMPTS, reads.get());
    }

    /**
     * Which nodes are read as managed ledgers: every child of a v2 namespace's {@code persistent} node (one whose
     * data is still empty too: its cursors may hold ledgers), asked of the factory without a read of its own; in a
     * v1 namespace, one named {@code persistent}, or one whose policies are gone, each node that holds data. Never a
     * cursor, never an intermediate node.
     */
    @Test
    void managedLedgersAreFoundInEveryNamespaceLayout() throws Exception {
        put("/admin/policies/t/ns", new byte[] {'{', '}'}); // v2 namespace t/ns (ML is t/ns/persistent/topic)
        put("/managed-ledgers/t/ns/persistent/new", new byte[0]); // created, no ledger yet
        put("/managed-ledgers/t/ns/persistent/new/sub", new byte[] {2});
        put("/admin/policies/t/c1/old", new byte[] {'{', '}'}); // v1 namespace t/c1/old: t/c1 holds no policies
        put("/managed-ledgers/t/c1/old/persistent/v1topic", new byte[] {1});
        put("/managed-ledgers/t/c1/old/persistent/v1topic/sub", new byte[] {2});
        put("/admin/policies/t/c1/persistent", new byte[] {'{', '}'}); // v1 namespace named "persistent"
        put("/managed-ledgers/t/c1/persistent/persistent/odd", new byte[] {1});
        put("/managed-ledgers/t/gone/persistent/left", new byte[] {1}); // namespace deleted, its ML left
        List<String> asked = java.util.Collections.synchronizedList(new ArrayList<>());
        ManagedLedgerFactory factory = (ManagedLedgerFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ManagedLedgerFactory.class}, (proxy, method, args) -> {
                    asked.add((String) args[0]);
                    ManagedLedgerInfo info = new ManagedLedgerInfo();
                    ManagedLedgerInfo.LedgerInfo l = new ManagedLedgerInfo.LedgerInfo();
                    l.ledgerId = asked.size();
                    info.ledgers = List.of(l);
                    ((ManagedLedgerInfoCallback) args[1]).getInfoComplete(info, null);
                    return null;
                });
        List<LedgerReference> refs = new MetadataLedgerInventory(store, () -> factory, new InFlightLimit(4))
                .references().get(10, TimeUnit.SECONDS);
        assertEquals(List.of("t/c1/old/persistent/v1topic", "t/c1/persistent/persistent/odd",
                "t/gone/persistent/left", "t/ns/persistent/new", ML), asked.stream().sorted().toList());
        assertEquals(5, refs.size(), refs.toString());
    }

    private void put(String path, byte[] value) throws Exception {
        store.put(path, value, Optional.empty()).get(10, TimeUnit.SECONDS);
    }
}
