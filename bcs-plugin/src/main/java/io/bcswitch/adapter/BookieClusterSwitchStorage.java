package io.bcswitch.adapter;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.cutover.CutoverRunner;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.rest.BookieClustersApi;
import io.bcswitch.routing.Ownership;
import io.bcswitch.switching.BrokerSwitchAgent;
import io.bcswitch.switching.SwitchService;
import io.netty.channel.EventLoopGroup;
import io.opentelemetry.api.OpenTelemetry;
import java.io.IOException;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
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
 * through it follows the bookie-cluster registry. This class only parses configuration, wires the
 * components and delegates.
 */
public class BookieClusterSwitchStorage extends ManagedLedgerClientFactory {
    private static final Logger log = LoggerFactory.getLogger(BookieClusterSwitchStorage.class);
    private static final long START_TIMEOUT_SECONDS = 120;

    private final Clock clock = Clock.systemUTC();
    private final String fallbackBrokerId = "broker-" + UUID.randomUUID().toString().substring(0, 8);
    private volatile PulsarService pulsar;
    private RegistryStore registry;
    private ClusterMetadataAccess metadataAccess;
    private BrokerSwitchAgent agent;
    private CutoverRunner cutover;
    private ScheduledExecutorService cutoverScheduler;
    private RoutingClientFactory routingFactory;
    private SwitchService service;
    private BookieClustersApi api;
    private io.bcswitch.migration.MigrationOrchestrator orchestrator;
    private ScheduledExecutorService migrationScheduler;
    private java.util.concurrent.ExecutorService migrationIo;
    private io.bcswitch.routing.ClusterClientPool migrationPool;
    private OpenTelemetryMigrationMetrics metrics;

