package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.RelocationEpoch;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How a broker follows the relocation table (in-memory metadata store): one epoch behind it re-reads only
 * the ledgers the new epoch lists; an epoch that lists nothing known, or a broker further behind, re-reads
 * everything.
 */
class RelocationReloadTest {
    private static final long B_FIRST = 1L << 32;

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private BrokerSwitchAgent agent;
    /** What the agent told its listener, and on which thread. */
    private final java.util.List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0), -1).get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 0, B_FIRST), -1).get();
        agent = new BrokerSwitchAgent(registry, new SwitchConfig("/bcs", "", 50, true, 10),
                cluster -> CompletableFuture.completedFuture(null), o -> { },
                new BrokerPresence(registry, () -> "broker-1", Clock.systemUTC()), Clock.systemUTC(),
                io.bcswitch.concurrent.FastRetries.FACTORY, new BrokerSwitchAgent.Listener() {
                    @Override
                    public void deprecated(String cluster) {
                        told.add("deprecated " + cluster + " on " + Thread.currentThread().getName());
                    }

                    @Override
                    public void relocationsApplied(long epoch) {
                        told.add("relocations epoch " + epoch + " on " + Thread.currentThread().getName());
                    }
                });
        agent.start("zk:unused").get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        agent.close();
        store.close();
    }

    private void relocate(long id) throws Exception {
        registry.updateRelocations(List.of(id), (i, cur) -> Optional.of(new Relocation(Relocation.FORMAT_VERSION, id,
                "b", "a", "CURSOR", 1, 0))).get();
    }

    private void unrelocate(long id) throws Exception {
        registry.updateRelocations(List.of(id), (i, cur) -> Optional.empty()).get();
    }

    private void awaitEpoch(long epoch) throws Exception {
        TestWaits.until("relocation epoch " + epoch + " applied", () -> agent.ownership().relocationEpoch() >= epoch);
    }

    private String owner(long id) {
        return agent.ownership().owner(id).orElseThrow();
    }

    /**
     * What the broker does when told (publish its records, close the clients of a retired cluster, which blocks)
     * must never run on the metadata store's notification thread: blocking it stalls every registry read and
     * write of the broker, the switch agent's included.
     */
    @Test
    void listenersAreToldOnTheAgentsThreadNeverOnTheMetadataStores() throws Exception {
        java.util.List<String> threads = told;
        registry.write(registry.paths().cluster("a"), new io.bcswitch.registry.BookieClusterRecord(1, "a", "zk:a",
                io.bcswitch.registry.ClusterStatus.DEPRECATED, 1L), -1).get();
        relocate(10);
        assertEquals(1, registry.bumpRelocationEpoch(0, List.of(10L)).get());
        awaitEpoch(1);
        TestWaits.until("told that a is deprecated", () -> threads.stream().anyMatch(t -> t.startsWith(
                "deprecated a")));
        assertTrue(threads.stream().anyMatch(t -> t.startsWith("relocations epoch 1")), threads.toString());
        for (String t : threads) {
            assertTrue(t.endsWith(" on bcs-switch-agent"), t);
        }
    }

    /**
     * A DEPRECATED that lost to a switch to its cluster is undone (ConfirmedChange), but a broker may read it before:
     * the clients of the cluster the broker writes to are never closed for it.
     */
    @Test
    void theActiveClusterIsNeverToldDeprecated() throws Exception {
        for (String c : List.of("a", "b")) {
            registry.write(registry.paths().cluster(c), new io.bcswitch.registry.BookieClusterRecord(1, c, "zk:" + c,
                    io.bcswitch.registry.ClusterStatus.DEPRECATED, 1L), -1).get();
        }
        assertEquals(1, registry.bumpRelocationEpoch(0, List.of()).get());
        TestWaits.until("told that a is deprecated", () -> told.stream().anyMatch(t -> t.startsWith("deprecated a")));
        awaitEpoch(1);
        assertEquals("b", agent.ownership().activeCluster());
        assertTrue(told.stream().noneMatch(t -> t.startsWith("deprecated b")), told.toString());
    }

    @Test
    void oneEpochBehindReadsOnlyWhatTheEpochListsElseEverything() throws Exception {
        relocate(10);
        relocate(11);
        assertEquals(1, registry.bumpRelocationEpoch(0, List.of(10L, 11L)).get());
        awaitEpoch(1);
        assertEquals("b", owner(10));
        assertEquals("b", owner(11));

        // a relocation no epoch lists (a run that stopped before its bump) is not seen by a delta...
        relocate(12);
        relocate(13);
        assertEquals(2, registry.bumpRelocationEpoch(0, List.of(13L)).get());
        awaitEpoch(2);
        assertEquals("b", owner(13));
        assertEquals("a", owner(12), "only the listed ledger was re-read");
        // ...until an epoch lists it, or lists nothing (which every PROMOTE run starts with): see below
        registry.bumpRelocationEpoch(0, List.of(12L)).get();
        awaitEpoch(3);
        assertEquals("b", owner(12));

        // a removal listed by the epoch (rollback) sends reads back to the issuing cluster
        unrelocate(10);
        registry.bumpRelocationEpoch(0, List.of(10L)).get();
        awaitEpoch(4);
        assertEquals("a", owner(10));
        assertEquals("b", owner(11));

        // an epoch that does not list its changes (an older writer) means: re-read the whole table
        relocate(14);
        unrelocate(11);
        registry.update(registry.paths().relocationEpoch(), RelocationEpoch.class, cur -> Optional.of(
                new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, cur.orElseThrow().epoch() + 1, 0))).get();
        awaitEpoch(5);
        assertEquals("b", owner(14));
        assertEquals("a", owner(11));
        assertEquals(3, agent.ownership().relocations().size(), "12, 13, 14");
    }

    @Test
    void relocationsKeptOneNodePerLedgerByAnEarlierVersionAreStillRoutedAndReplacedWhenChanged() throws Exception {
        // the layout before shards: <root>/relocations/<ledgerId>, one node per ledger
        registry.write(registry.paths().legacyRelocation(20), new Relocation(Relocation.FORMAT_VERSION, 20, "b", "a",
                "SCHEMA", 1, 0), -1).get();
        registry.write(registry.paths().legacyRelocation(21), new Relocation(Relocation.FORMAT_VERSION, 21, "b", "a",
                "SCHEMA", 1, 0), -1).get();
        relocate(22);
        registry.bumpRelocationEpoch(0, null).get();
        awaitEpoch(1);
        assertEquals("b", owner(20));
        assertEquals("b", owner(21));
        assertEquals("b", owner(22));
        assertEquals(3, registry.listRelocations().get().size());

        // a change of a legacy entry moves it into its shard; removing one removes the legacy node too
        registry.updateRelocations(List.of(20L, 21L), (id, cur) -> id == 20
                ? cur.map(r -> new Relocation(r.formatVersion(), id, "c", "a", "SCHEMA", 2, 1, r.home(), 1L))
                : Optional.empty()).get();
        assertTrue(store.get(registry.paths().legacyRelocation(20)).get().isEmpty());
        assertTrue(store.get(registry.paths().legacyRelocation(21)).get().isEmpty());
        registry.bumpRelocationEpoch(0, List.of(20L, 21L)).get();
        awaitEpoch(2);
        assertEquals("c", owner(20));
        assertEquals("a", owner(21));
        var stored = registry.readRelocations(List.of(20L)).get().get(20L).orElseThrow();
        assertEquals("b", stored.previousHome());
        assertEquals("b", stored.beforeThisSwitch().orElseThrow().home(), "a rollback of epoch 2 goes back to b");
    }
}
