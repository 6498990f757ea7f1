package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The broker's registry records: written only under its real id, stamped at write time, only when something changed,
 * coalesced while a write is in flight, and written again when they are not this session's.
 */
class BrokerPresenceTest {
    private MetadataStoreExtended store;
    private RegistryStore registry;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
    }

    @AfterEach
    void tearDown() throws Exception {
        store.close();
    }

    @Test
    void nothingIsWrittenBeforeTheBrokerHasItsIdAndThenEverythingUnderIt() throws Exception {
        AtomicReference<String> id = new AtomicReference<>();
        BrokerPresence presence = new BrokerPresence(registry, id::get, Clock.systemUTC());
        // the cutover ran before the id was known: its record names a stand-in
        presence.cutover(new BrokerCutoverRecord(1, "broker-stand-in", 1, "a", 0, 0, 0, 1, 2));
        presence.relocationApplied(4);
        presence.ensurePresent().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        Thread.sleep(200);
        assertTrue(store.getChildren("/bcs/brokers").get().isEmpty(), "no record under a stand-in id");
        assertTrue(store.getChildren("/bcs/relocation-applied").get().isEmpty());

        id.set("10.0.0.1:8080");
        presence.ensurePresent().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        TestWaits.until("both records are written under the real id", () -> store.getChildren("/bcs/brokers").get()
                .equals(List.of("10.0.0.1:8080"))
                && store.getChildren("/bcs/relocation-applied").get().equals(List.of("10.0.0.1:8080")));
        List<BrokerCutoverRecord> records = registry.listBrokerProgress().get();
        assertEquals(1, records.size());
        assertEquals("10.0.0.1:8080", records.get(0).broker(), "stamped with the real id");
        assertEquals(java.util.Map.of("10.0.0.1:8080", 4L), registry.listRelocationApplied().get());
    }

    /** A presence on a scripted store, with its broker id known. */
    private static final class Scripted implements AutoCloseable {
        final io.bcswitch.registry.ScriptedPort port = new io.bcswitch.registry.ScriptedPort();
        final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
        final BrokerPresence presence = new BrokerPresence(registry, () -> "b-1", Clock.systemUTC());
        final String record = registry.paths().broker("b-1");
        final String applied = registry.paths().relocationApplied("b-1");

        long version(String path) throws Exception {
            return port.get(path).get().map(n -> n.version()).orElse(-1L);
        }

        BrokerCutoverRecord written() throws Exception {
            return registry.listBrokerProgress().get().get(0);
        }

        void awaitVersion(String path, long version) throws Exception {
            TestWaits.until(path + " at version " + version, () -> version(path) == version);
        }

        @Override
        public void close() {
            port.close();
        }
    }

    private static BrokerCutoverRecord progress(long epoch) {
        return new BrokerCutoverRecord(1, "b-1", epoch, "a", 3, 1, 0, 1, 0);
    }

    @Test
    void aRecordIsWrittenOnlyWhenSomethingInItChanged() throws Exception {
        try (Scripted s = new Scripted()) {
            // nothing to write yet (no progress): a change made now is in the first record written
            s.presence.activation("cannot activate bookie-cluster=b", 1);
            assertEquals(-1, s.version(s.record));
            s.presence.cutover(progress(1));
            TestWaits.until("the first record", () -> s.version(s.record) >= 0);
            long v = s.version(s.record);
            assertEquals("cannot activate bookie-cluster=b", s.written().activationError());
            assertEquals(1, s.written().activationAttempts());

            s.presence.activation("cannot activate bookie-cluster=b", 1);
            s.presence.handles(Map.of(), Map.of());
            s.presence.prepared(0);
            Thread.sleep(100);
            assertEquals(v, s.version(s.record), "nothing changed, nothing written");

            s.presence.activation("cannot activate bookie-cluster=b", 2);
            s.awaitVersion(s.record, v + 1);
            assertEquals(2, s.written().activationAttempts());
            s.presence.activation(null, 0);
            s.awaitVersion(s.record, v + 2);
            assertEquals(null, s.written().activationError());

            s.presence.handles(Map.of("a", 2), Map.of("a", List.of(7L, 8L)));
            s.awaitVersion(s.record, v + 3);
            assertEquals(Map.of("a", 2), s.written().openHandles());
            assertEquals(Map.of("a", List.of(7L, 8L)), s.written().openLedgers());
            s.presence.handles(Map.of("a", 2), Map.of("a", List.of(7L)));
            s.awaitVersion(s.record, v + 4);
            assertEquals(Map.of("a", List.of(7L)), s.written().openLedgers());

            s.presence.prepared(1L << 32);
            s.awaitVersion(s.record, v + 5);
            assertEquals(1L << 32, s.written().preparedFirstLedgerId());
        }
    }

    @Test
    void changesMadeWhileAWriteIsInFlightAreWrittenRightAfterIt() throws Exception {
        try (Scripted s = new Scripted()) {
            s.port.hold(p -> p.equals(s.record));
            s.presence.cutover(progress(1));
            s.presence.cutover(progress(2));
            s.presence.handles(Map.of("a", 1), Map.of());
            s.port.release();
            TestWaits.until("the latest record", () -> s.version(s.record) >= 0 && s.written().appliedEpoch() == 2
                    && s.written().openHandles().equals(Map.of("a", 1)));
        }
    }

    @Test
    void theAppliedRelocationEpochIsPublishedFromZeroOnAndRecordsAreRewrittenOnlyWhenNotThisSessions()
            throws Exception {
        try (Scripted s = new Scripted()) {
            // before any progress record: the epoch alone
            s.presence.relocationApplied(0);
            TestWaits.until("epoch 0 published", () -> s.registry.listRelocationApplied().get()
                    .equals(Map.of("b-1", 0L)));
            assertEquals(-1, s.version(s.record));

            s.presence.cutover(progress(1));
            s.presence.relocationApplied(3);
            TestWaits.until("epoch 3 published", () -> s.registry.listRelocationApplied().get()
                    .equals(Map.of("b-1", 3L)));
            TestWaits.until("the record", () -> s.version(s.record) >= 0);
            long record = s.version(s.record);
            long applied = s.version(s.applied);
            s.presence.ensurePresent().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(record, s.version(s.record), "this session's record is not rewritten");
            assertEquals(applied, s.version(s.applied));

            s.port.memory().expireSession().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            TestWaits.until("both gone", () -> s.version(s.record) < 0 && s.version(s.applied) < 0);
            s.presence.ensurePresent().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(1, s.written().appliedEpoch());
            assertEquals(Map.of("b-1", 3L), s.registry.listRelocationApplied().get());

            s.presence.close();
            s.presence.relocationApplied(4);
            s.presence.cutover(progress(2));
            Thread.sleep(100);
            assertEquals(Map.of("b-1", 3L), s.registry.listRelocationApplied().get(), "closed: nothing written");
            assertEquals(1, s.written().appliedEpoch());
        }
    }

    /** Whoever sees the epoch applied and then reads the record sees every handle opened before (cleanup's rule). */
    @Test
    void theRecordIsWrittenBeforeTheEpochItAppliedIsPublished() throws Exception {
        try (Scripted s = new Scripted()) {
            s.presence.cutover(progress(1));
            TestWaits.until("the record", () -> s.version(s.record) >= 0);
            s.port.hold(p -> p.equals(s.record));
            s.presence.relocationApplied(5);
            s.port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            Thread.sleep(100);
            assertEquals(Map.of(), s.registry.listRelocationApplied().get(), "not before the record is written");
            s.port.release();
            TestWaits.until("epoch 5 published", () -> s.registry.listRelocationApplied().get()
                    .equals(Map.of("b-1", 5L)));
        }
    }
}
