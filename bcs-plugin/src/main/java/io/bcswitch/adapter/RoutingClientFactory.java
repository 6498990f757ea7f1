package io.bcswitch.adapter;

import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.routing.ClusterClientPool;
import io.bcswitch.routing.Ownership;
import io.bcswitch.routing.SwitchRouter;
import io.netty.channel.EventLoopGroup;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.EnsemblePlacementPolicy;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.stats.StatsLogger;
import org.apache.pulsar.broker.BookKeeperClientFactory;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;

/**
 * The {@link BookKeeperClientFactory} the plugin hands to the stock managed-ledger storage: every client
 * it asks for (the default one, and one per custom ensemble-placement policy) is a
 * {@link RoutingBookKeeper} over a pool of real per-cluster clients, each built by the broker's own
 * factory with the broker's settings and that cluster's metadata service URI.
 */
final class RoutingClientFactory implements BookKeeperClientFactory {

    private final BookKeeperClientFactory brokerFactory;
    private final RegistryStore registry;
    private final Supplier<Ownership> ownership;
    private final Supplier<CompletableFuture<Ownership>> refresh;
    private final List<ClusterClientPool> pools = new CopyOnWriteArrayList<>();
    private final LedgerHandleTracker tracker = new LedgerHandleTracker();
    private final io.bcswitch.metrics.ClientOpStats clientStats = new io.bcswitch.metrics.ClientOpStats();
    private volatile RoutingBookKeeper.CreateListener createListener;

    private final java.util.concurrent.Executor closer;
    private final long oldLedgerReadTimeoutMillis;
    private final java.util.function.LongPredicate longLived;

    /**
     * @param closer                     where clients built and then not used are closed ({@code BookKeeper.close}
     *                                   blocks)
     * @param oldLedgerReadTimeoutMillis how long a read of a ledger on a cluster that is not the active one may take
     *                                   (0: BookKeeper's timeouts only)
     * @param longLived                  whether a ledger's readers keep their handles for long (a compacted view)
     */
    RoutingClientFactory(BookKeeperClientFactory brokerFactory, RegistryStore registry,
                         Supplier<Ownership> ownership, Supplier<CompletableFuture<Ownership>> refresh,
                         java.util.concurrent.Executor closer, long oldLedgerReadTimeoutMillis,
                         java.util.function.LongPredicate longLived) {
        this.longLived = longLived;
        this.oldLedgerReadTimeoutMillis = oldLedgerReadTimeoutMillis;
        this.closer = closer;
        this.brokerFactory = brokerFactory;
        this.registry = registry;
        this.ownership = ownership;
        this.refresh = refresh;
    }

    @Override
    public CompletableFuture<BookKeeper> create(ServiceConfiguration conf, MetadataStoreExtended store,
                                                EventLoopGroup eventLoopGroup,
                                                Optional<Class<? extends EnsemblePlacementPolicy>> policyClass,
                                                Map<String, Object> properties) {
        return create(conf, store, eventLoopGroup, policyClass, properties, NullStatsLogger.INSTANCE);
    }

    @Override
    public CompletableFuture<BookKeeper> create(ServiceConfiguration conf, MetadataStoreExtended store,
                                                EventLoopGroup eventLoopGroup,
                                                Optional<Class<? extends EnsemblePlacementPolicy>> policyClass,
                                                Map<String, Object> properties, StatsLogger statsLogger) {
        String poolName = policyClass.map(Class::getSimpleName).orElse("default");
        ClusterClientPool pool = newPool(poolName, conf, store, eventLoopGroup, policyClass, properties, statsLogger);
        if (brokerSettings == null) {
            brokerSettings = new BrokerSettings(conf, store, eventLoopGroup);
        }
        pools.add(pool);
        OrderedExecutor worker = OrderedExecutor.newBuilder()
                .name("bcs-bookkeeper-worker-" + poolName)
                .numThreads(Math.max(1, conf.getBookkeeperClientNumWorkerThreads()))
                .build();
        SwitchRouter router = new SwitchRouter(ownership, refresh, pool, oldLedgerReadTimeoutMillis);
        return CompletableFuture.completedFuture(new LineRoutingBookKeeper(router, worker, () -> {
            pools.remove(pool);
            pool.close();
        }, createListener, tracker));
    }

    /** What the broker built its first client with; the migration's clients are built the same way. */
    private record BrokerSettings(ServiceConfiguration conf, MetadataStoreExtended store, EventLoopGroup eventLoopGroup) {
    }

    private volatile BrokerSettings brokerSettings;

    private ClusterClientPool newPool(String poolName, ServiceConfiguration conf, MetadataStoreExtended store,
                                      EventLoopGroup eventLoopGroup,
                                      Optional<Class<? extends EnsemblePlacementPolicy>> policyClass,
                                      Map<String, Object> properties, StatsLogger statsLogger) {
        return new ClusterClientPool(poolName, cluster ->
                registry.getCluster(cluster).thenCompose(rec -> {
                    if (rec.isEmpty()) {
                        throw RegistryException.notFound("bookie cluster '" + cluster + "' is not registered");
                    }
                    String uri = rec.get().metadataServiceUri();
                    ServiceConfiguration c = BrokerConfigs.isBrokerImplicitCluster(conf, uri)
                            ? conf : BrokerConfigs.withMetadataServiceUri(conf, uri);
                    return brokerFactory.create(c, store, eventLoopGroup, policyClass, properties,
                            new ClusterStatsLogger(statsLogger, cluster, poolName, clientStats));
                }), closer, c -> tracker.openThrough(c, longLived), RETIRED_GRACE_NANOS, System::nanoTime);
    }

