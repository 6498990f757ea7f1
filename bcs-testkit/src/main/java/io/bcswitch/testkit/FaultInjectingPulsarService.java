package io.bcswitch.testkit;

import io.netty.channel.EventLoopGroup;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.EnsemblePlacementPolicy;
import org.apache.bookkeeper.stats.StatsLogger;
import org.apache.pulsar.broker.BookKeeperClientFactory;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;

/**
 * A stock {@link PulsarService} whose BookKeeper client factory can be told to fail: every client the broker (and
 * so the plugin, which builds its clients with the broker's factory) asks for a metadata service URI in
 * {@link #failing} fails to build, as it would when that bookie cluster's metadata service is unreachable from this
 * one broker only. Nothing else differs from the stock service.
 */
final class FaultInjectingPulsarService extends PulsarService {
    /** Metadata service URIs this broker cannot build BookKeeper clients for. */
    final Set<String> failing = ConcurrentHashMap.newKeySet();

    FaultInjectingPulsarService(ServiceConfiguration config) {
        super(config);
    }

    @Override
    public BookKeeperClientFactory newBookKeeperClientFactory() {
        BookKeeperClientFactory real = super.newBookKeeperClientFactory();
        return new BookKeeperClientFactory() {
            @Override
            public CompletableFuture<BookKeeper> create(ServiceConfiguration conf, MetadataStoreExtended store,
                                                        EventLoopGroup eventLoopGroup,
                                                        Optional<Class<? extends EnsemblePlacementPolicy>> policyClass,
                                                        Map<String, Object> properties) {
                return refused(conf).orElseGet(() -> real.create(conf, store, eventLoopGroup, policyClass, properties));
            }

            @Override
            public CompletableFuture<BookKeeper> create(ServiceConfiguration conf, MetadataStoreExtended store,
                                                        EventLoopGroup eventLoopGroup,
                                                        Optional<Class<? extends EnsemblePlacementPolicy>> policyClass,
                                                        Map<String, Object> properties, StatsLogger statsLogger) {
                return refused(conf).orElseGet(() -> real.create(conf, store, eventLoopGroup, policyClass, properties,
                        statsLogger));
            }

            @Override
            public void close() {
                real.close();
            }
        };
    }

    private Optional<CompletableFuture<BookKeeper>> refused(ServiceConfiguration conf) {
        String uri = conf.getBookkeeperMetadataStoreUrl();
        if (uri != null && failing.contains(uri)) {
            return Optional.of(CompletableFuture.failedFuture(new IllegalStateException(
                    "test fault: this broker cannot reach the metadata service " + uri)));
        }
        return Optional.empty();
    }
}
