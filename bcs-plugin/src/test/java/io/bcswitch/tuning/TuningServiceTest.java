package io.bcswitch.tuning;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.TuningOverrides;
import java.time.Clock;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Two brokers on one metadata store: a change made on one is applied by both; a bad one changes nothing. */
class TuningServiceTest {
    private static final LiveTuning.Values CONF = new LiveTuning.Values(1_048_576, 4, 150);
    private MetadataStoreExtended store;
    private RegistryStore registry;
    private ScheduledExecutorService scheduler;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        scheduler = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterEach
    void tearDown() throws Exception {
        scheduler.shutdownNow();
        store.close();
    }

    private TuningService broker(LiveTuning live) throws Exception {
        TuningService s = new TuningService(registry, live, scheduler, Clock.systemUTC(), 3600);
        s.start().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        return s;
    }

    @Test
    void aChangeOnOneBrokerIsAppliedByEveryBrokerAndAResetGoesBackToBrokerConf() throws Exception {
        LiveTuning one = new LiveTuning(CONF);
        LiveTuning two = new LiveTuning(new LiveTuning.Values(2_000_000, 8, 50)); // its own broker.conf
        try (TuningService s1 = broker(one); TuningService s2 = broker(two)) {
            TuningService.View v = s1.set(new TuningService.Change(5_000_000L, 16, null, Set.of()))
                    .get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(new LiveTuning.Values(5_000_000, 16, 150), v.effective());
            assertEquals(CONF, v.brokerConf());
            awaitEffective(two, new LiveTuning.Values(5_000_000, 16, 50));

            s2.set(new TuningService.Change(null, null, 500.0, Set.of(TuningService.MIGRATION_CONCURRENCY)))
                    .get(TestWaits.SECONDS, TimeUnit.SECONDS);
            awaitEffective(one, new LiveTuning.Values(5_000_000, 4, 500));
            awaitEffective(two, new LiveTuning.Values(5_000_000, 8, 500));
            TuningOverrides stored = registry.readTuning().get().value();
            assertEquals(5_000_000L, stored.migrationBytesPerSecond());
            assertNull(stored.migrationConcurrency(), "reset: broker.conf's value");
            assertEquals(500.0, stored.cutoverTopicsPerSecond());
        }
        // a broker started later applies what is stored from the start
        LiveTuning three = new LiveTuning(CONF);
        try (TuningService s3 = broker(three)) {
            assertEquals(new LiveTuning.Values(5_000_000, 4, 500), three.effective());
        }
    }

    @Test
    void aBadChangeIsRefusedAndChangesNothing() throws Exception {
        LiveTuning one = new LiveTuning(CONF);
        try (TuningService s = broker(one)) {
            s.set(new TuningService.Change(100L, null, null, Set.of())).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            byte[] before = store.get(registry.paths().tuning()).get().orElseThrow().getValue();
            for (TuningService.Change bad : new TuningService.Change[] {
                    new TuningService.Change(null, null, null, Set.of()),
                    new TuningService.Change(-1L, null, null, Set.of()),
                    new TuningService.Change(null, 0, null, Set.of()),
                    new TuningService.Change(null, 1025, null, Set.of()),
                    new TuningService.Change(null, null, 0.0, Set.of()),
                    new TuningService.Change(null, null, Double.NaN, Set.of()),
                    new TuningService.Change(null, null, 100_001.0, Set.of()),
                    new TuningService.Change(null, null, null, Set.of("nope")),
                    new TuningService.Change(5L, null, null, Set.of(TuningService.MIGRATION_BYTES_PER_SECOND))}) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> s.set(bad).get(TestWaits.SECONDS, TimeUnit.SECONDS), String.valueOf(bad));
                assertTrue(e.getCause() instanceof RegistryException r && r.kind() == RegistryException.Kind.INVALID,
                        String.valueOf(e.getCause()));
                assertArrayEquals(before, store.get(registry.paths().tuning()).get().orElseThrow().getValue(),
                        "refused: " + bad);
            }
            assertEquals(new LiveTuning.Values(100, 4, 150), one.effective());
        }
    }

    @Test
    void storedValuesThatCannotBeReadLeaveBrokerConfsAndTheBrokerStarts() throws Exception {
        store.put(registry.paths().tuning(), "{not json".getBytes(), Optional.of(-1L)).get();
        LiveTuning one = new LiveTuning(CONF);
        try (TuningService s = broker(one)) {
            assertEquals(CONF, one.effective());
        }
    }

    @Test
    void aStoredValueOutOfRangeIsNotAppliedAndTheOthersAre() throws Exception {
        // written by hand, or by a later version with other bounds
        store.put(registry.paths().tuning(), ("{\"formatVersion\":1,\"migrationConcurrency\":8,"
                + "\"cutoverTopicsPerSecond\":0.0,\"migrationBytesPerSecond\":-5}").getBytes(), Optional.of(-1L)).get();
        LiveTuning one = new LiveTuning(CONF);
        try (TuningService s = broker(one)) {
            assertEquals(new LiveTuning.Values(1_048_576, 8, 150), one.effective());
        }
    }

    private static void awaitEffective(LiveTuning t, LiveTuning.Values want) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!t.effective().equals(want) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(want, t.effective());
    }
}
