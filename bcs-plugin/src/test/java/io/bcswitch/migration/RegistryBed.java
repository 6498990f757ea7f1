package io.bcswitch.migration;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RelocationEpoch;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;

/**
 * What the tests that drive one migration component directly share: an in-memory metadata store with the registry
 * on it, in-memory bookie clusters, a scheduler, brokers written as records, and the deletions the component counted.
 */
final class RegistryBed implements AutoCloseable {
    static final SwitchConfig.Migration CONFIG = new SwitchConfig.Migration(2, 0, 10, 24);

    final MetadataStoreExtended store;
    final RegistryStore registry;
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    final FakeClusters clusters = new FakeClusters();
    /** {@link #clusters} answering later, on another thread (see {@link FakeClusters#answeringLater}). */
    final LedgerCopier copier = clusters.answeringLater();
    /** "cluster:count" for every deletion count the component reported, in order. */
    final List<String> deleted = new ArrayList<>();
    final MigrationMetrics metrics = new MigrationMetrics() {
        @Override
        public void deleted(String cluster, int ledgers) {
            synchronized (deleted) {
                deleted.add(cluster + ":" + ledgers);
            }
        }
    };
    private final List<MigrationOrchestrator> orchestrators = new ArrayList<>();

    RegistryBed() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
    }

    /** broker-1's orchestrator over this bed, not started: the test drives what it wants of it. */
    MigrationOrchestrator orchestrator(LedgerInventory inventory) {
        return orchestrator(inventory, copier);
    }

    /** broker-1's orchestrator over this bed reaching the clusters through {@code copier}, not started. */
    MigrationOrchestrator orchestrator(LedgerInventory inventory, LedgerCopier copier) {
        MigrationOrchestrator o = new MigrationOrchestrator(registry, inventory, copier, CONFIG, () -> "broker-1",
                scheduler, PulsarByteBudget::refilledAt, Clock.systemUTC(), MigrationMetrics.NONE,
                new MigrationSafetyTest.HandSwitchBack(registry), MigrationSafetyTest.FAST);
        orchestrators.add(o);
        return o;
    }

    /** Registers bookie clusters {@code names}, each ACTIVE. */
    void activeClusters(String... names) throws Exception {
        for (String c : names) {
            registry.write(registry.paths().cluster(c), new BookieClusterRecord(1, c, "zk:" + c, ClusterStatus.ACTIVE,
                    5L), -1).get();
        }
    }

    /**
     * A live broker that finished the cutover of switch {@code epoch} to {@code active}, applied relocation epoch
     * {@code applied} and holds the ledgers {@code open} (by cluster) open.
     */
    void broker(String name, long epoch, String active, long applied, Map<String, List<Long>> open) throws Exception {
        BrokerCutoverRecord r = new BrokerCutoverRecord(1, name, epoch, active, 0, 0, 0, 1, 2);
        if (!open.isEmpty()) {
            Map<String, Integer> handles = new TreeMap<>();
            open.forEach((c, ids) -> handles.put(c, ids.size()));
            r = r.withHandles(handles, open);
        }
        registry.writeEphemeral(registry.paths().broker(name), r).get();
        registry.writeEphemeral(registry.paths().relocationApplied(name),
                new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, applied, 0)).get();
    }

    @Override
    public void close() throws Exception {
        orchestrators.forEach(MigrationOrchestrator::close);
        scheduler.shutdownNow();
        store.close();
    }
}
