package io.bcswitch.adapter;

import io.bcswitch.config.PulsarLine;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.rest.BookieClustersApi;
import io.bcswitch.routing.Ownership;
import io.netty.channel.EventLoopGroup;
import io.opentelemetry.api.OpenTelemetry;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.pulsar.PulsarVersion;
import org.apache.pulsar.broker.BookKeeperClientFactory;
import org.apache.pulsar.broker.ManagedLedgerClientFactory;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker storage plugin: {@code managedLedgerStorageClassName=io.bcswitch.adapter.BookieClusterSwitchStorage}.
 *
 * <p>It is the stock managed-ledger storage with one difference: the BookKeeper client it builds is a
 * {@link RoutingBookKeeper}, so every managed ledger, cursor, compaction and transaction log created
 * through it follows the bookie-cluster registry. This class only parses configuration, has
 * {@link BrokerComponents} build the plugin, and delegates.
 */
public class BookieClusterSwitchStorage extends ManagedLedgerClientFactory {
    private static final Logger log = LoggerFactory.getLogger(BookieClusterSwitchStorage.class);
    /** Longest wait for the registry and the active cluster at broker start: beyond it the broker fails to start. */
    private static final long START_TIMEOUT_SECONDS = 120;

    private BrokerComponents components;

    @Override
    public void initialize(ServiceConfiguration conf, MetadataStoreExtended metadataStore,
                           BookKeeperClientFactory bookkeeperProvider, EventLoopGroup eventLoopGroup,
                           OpenTelemetry openTelemetry) throws Exception {
        requireThisPulsarLine();
        SwitchConfig config = SwitchConfig.from(conf.getProperties());
        SwitchConfig.notices(conf.getProperties()).forEach(n -> log.warn("broker.conf: {}", n));
        components = new BrokerComponents(conf, config, metadataStore, bookkeeperProvider, openTelemetry,
                this::factoryOrNull);
        Ownership o = components.start(BrokerConfigs.standaloneBookieUri(conf))
                .get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        log.info("Bookie cluster switch plugin starting: registry={}, active bookie-cluster={}, epoch={}",
                config.configPath(), o.activeCluster(), o.activeEpoch());
        super.initialize(conf, metadataStore, components.clientFactory(), eventLoopGroup, openTelemetry);
        components.storageStarted(o).get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    private ManagedLedgerFactory factoryOrNull() {
        return getDefaultStorageClass() == null ? null : getDefaultStorageClass().getManagedLedgerFactory();
    }

    /**
     * Called by the plugin's broker-side components that receive the {@link PulsarService} (the REST
     * servlet): lets the cutover unload topics whose ledger cannot be rolled, and names this broker by
     * its broker id in status.
     */
    public void bindBroker(PulsarService pulsarService) {
        components.bindBroker(pulsarService);
    }

    /**
     * A routing client of its own (own per-cluster clients, own worker pool) for a broker component
     * that builds and closes its own BookKeeper client, such as schema storage.
     */
    public BookKeeper newRoutingClient(PulsarService pulsarService) {
        return components.newRoutingClient(pulsarService).join();
    }

    /** The REST API served by the bookie-clusters servlet. */
    public BookieClustersApi restApi() {
        return components.restApi();
    }

    /** This broker's routing view (active cluster, epoch, ranges). */
    public Ownership currentOwnership() {
        return components.ownership();
    }

    /**
     * The most metadata-store reads the ledger inventory has had in flight at once since this broker started (never
     * above {@code inventoryReadConcurrency}); 0 before the first reading. For diagnostics and the benchmarks.
     */
    public int inventoryReadsPeak() {
        return components == null ? 0 : components.inventoryReadsPeak();
    }

    /**
     * Refuses to start on a broker of another Pulsar line than the jar was built for: the broker internals it uses
     * differ between lines, and a mismatch would otherwise surface much later as a NoSuchMethodError.
     */
    private static void requireThisPulsarLine() {
        PulsarLine line = PulsarLine.ofThisBuild();
        String broker = PulsarVersion.getVersion();
        Optional<String> refusal = line.refusal(broker);
        if (refusal.isPresent()) {
            log.error(refusal.get());
            throw new IllegalStateException(refusal.get());
        }
        log.info("bookie-cluster-switch for the Pulsar {} line (built against {}) on Pulsar {}", line.line(),
                line.builtAgainst(), broker);
    }

    @Override
    public void close() throws IOException {
        if (components != null) {
            components.close();
        }
        try {
            super.close();
        } finally {
            if (components != null) {
                components.closeMetadataAccess();
            }
        }
    }
}
