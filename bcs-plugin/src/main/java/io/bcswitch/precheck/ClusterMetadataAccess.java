package io.bcswitch.precheck;

import io.bcswitch.registry.MetadataPort;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens (once, lazily) the metadata store of each bookie cluster the plugin must inspect. Opening is
 * bounded by the probe timeout: a metadata service that does not answer gives a clear error, not a
 * hung request. Closed with the plugin.
 */
public class ClusterMetadataAccess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterMetadataAccess.class);
    /** Sessions shorter than this expire on an ordinary GC pause of the broker. */
    private static final int MIN_SESSION_TIMEOUT_MILLIS = 2000;

    /** Opens a metadata store of its own at a URL (blocking: it is called on a thread of this class). */
    @FunctionalInterface
    public interface Opener {
        MetadataPort open(String url, int sessionTimeoutMillis);
    }

    private final long timeoutMillis;
    private final Opener opener;
    private final Map<String, CompletableFuture<MetadataPort>> stores = new ConcurrentHashMap<>();
    private final ExecutorService openers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bcs-metadata-opener");
        t.setDaemon(true);
        return t;
    });

    public ClusterMetadataAccess(long timeoutMillis, Opener opener) {
        this.timeoutMillis = timeoutMillis;
        this.opener = opener;
    }

    public long timeoutMillis() {
        return timeoutMillis;
    }

    public CompletableFuture<ClusterMetadata> forLocation(ClusterLocation location) {
        // an open that failed before this call is tried again; one this call starts answers this call, however
        // fast it fails (checking after computeIfAbsent would retry it at once when it failed that fast)
        CompletableFuture<MetadataPort> known = stores.get(location.storeUrl());
        if (known != null && known.isCompletedExceptionally()) {
            stores.remove(location.storeUrl(), known);
        }
        CompletableFuture<MetadataPort> f = stores.computeIfAbsent(location.storeUrl(), this::open);
        return f.thenApply(s -> new StoreClusterMetadata(s, location.ledgersRoot(), timeoutMillis));
    }

    private CompletableFuture<MetadataPort> open(String url) {
        CompletableFuture<MetadataPort> f = CompletableFuture.supplyAsync(() ->
                opener.open(url, (int) Math.max(timeoutMillis, MIN_SESSION_TIMEOUT_MILLIS)), openers);
        CompletableFuture<MetadataPort> bounded = f.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
        bounded.whenComplete((s, e) -> {
            if (e != null) {
                // a store that opens after the deadline must not leak
                f.thenAccept(ClusterMetadataAccess::closeQuietly);
            }
        });
        // only a store that did not open in time "did not answer": one that refused says why
        return bounded.exceptionallyCompose(e -> CompletableFuture.failedFuture(new IllegalStateException(
                io.bcswitch.concurrent.Failures.unwrap(e) instanceof java.util.concurrent.TimeoutException
                        ? "metadata service " + url + " did not answer within " + timeoutMillis + " ms"
                        : "cannot open metadata service " + url + ": " + SwitchPrecheck.rootMessage(e), e)));
    }

    /**
     * Closes the store of every URL not in {@code urls} (those of the clusters still registered): a cluster that was
     * unregistered is never inspected again, and its store would otherwise keep a session and watches for good.
     */
    public void retainOnly(java.util.Set<String> urls) {
        for (String url : java.util.List.copyOf(stores.keySet())) {
            if (!urls.contains(url)) {
                CompletableFuture<MetadataPort> gone = stores.remove(url);
                if (gone != null) {
                    log.info("url={} metadata store closed: no registered bookie cluster uses it any more", url);
                    gone.thenAcceptAsync(ClusterMetadataAccess::closeQuietly, openers);
                }
            }
        }
    }

    /** URLs of the stores open now (or being opened). */
    public java.util.Set<String> openStores() {
        return java.util.Set.copyOf(stores.keySet());
    }

    @Override
    public void close() {
        stores.values().forEach(f -> f.thenAccept(ClusterMetadataAccess::closeQuietly));
        stores.clear();
        openers.shutdownNow();
    }

    private static void closeQuietly(MetadataPort s) {
        try {
            s.close();
        } catch (Exception e) {
            log.warn("Error closing bookie-cluster metadata store", e);
        }
    }
}
