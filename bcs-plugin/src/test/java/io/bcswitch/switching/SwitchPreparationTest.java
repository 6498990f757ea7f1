package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchPreparation;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A switch is announced before it is committed, so brokers build their clients of the target outside the first
 * busy moments after the commit: the commit waits for every live broker to be ready, but never longer than the
 * configured bound, and a broker uses the clients prepared only for the switch they were prepared for.
 */
class SwitchPreparationTest {
    private static final String WEST_URI = "zk+hierarchical://127.0.0.1:1/ledgers";
    private static final String EAST_URI = "metadata-store:zk:127.0.0.1:2";
    /** How long a precheck waits for the dead source's metadata service: nothing listens there, so any bound does. */
    private static final long DEAD_SOURCE_TIMEOUT_MILLIS = 250;
    private static final long EAST_FIRST_ID = 2L << 32;

    /** What the agent asked of its clients, in order. */
    private static final class RecordingActivation implements ClientActivation {
        final List<String> calls = new CopyOnWriteArrayList<>();
        volatile CompletableFuture<Void> preparation = new CompletableFuture<>();

        @Override
        public CompletableFuture<Void> activate(String cluster) {
            calls.add("activate " + cluster);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> activate(String cluster, long firstLedgerId) {
            calls.add("activate " + cluster + " " + firstLedgerId);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> prepare(String cluster, long firstLedgerId) {
            calls.add("prepare " + cluster + " " + firstLedgerId);
            return preparation;
        }
    }

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private ClusterMetadataAccess access;
    private BrokerSwitchAgent agent;
    private final RecordingActivation activation = new RecordingActivation();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/admin/bookie-clusters"));
        WestAndEast.seed(store, registry, WEST_URI, EAST_URI);
        registry.raiseWatermark("west", 0, 1000, 1, "broker start").join();
        access = new io.bcswitch.precheck.ServedClusterMetadata(DEAD_SOURCE_TIMEOUT_MILLIS, java.util.Map.of(EAST_URI, store));

        BrokerPresence presence = new BrokerPresence(registry, () -> "broker-1", Clock.systemUTC());
        agent = new BrokerSwitchAgent(registry, new SwitchConfig("/admin/bookie-clusters", "", 50, true, 10),
                activation, o -> { }, presence, Clock.systemUTC(),
                io.bcswitch.concurrent.FastRetries.FACTORY);
        agent.start(WEST_URI).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        presence.cutover(new BrokerCutoverRecord(1, "broker-1", 0, "west", 0, 0, 0, 1, 2));
        await(() -> registry.listBrokerProgress().join().size() == 1, "the broker's record");
    }

    @AfterEach
    void tearDown() throws Exception {
        agent.close();
        access.close();
        store.close();
    }

    private SwitchService service(long prepareTimeoutMillis) {
        SwitchService s = new SwitchService(registry, access, 2, Clock.systemUTC(),
                () -> CompletableFuture.completedFuture(List.of()), io.bcswitch.precheck.ClusterProbe.NONE,
                prepareTimeoutMillis);
        return s;
    }

    private static void await(BooleanSupplier condition, String what) throws Exception {
        TestWaits.until(what, condition::getAsBoolean);
    }

    private long preparedOnRecord() {
        return registry.listBrokerProgress().join().get(0).preparedFirstLedgerId();
    }

    @Test
    void theSwitchIsCommittedOnlyOnceEveryLiveBrokerHasItsClientsReady() throws Exception {
        CompletableFuture<SwitchResult> switching = service(60_000).switchTo("east");

        await(() -> activation.calls.contains("prepare east " + EAST_FIRST_ID), "the broker preparing east");
        SwitchPreparation announced = registry.read(registry.paths().switchPrepare(), SwitchPreparation.class).join()
                .value();
        assertEquals(new SwitchPreparation(1, "east", 1, EAST_FIRST_ID, announced.ts()), announced);
        Thread.sleep(300);
        assertFalse(switching.isDone(), "the switch waits for the broker");
        assertFalse(registry.readDirective().join().present(), "nothing is committed while a broker prepares");

        activation.preparation.complete(null);
        SwitchResult r = switching.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(EAST_FIRST_ID, r.directive().firstLedgerId());
        assertEquals(EAST_FIRST_ID, preparedOnRecord(), "the broker said it was ready for exactly this range");
        await(() -> agent.ownership().activeEpoch() == 1, "epoch 1 active");
        assertEquals(List.of("activate west", "prepare east " + EAST_FIRST_ID, "activate east " + EAST_FIRST_ID),
                activation.calls, "the switch is applied with the range it was prepared for");
    }

    @Test
    void aBrokerThatNeverGetsReadyHoldsTheSwitchOnlyUntilTheBound() throws Exception {
        // the preparation never completes (a hung client build): the switch still commits, and the broker applies it
        SwitchResult r = service(400).switchTo("east").get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals("east", r.directive().target());
        assertTrue(activation.calls.contains("prepare east " + EAST_FIRST_ID), activation.calls.toString());
        await(() -> agent.ownership().activeEpoch() == 1, "epoch 1 active although its preparation never finished");
        assertEquals(0, preparedOnRecord());
    }

    @Test
    void withoutABoundNothingIsAnnounced() throws Exception {
        service(0).switchTo("east").get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        await(() -> agent.ownership().activeEpoch() == 1, "epoch 1 active");
        assertFalse(registry.read(registry.paths().switchPrepare(), SwitchPreparation.class).join().present());
        assertEquals(List.of("activate west", "activate east " + EAST_FIRST_ID), activation.calls);
    }

    @Test
    void anAnnouncementOfASwitchToARetiredClusterIsIgnored() throws Exception {
        var east = registry.read(registry.paths().cluster("east"), io.bcswitch.registry.BookieClusterRecord.class)
                .join();
        registry.write(registry.paths().cluster("east"), east.value().withStatus(
                io.bcswitch.registry.ClusterStatus.DEPRECATED), east.version()).join();
        registry.bumpRelocationEpoch(0, List.of()).join();
        await(() -> agent.ownership().retired().contains("east"), "east retired");
        // an announcement no precheck let through (a switch racing east's close-client), or a stale one
        registry.update(registry.paths().switchPrepare(), SwitchPreparation.class,
                cur -> Optional.of(new SwitchPreparation(1, "east", 1, 9L << 32, 5L))).join();
        Thread.sleep(300);
        assertFalse(activation.calls.stream().anyMatch(c -> c.startsWith("prepare")), activation.calls.toString());
    }

    @Test
    void anAnnouncementOfASwitchAlreadyAppliedIsIgnored() throws Exception {
        service(0).switchTo("east").get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        await(() -> agent.ownership().activeEpoch() == 1, "epoch 1 active");
        // a late or replayed announcement of epoch 1 (e.g. written by a switch that lost the compare-and-set)
        registry.update(registry.paths().switchPrepare(), SwitchPreparation.class,
                cur -> Optional.of(new SwitchPreparation(1, "west", 1, 9L << 32, 5L))).join();
        Thread.sleep(300);
        assertFalse(activation.calls.stream().anyMatch(c -> c.startsWith("prepare")), activation.calls.toString());
    }
}