    /**
     * How long a client replaced at a switch is kept whatever the handles say: an operation routed to it just before
     * (an open, a delete, a create whose handle is not tracked yet) ends within BookKeeper's own timeouts (30 s by
     * default), and a handle it returns is tracked from then on. One still running later fails as against a bookie
     * that went away, and Pulsar retries it through the new client.
     */
    static final long RETIRED_GRACE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    /**
     * Closes the clients replaced at earlier switches that nothing uses any more, in every pool; returns how many.
     * Cheap when there is none: called every few seconds.
     */
    int closeIdleRetired() {
        return pools.stream().mapToInt(ClusterClientPool::closeIdleRetired).sum();
    }

    /**
     * Per-cluster clients of their own for the migration (copies never compete with topic traffic for a
     * client's threads), built like the broker's default ones. Available once the broker asked for its
     * first client; closed by the caller.
     */
    ClusterClientPool migrationPool() {
        BrokerSettings b = brokerSettings;
        if (b == null) {
            throw new IllegalStateException("the managed-ledger storage has not created its client yet");
        }
        // each copy records its creation time (and, in metadata format 3, a creator token): the copier deletes a
        // copy it failed to make only while the id still names the ledger it created
        return newPool("migration", b.conf(), b.store(), b.eventLoopGroup(), Optional.empty(),
                Map.of("ledgerMetadataVersion", 3, "storeSystemTimeAsLedgerCreationTime", true),
                NullStatsLogger.INSTANCE);
    }

    /** The operations of every per-cluster client this factory built, counted per bookie cluster and pool. */
    io.bcswitch.metrics.ClientOpStats clientStats() {
        return clientStats;
    }

    /** Every handle the routing clients of this broker handed out and creations in flight, by cluster. */
    LedgerHandleTracker tracker() {
        return tracker;
    }

    /**
     * A client built exactly like the broker's clients of {@code uri}'s cluster (the broker's own factory and
     * settings), for probing a cluster before it is switched to; the caller closes it.
     */
    CompletableFuture<BookKeeper> newProbeClient(String uri) {
        BrokerSettings b = brokerSettings;
        if (b == null) {
            return CompletableFuture.failedFuture(new IllegalStateException(
                    "the managed-ledger storage has not created its client yet"));
        }
        ServiceConfiguration c = BrokerConfigs.isBrokerImplicitCluster(b.conf(), uri)
                ? b.conf() : BrokerConfigs.withMetadataServiceUri(b.conf(), uri);
        return brokerFactory.create(c, b.store(), b.eventLoopGroup(), Optional.empty(), null, NullStatsLogger.INSTANCE);
    }

    /** Closes {@code cluster}'s clients in every pool (it was retired). */
    CompletableFuture<Void> closeClients(String cluster) {
        return CompletableFuture.allOf(pools.stream().map(p -> p.closeClient(cluster))
                .toArray(CompletableFuture[]::new));
    }

    /** Listener given to every client built from now on: set it before the managed-ledger factory starts. */
    void onDataLedgerCreated(RoutingBookKeeper.CreateListener listener) {
        this.createListener = listener;
    }

    /** Recreates {@code cluster}'s client in every pool, so creates use its newly assigned id range. */
    CompletableFuture<Void> renewAll(String cluster) {
        return CompletableFuture.allOf(pools.stream().map(p -> p.renew(cluster)).toArray(CompletableFuture[]::new));
    }

    /**
     * How the switch agent makes a cluster active on this broker: through every pool's client of it, prepared
     * ahead of the switch and warmed by {@code warm} (client, cluster) when the switch was announced.
     */
    io.bcswitch.switching.ClientActivation activation(
            java.util.function.BiFunction<BookKeeper, String, CompletableFuture<?>> warm) {
        return new io.bcswitch.switching.ClientActivation() {
            @Override
            public CompletableFuture<Void> activate(String cluster) {
                return renewAll(cluster);
            }

            @Override
            public CompletableFuture<Void> activate(String cluster, long firstLedgerId) {
                return renewAll(cluster, firstLedgerId);
            }

            @Override
            public CompletableFuture<Void> prepare(String cluster, long firstLedgerId) {
                return prepareAll(cluster, firstLedgerId, bk -> warm.apply(bk, cluster));
            }
        };
    }

    /** Puts in use {@code cluster}'s client prepared for its range starting at {@code key} (or a fresh one). */
    CompletableFuture<Void> renewAll(String cluster, long key) {
        return CompletableFuture.allOf(pools.stream().map(p -> p.renew(cluster, key))
                .toArray(CompletableFuture[]::new));
    }

    /**
     * Builds in every pool, without using it yet, {@code cluster}'s client for its range starting at {@code key},
     * and runs {@code warm} on each (its first ledger opens the metadata session's id range and the bookie
     * connections). Fails if a client cannot be built; a warm-up that fails only costs its warmth (the warm-up
     * logs it).
     */
    CompletableFuture<Void> prepareAll(String cluster, long key,
                                       java.util.function.Function<BookKeeper, CompletableFuture<?>> warm) {
        return CompletableFuture.allOf(pools.stream().map(p -> p.prepare(cluster, key)
                .thenCompose(bk -> warm.apply(bk).handle((v, e) -> null))).toArray(CompletableFuture[]::new));
    }

    /** Builds the active cluster's client in every pool now, so a broker fails fast at start-up. */
    CompletableFuture<Void> warmUp(String cluster) {
        return CompletableFuture.allOf(pools.stream().map(p -> p.get(cluster)).toArray(CompletableFuture[]::new));
    }

    @Override
    public void close() {
        // the broker's own factory is closed by the broker
    }
}