    @Override
    public void initialize(ServiceConfiguration conf, MetadataStoreExtended metadataStore,
                           BookKeeperClientFactory bookkeeperProvider, EventLoopGroup eventLoopGroup,
                           OpenTelemetry openTelemetry) throws Exception {
        SwitchConfig config = SwitchConfig.from(conf.getProperties());
        String brokerUri = BrokerConfigs.standaloneBookieUri(conf);
        registry = new RegistryStore(metadataStore, config.paths());
        metadataAccess = new ClusterMetadataAccess(metadataStore, config.probeTimeoutSeconds() * 1000L);
        MetadataLedgerInventory inventory = new MetadataLedgerInventory(metadataStore, this::factoryOrNull);
        service = new SwitchService(registry, metadataAccess, conf.getManagedLedgerDefaultEnsembleSize(), clock,
                inventory);
        api = new BookieClustersApi(service);
        api.setTopicLedgers(new io.bcswitch.topics.TopicLedgerReports(
                new ManagedLedgerTopicLedgers(this::factoryOrNull), this::ownership, this::refresh));
        cutoverScheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bcs-cutover");
            t.setDaemon(true);
            return t;
        });
        ManagedLedgerRoller roller = new ManagedLedgerRoller(this::factoryOrNull, () -> pulsar);
        cutover = new CutoverRunner(roller, config.cutoverEnabled(), config.cutoverTopicsPerSecond(),
                cutoverScheduler, this::publishProgress, this::brokerId, clock);
        routingFactory = new RoutingClientFactory(bookkeeperProvider, registry, this::ownership, this::refresh);
        routingFactory.onDataLedgerCreated(
                new LedgerAttributor(this::factoryOrNull, this::ownership, cutoverScheduler));
        agent = new BrokerSwitchAgent(registry, config, routingFactory::renewAll, cutover, clock);
        Ownership o = agent.start(brokerUri).get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        log.info("Bookie cluster switch plugin starting: registry={}, active bookie-cluster={}, epoch={}",
                config.configPath(), o.activeCluster(), o.activeEpoch());
        super.initialize(conf, metadataStore, routingFactory, eventLoopGroup, openTelemetry);
        routingFactory.warmUp(o.activeCluster()).get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        startMigration(config, inventory, openTelemetry);
        announceWhenStarted();
    }

    /** The migration after each switch, cleanup, drain reports, rollback: wired here, run by their own threads. */
    private void startMigration(SwitchConfig config, MetadataLedgerInventory inventory, OpenTelemetry openTelemetry) {
        migrationScheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bcs-migration");
            t.setDaemon(true);
            return t;
        });
        migrationIo = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "bcs-migration-io");
            t.setDaemon(true);
            return t;
        });
        migrationPool = routingFactory.migrationPool();
        BookKeeperLedgerCopier copier = new BookKeeperLedgerCopier(migrationPool::get, migrationIo);
        metrics = new OpenTelemetryMigrationMetrics(openTelemetry, () -> {
            Ownership o = agent.ownership();
            return o == null ? null : o.activeCluster();
        });
        orchestrator = new io.bcswitch.migration.MigrationOrchestrator(registry, inventory, copier, config.migration(),
                this::brokerId, migrationScheduler, clock, metrics);
        var drain = new io.bcswitch.migration.DrainReports(registry, inventory, copier,
                new NamespaceRetentionLookup(() -> pulsar));
        var cleanup = new io.bcswitch.migration.CleanupService(registry, inventory, copier, orchestrator, drain,
                config.migration(), metrics, clock);
        api.setMigration(new io.bcswitch.migration.MigrationService(registry, service, orchestrator, cleanup, drain,
                config.migration(), clock));
        service.onSwitchCommitted(orchestrator::switchAccepted);
        agent.onDeprecated(cluster -> {
            routingFactory.closeClients(cluster);
            migrationPool.closeClient(cluster);
        });
    }

    private void publishRelocationApplied(long epoch) {
        registry.writeEphemeral(registry.paths().relocationApplied(brokerId()),
                new io.bcswitch.registry.RelocationEpoch(io.bcswitch.registry.RelocationEpoch.FORMAT_VERSION, epoch,
                        clock.millis())).exceptionally(e -> {
                            log.warn("Cannot publish applied relocation epoch {} of broker {}: {}", epoch, brokerId(),
                                    e.toString());
                            return null;
                        });
    }

    /**
     * Once the broker has its id (late in its start-up), run a first cutover pass: it publishes this
     * broker's progress record, so status lists every live broker and the epoch it applied, and it
     * moves any ledger that was opened on a previous cluster while the broker was starting.
     */
    private void announceWhenStarted() {
        java.util.concurrent.ScheduledFuture<?>[] task = new java.util.concurrent.ScheduledFuture<?>[1];
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        task[0] = cutoverScheduler.scheduleWithFixedDelay(() -> {
            boolean known = !brokerId().equals(fallbackBrokerId);
            if (known || System.nanoTime() > deadline) {
                if (cutover.lastProgress().isEmpty()) {
                    cutover.start(agent.ownership());
                }
                agent.onRelocationsApplied(this::publishRelocationApplied);
                orchestrator.start(2_000);
                task[0].cancel(false);
            }
        }, 1, 1, TimeUnit.SECONDS);
    }

    private Ownership ownership() {
        return agent.ownership();
    }

    private java.util.concurrent.CompletableFuture<Ownership> refresh() {
        return agent.refresh();
    }

    private ManagedLedgerFactory factoryOrNull() {
        return getDefaultStorageClass() == null ? null : getDefaultStorageClass().getManagedLedgerFactory();
    }

    private void publishProgress(BrokerCutoverRecord record) {
        registry.writeEphemeral(registry.paths().broker(record.broker()), record).exceptionally(e -> {
            log.warn("Cannot publish cutover progress of broker {}: {}", record.broker(), e.toString());
            return null;
        });
    }

    /**
     * Called by the plugin's broker-side components that receive the {@link PulsarService} (the REST
     * servlet): lets the cutover unload topics whose ledger cannot be rolled, and names this broker by
     * its broker id in status.
     */
    public void bindBroker(PulsarService pulsarService) {
        this.pulsar = pulsarService;
    }

    /** The broker id once the broker has one (it is set late in broker start-up), else a stand-in. */
    private String brokerId() {
        PulsarService p = pulsar;
        if (p != null) {
            try {
                String id = p.getBrokerId();
                if (id != null) {
                    return id;
                }
            } catch (RuntimeException e) {
                // not started yet
            }
        }
        return fallbackBrokerId;
    }

    /**
     * A routing client of its own (own per-cluster clients, own worker pool) for a broker component
     * that builds and closes its own BookKeeper client, such as schema storage.
     */
    public org.apache.bookkeeper.client.BookKeeper newRoutingClient(PulsarService pulsarService) {
        return routingFactory.create(pulsarService.getConfiguration(), registry.metadataStore(),
                pulsarService.getIoEventLoopGroup(), java.util.Optional.empty(), null).join();
    }

    /** The REST API served by the bookie-clusters servlet. */
    public BookieClustersApi restApi() {
        return api;
    }

    /** This broker's routing view (active cluster, epoch, ranges). */
    public Ownership currentOwnership() {
        return agent.ownership();
    }

    @Override
    public void close() throws IOException {
        if (agent != null) {
            agent.close();
        }
        if (cutover != null) {
            cutover.close();
        }
        if (cutoverScheduler != null) {
            cutoverScheduler.shutdownNow();
        }
        if (orchestrator != null) {
            orchestrator.close();
        }
        if (migrationScheduler != null) {
            migrationScheduler.shutdownNow();
        }
        if (migrationIo != null) {
            migrationIo.shutdownNow();
        }
        if (migrationPool != null) {
            migrationPool.close();
        }
        if (metrics != null) {
            metrics.close();
        }
        try {
            super.close();
        } finally {
            if (metadataAccess != null) {
                metadataAccess.close();
            }
        }
    }
}
