package io.bcswitch.adapter;

import io.bcswitch.audit.InvariantAuditor;
import io.bcswitch.concurrent.InFlightLimit;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.cutover.CutoverRunner;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.metrics.BrokerCensus;
import io.bcswitch.metrics.BrokerMetrics;
import io.bcswitch.metrics.MigrationCounters;
import io.bcswitch.migration.ByteRateLimiter;
import io.bcswitch.migration.CleanupService;
import io.bcswitch.migration.DrainReports;
import io.bcswitch.migration.MigrationOrchestrator;
import io.bcswitch.migration.MigrationService;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.rest.BookieClustersApi;
import io.bcswitch.rest.Operations;
import io.bcswitch.routing.ClusterClientPool;
import io.bcswitch.routing.Ownership;
import io.bcswitch.switching.BrokerPresence;
import io.bcswitch.switching.BrokerSwitchAgent;
import io.bcswitch.switching.SwitchService;
import io.bcswitch.topics.TopicLedgerReports;
import io.bcswitch.topics.TopicLedgers;
import io.bcswitch.tuning.LiveTuning;
import io.bcswitch.tuning.TuningService;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.pulsar.broker.BookKeeperClientFactory;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every component of the plugin on one broker, built here and only here, each with its dependencies as final
 * constructor arguments. Nothing runs until {@link #start}: constructing only wires. The threads:
 * {@code bcs-cutover} (cutover, tuning, presence, census, handle publishing), {@code bcs-migration} (the migration
 * driver) and {@code bcs-migration-io} (copies), {@code bcs-client-closer} (closing clients blocks),
 * {@code bcs-inventory}, {@code bcs-rest-answer}; the switch agent has its own event thread.
 */
final class BrokerComponents implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerComponents.class);
    /** How often the brokers without the plugin are counted (for metrics and the log). */
    private static final long CENSUS_SECONDS = 5;
    /** How often the handles the routing clients hold open are published (closed ones are noticed this late). */
    private static final long HANDLES_PUBLISH_SECONDS = 5;
    /** A handle opened on an old cluster is published this soon (batched: many open at once after a switch). */
    private static final long HANDLES_PUBLISH_DELAY_MILLIS = 200;
    /** The broker id is set late in broker start-up: looked for this often... */
    private static final long BROKER_ID_POLL_SECONDS = 1;
    /** ...and given up on (the plugin then runs under a stand-in id) after this long. */
    private static final long BROKER_ID_WAIT_MINUTES = 10;
    /** The first migration pass waits this long after the broker is known (its topics are loading). */
    private static final long FIRST_MIGRATION_PASS_MILLIS = 2_000;

    private final Clock clock = Clock.systemUTC();
    private final BoundBroker broker = new BoundBroker();
    private final String pulsarCluster;
    private final MetadataStoreExtended brokerStore;
    private final ClusterMetadataAccess metadataAccess;
    private final InFlightLimit inventoryReads;
    private final ExecutorService clientCloser;
    private final ExecutorService inventoryAnswers;
    private final ExecutorService restAnswers;
    private final ScheduledExecutorService cutoverScheduler;
    private final ScheduledExecutorService migrationScheduler;
    private final ExecutorService migrationIo;
    private final RoutingClientFactory routingFactory;
    /** The migration's own clients: built on first use, once the storage has created the broker's client. */
    private ClusterClientPool migrationPool;
    private final Object migrationPoolLock = new Object();
    private final LedgerInventory live;
    private final SwitchService service;
    private final BrokerPresence presence;
    private final LiveTuning tuning;
    private final TuningService tuningService;
    private final BrokerCensus census;
    private final ManagedLedgerRoller roller;
    private final ReaderMover readerMover;
    private final CutoverRunner cutover;
    private final BrokerSwitchAgent agent;
    private final OpenTelemetryMigrationMetrics otelMetrics;
    private final MigrationCounters metrics;
    private final BookKeeperLedgerCopier copier;
    private final MigrationOrchestrator orchestrator;
    private final DrainReports drain;
    private final int rollbackWindowHours;
    private final BookieClustersApi api;
    private final AtomicBoolean metricsRegistered = new AtomicBoolean();
    private final AtomicBoolean handlesDirty = new AtomicBoolean();
    /** Set once the broker is known: relocation epochs are published from then on. */
    private volatile boolean announced;

    BrokerComponents(ServiceConfiguration conf, SwitchConfig config, MetadataStoreExtended metadataStore,
                     BookKeeperClientFactory bookkeeperProvider, OpenTelemetry openTelemetry,
                     Supplier<ManagedLedgerFactory> factory) {
        pulsarCluster = String.valueOf(conf.getClusterName());
        brokerStore = metadataStore;
        RegistryStore registry = new RegistryStore(new PulsarMetadataPort(metadataStore,
                conf.getMetadataStoreOperationTimeoutSeconds() * 1000L), config.paths());
        long probeTimeoutMillis = config.probeTimeoutSeconds() * 1000L;
        metadataAccess = new ClusterMetadataAccess(probeTimeoutMillis, PulsarMetadataPort::probe);
        inventoryReads = new InFlightLimit(config.inventoryReadConcurrency());
        // closes clients that are no longer needed (probe clients, unused prepared ones, a retired cluster's):
        // BookKeeper.close blocks, so never on a callback thread
        clientCloser = Executors.newSingleThreadExecutor(daemon("bcs-client-closer"));
        inventoryAnswers = Executors.newSingleThreadExecutor(daemon("bcs-inventory"));
        // as many threads as requests wait for an answer; Jetty bounds those
        restAnswers = Executors.newCachedThreadPool(daemon("bcs-rest-answer"));
        cutoverScheduler = Executors.newSingleThreadScheduledExecutor(daemon("bcs-cutover"));
        migrationScheduler = Executors.newSingleThreadScheduledExecutor(daemon("bcs-migration"));
        // a thread per listing in flight (the copier runs one per cluster at a time): a listing blocks while its
        // cluster's metadata service does not answer, and must not hold up the listing of another cluster
        migrationIo = Executors.newCachedThreadPool(daemon("bcs-migration-io"));

        routingFactory = new RoutingClientFactory(bookkeeperProvider, registry, this::ownership,
                this::refresh, clientCloser, config.oldLedgerReadTimeoutMillis(), this::compactedView);
        // namespace policies are in the configuration store, which may be another store than the broker's
        live = new LiveCompactionInventory(new MetadataLedgerInventory(metadataStore, () -> {
            org.apache.pulsar.broker.PulsarService p = broker.pulsar();
            return p != null && p.getConfigurationMetadataStore() != null ? p.getConfigurationMetadataStore()
                    : metadataStore;
        }, factory, inventoryReads),
                broker::compactedLedgerOf, inventoryAnswers);
        BrokerClientProbe probe = new BrokerClientProbe(routingFactory::newProbeClient,
                conf.getManagedLedgerDefaultEnsembleSize(), conf.getManagedLedgerDefaultWriteQuorum(),
                conf.getManagedLedgerDefaultAckQuorum(), probeTimeoutMillis, clientCloser);
        service = new SwitchService(registry, metadataAccess, conf.getManagedLedgerDefaultEnsembleSize(), clock,
                live, probe, config.switchPrepareTimeoutMillis(), this::switchAccepted);
        presence = new BrokerPresence(registry, broker::knownBrokerId, clock);
        tuning = new LiveTuning(new LiveTuning.Values(config.migration().bytesPerSecond(),
                config.migration().concurrency(), config.cutoverTopicsPerSecond()));
        tuningService = new TuningService(registry, tuning, cutoverScheduler, clock, config.resyncIntervalSeconds());
        census = new BrokerCensus(registry, cutoverScheduler, CENSUS_SECONDS);
        roller = new ManagedLedgerRoller(factory, broker::pulsar,
                active -> routingFactory.tracker().createsOutside(active));
        readerMover = new ReaderMover(routingFactory.tracker(), roller);
        cutover = new CutoverRunner(roller, config.cutoverEnabled(), tuning::cutoverTopicsPerSecond,
                cutoverScheduler, presence::cutover, broker::brokerId, clock);
        if (LineManagedLedgers.LEDGER_PROPERTIES) {
            routingFactory.onDataLedgerCreated(
                    new LedgerAttributor(factory, this::ownership, cutoverScheduler, cutover::running));
        } else {
            log.info("Ledgers are not stamped with {}: this Pulsar line has no per-ledger properties (PIP-404, "
                    + "Pulsar 4.1); the ledgers' bookie clusters are in the range table and the drain report",
                    TopicLedgers.BOOKIE_CLUSTER_PROPERTY);
        }
        agent = new BrokerSwitchAgent(registry, config, routingFactory.activation(probe::warm), cutover, presence,
                clock, PulsarRetryDelays::between, new AgentListener());

        copier = BookKeeperLedgerCopier.holding(cluster -> migrationPool().lease(cluster)
                .thenApply(l -> new BookKeeperLedgerCopier.Held(l.client(), l::release)), migrationIo);
        otelMetrics = new OpenTelemetryMigrationMetrics(openTelemetry, () -> {
            Ownership o = ownership();
            return o == null ? null : o.activeCluster();
        });
        metrics = new MigrationCounters(otelMetrics);
        orchestrator = new MigrationOrchestrator(registry, live, copier, config.migration(), tuning,
                broker::brokerId, migrationScheduler, PulsarByteBudget::refilledAt, clock, metrics, service::switchTo);
        drain = new DrainReports(registry, live, copier, new NamespaceRetentionLookup(broker::pulsar), clock);
        rollbackWindowHours = config.migration().rollbackWindowHours();
        CleanupService cleanup = new CleanupService(registry, live, copier, orchestrator, drain, config.migration(),
                metrics, clock);
        InvariantAuditor auditor = new InvariantAuditor(registry, live, copier, service::facts, cleanup,
                new ByteRateLimiter(tuning::migrationBytesPerSecond, PulsarByteBudget::refilledAt,
                        migrationScheduler)::acquire, broker::compactedLedgerOf, clock);
        api = new BookieClustersApi(service, tuningService,
                new Operations(registry, broker::brokerId, clock, restAnswers), restAnswers,
                new MigrationService(registry, service, orchestrator, cleanup, drain, config.migration(), clock,
                        auditor),
                new TopicLedgerReports(new ManagedLedgerTopicLedgers(factory), this::ownership,
                        this::refresh), TimeUnit.SECONDS.toMillis(config.operationAfterSeconds()));
    }

    /** What the broker does when its agent changed the routing (on the agent's thread). */
    private final class AgentListener implements BrokerSwitchAgent.Listener {
        @Override
        public void deprecated(String cluster) {
            // closing a client blocks: not on the agent's thread, which applies directives
            clientCloser.execute(() -> {
                routingFactory.closeClients(cluster);
                ClusterClientPool pool = existingMigrationPool();
                if (pool != null) {
                    pool.closeClient(cluster);
                }
            });
        }

        @Override
        public void relocationsApplied(long epoch) {
            if (!announced) {
                return; // told again once the broker is known (announceWhenStarted)
            }
            publishHandles(); // the handles held now go with the epoch (see BrokerPresence)
            presence.relocationApplied(epoch);
            cutoverScheduler.execute(() -> readerMover.relocationsApplied(ownership()));
        }
    }

    private ClusterClientPool migrationPool() {
        synchronized (migrationPoolLock) {
            if (migrationPool == null) {
                migrationPool = routingFactory.migrationPool();
            }
            return migrationPool;
        }
    }

    private ClusterClientPool existingMigrationPool() {
        synchronized (migrationPoolLock) {
            return migrationPool;
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Loads the run-time pacing, then follows the registry: completes with the routing to start the storage with. */
    CompletableFuture<Ownership> start(String brokerUri) {
        // pacing an operator changed at run time applies from the start: before any cutover or migration runs
        return tuningService.start().thenCompose(v -> agent.start(brokerUri));
    }

    /** The storage is up: warm the active cluster's client, and announce this broker once it has its id. */
    CompletableFuture<Void> storageStarted(Ownership o) {
        return routingFactory.warmUp(o.activeCluster()).thenRun(this::announceWhenStarted);
    }

    /** The BookKeeper client factory the managed-ledger storage is built with. */
    RoutingClientFactory clientFactory() {
        return routingFactory;
    }

    /**
     * Once the broker has its id (late in its start-up), run a first cutover pass: it publishes this
     * broker's progress record, so status lists every live broker and the epoch it applied, and it
     * moves any ledger that was opened on a previous cluster while the broker was starting.
     */
    private void announceWhenStarted() {
        ScheduledFuture<?>[] task = new ScheduledFuture<?>[1];
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(BROKER_ID_WAIT_MINUTES);
        task[0] = cutoverScheduler.scheduleWithFixedDelay(() -> {
            if (broker.knownBrokerId() != null || System.nanoTime() > deadline) {
                if (cutover.lastProgress().isEmpty()) {
                    cutover.start(ownership());
                }
                announced = true;
                agent.retellRelocationEpoch();
                // a handle opened on an old cluster is published within a fraction of a second; closed ones are
                // noticed every few seconds
                // a delete that went to a ledger's old home while its copy became home elsewhere: the copy goes too
                routingFactory.tracker().onPulsarDeleted((cluster, ledgerId) -> {
                    Ownership o = ownership();
                    if (o != null && !cluster.equals(o.activeCluster())) {
                        orchestrator.pulsarDeleted(ledgerId, cluster);
                    }
                });
                routingFactory.tracker().onOpen(cluster -> {
                    Ownership o = ownership();
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
                service.observe(ownership().activeCluster(), "broker start");
                orchestrator.start(FIRST_MIGRATION_PASS_MILLIS);
                task[0].cancel(false);
            }
        }, BROKER_ID_POLL_SECONDS, BROKER_ID_POLL_SECONDS, TimeUnit.SECONDS);
    }

    /** Whether {@code ledgerId} is some topic's compacted view now (its readers keep their handles for long). */
    private boolean compactedView(long ledgerId) {
        return roller.compactedViews().containsKey(ledgerId);
    }

    /**
     * Publishes the handles this broker's routing clients hold open, by cluster; and closes the clients earlier
     * switches replaced once nothing is open through them.
     */
    private void publishHandles() {
        Ownership o = ownership();
        if (o == null) {
            return;
        }
        routingFactory.closeIdleRetired();
        LedgerHandleTracker.Snapshot snap = routingFactory.tracker().snapshot(o.activeCluster(),
                BrokerCutoverRecord.MAX_OPEN_LISTED, roller.compactedViews()::containsKey);
        presence.handles(snap.counts(), snap.idsOutside());
    }

    /**
     * The broker's {@link PulsarService}, from the plugin's servlet: lets the cutover unload topics whose ledger
     * cannot be rolled, names this broker by its id, and registers the metrics.
     */
    void bindBroker(PulsarService pulsarService) {
        broker.bind(pulsarService);
        if (metricsRegistered.compareAndSet(false, true)) {
            BrokerMetrics m = new BrokerMetrics(pulsarCluster, new BrokerMetrics.Sources(this::ownership,
                    cutover::lastProgress, active -> routingFactory.tracker().snapshot(active, 0,
                            roller.compactedViews()::containsKey).counts(), agent::relocationEpochLag,
                    orchestrator::lastSeen, drain::latest, metrics, routingFactory.clientStats(),
                    rollbackWindowHours, clock, census::withoutPlugin));
            census.start();
            pulsarService.addPrometheusRawMetricsProvider(new PrometheusMetrics(m::text));
        }
    }

    /** A routing client of its own (own per-cluster clients, own worker pool), closed by whoever asked for it. */
    CompletableFuture<org.apache.bookkeeper.client.BookKeeper> newRoutingClient(PulsarService pulsarService) {
        return routingFactory.create(pulsarService.getConfiguration(), brokerStore,
                pulsarService.getIoEventLoopGroup(), java.util.Optional.empty(), null);
    }

    BookieClustersApi restApi() {
        return api;
    }

    // the components that call each other (the agent's routing and its clients, a switch and its migration) are
    // wired through these methods: they are called only once construction is over

    private CompletableFuture<Ownership> refresh() {
        return agent.refresh();
    }

    private void switchAccepted(long epoch) {
        orchestrator.switchAccepted(epoch);
    }

    /** This broker's routing view; null before the agent started. */
    Ownership ownership() {
        return agent.ownership();
    }

    int inventoryReadsPeak() {
        return inventoryReads.peak();
    }

    @Override
    public void close() {
        copier.stopping(); // before any client of the migration is closed
        agent.close();
        presence.close();
        clientCloser.shutdown();
        inventoryAnswers.shutdownNow();
        restAnswers.shutdownNow();
        tuningService.close();
        census.close();
        cutover.close();
        cutoverScheduler.shutdownNow();
        orchestrator.close();
        migrationScheduler.shutdownNow();
        migrationIo.shutdownNow();
        ClusterClientPool pool = existingMigrationPool();
        if (pool != null) {
            pool.close();
        }
        otelMetrics.close();
    }

    /** Closed after the managed-ledger storage: a switch precheck may still be reading another cluster's store. */
    void closeMetadataAccess() {
        metadataAccess.close();
    }
}
