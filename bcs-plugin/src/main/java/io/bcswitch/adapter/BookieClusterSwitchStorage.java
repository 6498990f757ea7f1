package io.bcswitch.adapter;

import io.bcswitch.inventory.LedgerInventory;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.cutover.CutoverRunner;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.rest.BookieClustersApi;
import io.bcswitch.routing.Ownership;
import io.bcswitch.switching.BrokerPresence;
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
    private io.bcswitch.metrics.MigrationCounters metrics;
    private io.bcswitch.migration.DrainReports drain;
    private io.bcswitch.tuning.LiveTuning tuning;
    private io.bcswitch.tuning.TuningService tuningService;
    private io.bcswitch.metrics.BrokerCensus census;
    /** How often the brokers without the plugin are counted (for metrics and the log). */
    private static final long CENSUS_SECONDS = 5;
    private int rollbackWindowHours;
    private OpenTelemetryMigrationMetrics otelMetrics;
    private String pulsarCluster;
    private final java.util.concurrent.atomic.AtomicBoolean metricsRegistered =
            new java.util.concurrent.atomic.AtomicBoolean();
    private BrokerPresence presence;
    private ReaderMover readerMover;
    private ManagedLedgerRoller roller;
    private java.util.concurrent.ExecutorService clientCloser;
    private java.util.concurrent.ExecutorService inventoryAnswers;
    /** Writes the REST API's answers (as many threads as requests wait for one; Jetty bounds those). */
    private java.util.concurrent.ExecutorService restAnswers;
    private io.bcswitch.concurrent.InFlightLimit inventoryReads;
    /** The stored inventory plus each compacted topic's ledger in use (what unregister, cleanup, drain, BUILD see). */
    private LedgerInventory live;
    private static final long HANDLES_PUBLISH_SECONDS = 5;
    private static final long HANDLES_PUBLISH_DELAY_MILLIS = 200;
    private final java.util.concurrent.atomic.AtomicBoolean handlesDirty = new java.util.concurrent.atomic.AtomicBoolean();

    @Override
    public void initialize(ServiceConfiguration conf, MetadataStoreExtended metadataStore,
                           BookKeeperClientFactory bookkeeperProvider, EventLoopGroup eventLoopGroup,
                           OpenTelemetry openTelemetry) throws Exception {
        requireThisPulsarLine();
        SwitchConfig config = SwitchConfig.from(conf.getProperties());
        pulsarCluster = String.valueOf(conf.getClusterName());
        String brokerUri = BrokerConfigs.standaloneBookieUri(conf);
        registry = new RegistryStore(metadataStore, config.paths());
        metadataAccess = new ClusterMetadataAccess(config.probeTimeoutSeconds() * 1000L);
        inventoryReads = new io.bcswitch.concurrent.InFlightLimit(config.inventoryReadConcurrency());
        MetadataLedgerInventory inventory = new MetadataLedgerInventory(metadataStore, this::factoryOrNull,
                inventoryReads);
        // closes clients that are no longer needed (probe clients, unused prepared ones, a retired cluster's):
        // BookKeeper.close blocks, so never on a callback thread
        clientCloser = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "bcs-client-closer");
            t.setDaemon(true);
            return t;
        });
        routingFactory = new RoutingClientFactory(bookkeeperProvider, registry, this::ownership, this::refresh,
                clientCloser);
        inventoryAnswers = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "bcs-inventory");
            t.setDaemon(true);
            return t;
        });
        live = new LiveCompactionInventory(inventory, this::compactedLedgerOf, inventoryAnswers);
        BrokerClientProbe probe = new BrokerClientProbe(routingFactory::newProbeClient,
                conf.getManagedLedgerDefaultEnsembleSize(), conf.getManagedLedgerDefaultWriteQuorum(),
                conf.getManagedLedgerDefaultAckQuorum(), config.probeTimeoutSeconds() * 1000L, clientCloser);
        service = new SwitchService(registry, metadataAccess, conf.getManagedLedgerDefaultEnsembleSize(), clock,
                live, probe, config.switchPrepareTimeoutMillis());
        presence = new BrokerPresence(registry, this::knownBrokerId, clock);
        cutoverScheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bcs-cutover");
            t.setDaemon(true);
            return t;
        });
        // pacing an operator changed at run time applies from the start: before any cutover or migration runs
        tuning = new io.bcswitch.tuning.LiveTuning(new io.bcswitch.tuning.LiveTuning.Values(
                config.migration().bytesPerSecond(), config.migration().concurrency(), config.cutoverTopicsPerSecond()));
        tuningService = new io.bcswitch.tuning.TuningService(registry, tuning, cutoverScheduler, clock,
                config.resyncIntervalSeconds());
        tuningService.start().get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        census = new io.bcswitch.metrics.BrokerCensus(registry, cutoverScheduler, CENSUS_SECONDS);
        restAnswers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "bcs-rest-answer");
            t.setDaemon(true);
            return t;
        });
        api = new BookieClustersApi(service, tuningService,
                new io.bcswitch.rest.Operations(registry, this::brokerId, clock, cutoverScheduler), restAnswers);
        api.setTopicLedgers(new io.bcswitch.topics.TopicLedgerReports(
                new ManagedLedgerTopicLedgers(this::factoryOrNull), this::ownership, this::refresh));
        ManagedLedgerRoller roller = new ManagedLedgerRoller(this::factoryOrNull, () -> pulsar,
                active -> routingFactory.tracker().createsOutside(active));
        readerMover = new ReaderMover(routingFactory.tracker(), roller);
        this.roller = roller;
        cutover = new CutoverRunner(roller, config.cutoverEnabled(), tuning::cutoverTopicsPerSecond,
                cutoverScheduler, presence::cutover, this::brokerId, clock);
        if (LineManagedLedgers.LEDGER_PROPERTIES) {
            routingFactory.onDataLedgerCreated(
                    new LedgerAttributor(this::factoryOrNull, this::ownership, cutoverScheduler, cutover::running));
        } else {
            log.info("Ledgers are not stamped with {}: this Pulsar line has no per-ledger properties (PIP-404, "
                    + "Pulsar 4.1); the ledgers' bookie clusters are in the range table and the drain report",
                    io.bcswitch.topics.TopicLedgers.BOOKIE_CLUSTER_PROPERTY);
        }
        agent = new BrokerSwitchAgent(registry, config, routingFactory.activation(probe::warm), cutover, presence,
                clock, PulsarRetryDelays::between);
        Ownership o = agent.start(brokerUri).get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        log.info("Bookie cluster switch plugin starting: registry={}, active bookie-cluster={}, epoch={}",
                config.configPath(), o.activeCluster(), o.activeEpoch());
        super.initialize(conf, metadataStore, routingFactory, eventLoopGroup, openTelemetry);
        routingFactory.warmUp(o.activeCluster()).get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        startMigration(config, openTelemetry);
        announceWhenStarted();
    }

    /** The migration after each switch, cleanup, drain reports, rollback: wired here, run by their own threads. */
    private void startMigration(SwitchConfig config, OpenTelemetry openTelemetry) {
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
        otelMetrics = new OpenTelemetryMigrationMetrics(openTelemetry, () -> {
            Ownership o = agent.ownership();
            return o == null ? null : o.activeCluster();
        });
        metrics = new io.bcswitch.metrics.MigrationCounters(otelMetrics);
        orchestrator = new io.bcswitch.migration.MigrationOrchestrator(registry, live, copier, config.migration(),
                tuning, this::brokerId, migrationScheduler, PulsarByteBudget::refilledAt, clock, metrics,
                service::switchTo);
        drain = new io.bcswitch.migration.DrainReports(registry, live, copier,
                new NamespaceRetentionLookup(() -> pulsar), clock);
        rollbackWindowHours = config.migration().rollbackWindowHours();
        var cleanup = new io.bcswitch.migration.CleanupService(registry, live, copier, orchestrator, drain,
                config.migration(), metrics, clock);
        var auditor = new io.bcswitch.audit.InvariantAuditor(registry, live, copier, service::facts, cleanup,
                new io.bcswitch.migration.ByteRateLimiter(tuning::migrationBytesPerSecond,
                        PulsarByteBudget::refilledAt, migrationScheduler)::acquire, this::compactedLedgerOf, clock);
        api.setMigration(new io.bcswitch.migration.MigrationService(registry, service, orchestrator, cleanup, drain,
                config.migration(), clock, auditor));
        service.onSwitchCommitted(orchestrator::switchAccepted);
        // closing a client blocks: not on the agent's thread, which applies directives
        agent.onDeprecated(cluster -> clientCloser.execute(() -> {
            routingFactory.closeClients(cluster);
            migrationPool.closeClient(cluster);
        }));
    }

    /** Publishes the handles this broker's routing clients hold open, by cluster (every few seconds). */
    private void publishHandles() {
        Ownership o = agent.ownership();
        if (o == null) {
            return;
        }
        LedgerHandleTracker.Snapshot snap = routingFactory.tracker().snapshot(o.activeCluster(),
                io.bcswitch.registry.BrokerCutoverRecord.MAX_OPEN_LISTED, roller.compactedViews()::containsKey);
        presence.handles(snap.counts(), snap.idsOutside());
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
                agent.onRelocationsApplied(epoch -> {
                    publishHandles(); // the handles held now go with the epoch (see BrokerPresence)
                    presence.relocationApplied(epoch);
                    cutoverScheduler.execute(() -> readerMover.relocationsApplied(agent.ownership()));
                });
                // a handle opened on an old cluster is published within a fraction of a second; closed ones are
                // noticed every few seconds
                routingFactory.tracker().onOpen(cluster -> {
                    Ownership o = agent.ownership();
                    if (o != null && !cluster.equals(o.activeCluster()) && handlesDirty.compareAndSet(false, true)) {
                        cutoverScheduler.schedule(() -> {
                            handlesDirty.set(false);
                            publishHandles();
                        }, HANDLES_PUBLISH_DELAY_MILLIS, TimeUnit.MILLISECONDS);
                    }
                });
                cutoverScheduler.scheduleWithFixedDelay(this::publishHandles, 0, HANDLES_PUBLISH_SECONDS,
                        TimeUnit.SECONDS);
                // what the active cluster's id generator says now, for a switch away from it if it dies
                service.observe(agent.ownership().activeCluster(), "broker start");
                orchestrator.start(2_000);
                task[0].cancel(false);
            }
        }, 1, 1, TimeUnit.SECONDS);
    }

    private Ownership ownership() {
        return agent.ownership();
    }

    /** The compacted ledger the topic of managed ledger {@code ml} uses now, as its owning broker knows it. */
    private java.util.concurrent.CompletableFuture<java.util.Optional<Long>> compactedLedgerOf(String ml) {
        PulsarService p = pulsar;
        if (p == null) {
            return java.util.concurrent.CompletableFuture.completedFuture(java.util.Optional.empty());
        }
        try {
            String topic = org.apache.pulsar.common.naming.TopicName.fromPersistenceNamingEncoding(ml);
            return p.getAdminClient().topics().getInternalStatsAsync(topic).thenApply(st ->
                    st.compactedLedger == null || st.compactedLedger.ledgerId < 0 ? java.util.Optional.<Long>empty()
                            : java.util.Optional.of(st.compactedLedger.ledgerId)).exceptionally(e -> {
                                Throwable c = e instanceof java.util.concurrent.CompletionException
                                        && e.getCause() != null ? e.getCause() : e;
                                if (c instanceof org.apache.pulsar.client.admin.PulsarAdminException.NotFoundException) {
                                    return java.util.Optional.empty(); // the topic is gone
                                }
                                throw new java.util.concurrent.CompletionException(c);
                            });
        } catch (Exception e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    private java.util.concurrent.CompletableFuture<Ownership> refresh() {
        return agent.refresh();
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
        this.pulsar = pulsarService;
        if (metricsRegistered.compareAndSet(false, true)) {
            io.bcswitch.metrics.BrokerMetrics m = new io.bcswitch.metrics.BrokerMetrics(pulsarCluster,
                    new io.bcswitch.metrics.BrokerMetrics.Sources(() -> agent == null ? null : agent.ownership(),
                            cutover::lastProgress, active -> routingFactory.tracker().snapshot(active, 0,
                                    roller.compactedViews()::containsKey).counts(), agent::relocationEpochLag,
                            orchestrator::lastSeen, drain::latest, metrics, routingFactory.clientStats(),
                            rollbackWindowHours, clock, census::withoutPlugin));
            census.start();
            pulsarService.addPrometheusRawMetricsProvider(new PrometheusMetrics(m::text));
        }
    }

    /** The broker id, or null while the broker has none yet. */
    private String knownBrokerId() {
        String id = brokerId();
        return id.equals(fallbackBrokerId) ? null : id;
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

    /**
     * The most metadata-store reads the ledger inventory has had in flight at once since this broker started (never
     * above {@code inventoryReadConcurrency}); 0 before the first reading. For diagnostics and the benchmarks.
     */
    public int inventoryReadsPeak() {
        return inventoryReads == null ? 0 : inventoryReads.peak();
    }

    /**
     * Refuses to start on a broker of another Pulsar line than the jar was built for: the broker internals it uses
     * differ between lines, and a mismatch would otherwise surface much later as a NoSuchMethodError.
     */
    private static void requireThisPulsarLine() {
        io.bcswitch.config.PulsarLine line = io.bcswitch.config.PulsarLine.ofThisBuild();
        String broker = org.apache.pulsar.PulsarVersion.getVersion();
        java.util.Optional<String> refusal = line.refusal(broker);
        if (refusal.isPresent()) {
            log.error(refusal.get());
            throw new IllegalStateException(refusal.get());
        }
        log.info("bookie-cluster-switch for the Pulsar {} line (built against {}) on Pulsar {}", line.line(),
                line.builtAgainst(), broker);
    }

    @Override
    public void close() throws IOException {
        if (agent != null) {
            agent.close();
        }
        if (presence != null) {
            presence.close();
        }
        if (clientCloser != null) {
            clientCloser.shutdown();
        }
        if (inventoryAnswers != null) {
            inventoryAnswers.shutdownNow();
        }
        if (restAnswers != null) {
            restAnswers.shutdownNow();
        }
        if (tuningService != null) {
            tuningService.close();
        }
        if (census != null) {
            census.close();
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
        if (otelMetrics != null) {
            otelMetrics.close();
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
