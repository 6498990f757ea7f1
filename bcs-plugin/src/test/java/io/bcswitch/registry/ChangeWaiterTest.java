package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The next-change hint PROMOTE waits on (in-memory metadata store, which sends notifications like ZooKeeper). */
class ChangeWaiterTest {
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
    void aBrokersAppliedRecordWakesTheWaiterAndAChangeElsewhereDoesNot() throws Exception {
        CompletableFuture<Void> applied = registry.nextChangeAtOrBelow(registry.paths().relocationApplied());
        registry.write(registry.paths().relocationEpoch(), new RelocationEpoch(1, 3, 0, java.util.List.of()), -1)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
        // a sibling whose name merely starts the same is not below it either
        store.put(registry.paths().relocationApplied() + "-other", new byte[] {1}, java.util.Optional.empty())
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
        Thread.sleep(200); // notifications are delivered asynchronously: give a wrong one time to arrive
        assertFalse(applied.isDone(), "woken by a change that is not below the path");
        registry.write(registry.paths().relocationApplied("broker-1"), new RelocationEpoch(1, 3, 0,
                java.util.List.of()), -1).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        applied.get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aWaiterTheCallerGaveUpOnIsDroppedAndOthersStillWake() throws Exception {
        CompletableFuture<Void> abandoned = registry.nextChangeAtOrBelow(registry.paths().relocationApplied());
        abandoned.cancel(false);
        CompletableFuture<Void> waiting = registry.nextChangeAtOrBelow(registry.paths().relocationApplied());
        registry.write(registry.paths().relocationApplied("broker-2"), new RelocationEpoch(1, 4, 0,
                java.util.List.of()), -1).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        waiting.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(abandoned.isCancelled());
    }
}
