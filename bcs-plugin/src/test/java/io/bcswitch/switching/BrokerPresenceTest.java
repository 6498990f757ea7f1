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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The broker's registry records are written only under its real id, stamped at write time. */
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
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(store.getChildren("/bcs/brokers").get().equals(List.of("10.0.0.1:8080"))
                && store.getChildren("/bcs/relocation-applied").get().equals(List.of("10.0.0.1:8080")))) {
            assertTrue(System.nanoTime() < deadline, "both records are written under the real id");
            Thread.sleep(50);
        }
        List<BrokerCutoverRecord> records = registry.listBrokerProgress().get();
        assertEquals(1, records.size());
        assertEquals("10.0.0.1:8080", records.get(0).broker(), "stamped with the real id");
        assertEquals(java.util.Map.of("10.0.0.1:8080", 4L), registry.listRelocationApplied().get());
    }
}
