package io.bcswitch.precheck;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens (once, lazily) the metadata store of each bookie cluster the plugin must inspect. Opening is
 * bounded by the probe timeout: a metadata service that does not answer gives a clear error, not a
 * hung request. Closed with the plugin.
 */
public class ClusterMetadataAccess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterMetadataAccess.class);

    private final long timeoutMillis;
    private final Map<String, CompletableFuture<MetadataStoreExtended>> stores = new ConcurrentHashMap<>();
    private final ExecutorService opener = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bcs-metadata-opener");
        t.setDaemon(true);
        return t;
    });

    public ClusterMetadataAccess(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    public long timeoutMillis() {
        return timeoutMillis;
    }

    public CompletableFuture<ClusterMetadata> forLocation(ClusterLocation location) {
        CompletableFuture<MetadataStoreExtended> f = stores.computeIfAbsent(location.storeUrl(), this::open);
        if (f.isCompletedExceptionally()) {
            stores.remove(location.storeUrl(), f);
            f = stores.computeIfAbsent(location.storeUrl(), this::open);
        }
        return f.thenApply(s -> new StoreClusterMetadata(s, location.ledgersRoot(), timeoutMillis));
    }

    private CompletableFuture<MetadataStoreExtended> open(String url) {
        CompletableFuture<MetadataStoreExtended> f = CompletableFuture.supplyAsync(() -> {
            try {
                return MetadataStoreExtended.create(url, MetadataStoreConfig.builder()
                        .sessionTimeoutMillis((int) Math.max(timeoutMillis, 2000))
                        .metadataStoreName("bcs-probe")
                        .build());
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, opener);
        CompletableFuture<MetadataStoreExtended> bounded = f.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
        bounded.whenComplete((s, e) -> {
            if (e != null) {
                // a store that opens after the deadline must not leak
                f.thenAccept(ClusterMetadataAccess::closeQuietly);
            }
        });
        return bounded.exceptionallyCompose(e -> CompletableFuture.failedFuture(new IllegalStateException(
                "metadata service " + url + " did not answer within " + timeoutMillis + " ms", e)));
    }

    @Override
    public void close() {
        stores.values().forEach(f -> f.thenAccept(ClusterMetadataAccess::closeQuietly));
        stores.clear();
        opener.shutdownNow();
    }

    private static void closeQuietly(MetadataStoreExtended s) {
        try {
            s.close();
        } catch (Exception e) {
            log.warn("Error closing bookie-cluster metadata store", e);
        }
    }
}
