package io.bcswitch.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.bookkeeper.client.BookKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One BookKeeper client per bookie cluster, created on first use. A client that failed to build is
 * forgotten so the next use tries again (a cluster that was down may come back).
 *
 * <p>{@link #renew} replaces a cluster's client: BookKeeper's ZooKeeper driver caches its id
 * generator's high-order range for the client's whole life, so a cluster that is given a new range
 * needs a new client. The replaced client is kept open until {@link #close()}, because ledger handles
 * opened through it (the ledgers topics are reading and writing) stay bound to it.
 *
 * <p>{@link #prepare} builds that new client ahead of the switch, once the cluster has its new range but before
 * anything routes to it; {@link #renew} with the same range key then puts it in use instead of building one in the
 * busy first moments after the switch. At most one prepared client per cluster is kept: preparing another range
 * closes the one before, and so does renewing with another range.
 */
public final class ClusterClientPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterClientPool.class);

    /** Builds a client for a cluster, the way the broker builds its own. */
    @FunctionalInterface
    public interface ClientFactory {
        CompletableFuture<BookKeeper> create(String cluster);
    }

    private final String name;
    private final ClientFactory factory;
    private final Map<String, CompletableFuture<BookKeeper>> clients = new ConcurrentHashMap<>();
    private final List<BookKeeper> retired = new ArrayList<>();
    private final Map<String, Prepared> prepared = new ConcurrentHashMap<>();
    private final Map<String, Long> inUseKey = new ConcurrentHashMap<>();

    /** A client built for {@code cluster}'s range starting at {@code key}, not in use yet. */
    private record Prepared(long key, CompletableFuture<BookKeeper> client) {
    }
    private volatile boolean closed;

    public ClusterClientPool(String name, ClientFactory factory) {
        this.name = name;
        this.factory = factory;
    }

    public CompletableFuture<BookKeeper> get(String cluster) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("client pool " + name + " is closed"));
        }
        CompletableFuture<BookKeeper> f = clients.computeIfAbsent(cluster, this::build);
        if (f.isCompletedExceptionally()) {
            // a previous build failed: forget it and try once more now (the cluster may be back)
            clients.remove(cluster, f);
            f = clients.computeIfAbsent(cluster, this::build);
        }
        return f;
    }

    /**
     * Builds, without putting it in use, the client {@link #renew renew(cluster, key)} will put in use: for
     * {@code cluster}'s range starting at {@code key}. Returns the one already prepared or in use for that key.
     */
    public CompletableFuture<BookKeeper> prepare(String cluster, long key) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("client pool " + name + " is closed"));
        }
        Long using = inUseKey.get(cluster);
        if (using != null && using == key) {
            return get(cluster); // the switch was applied before its preparation reached this broker
        }
        Prepared[] replaced = new Prepared[1];
        Prepared p = prepared.compute(cluster, (c, cur) -> {
            if (cur != null && cur.key() == key && !cur.client().isCompletedExceptionally()) {
                return cur;
            }
            replaced[0] = cur;
            return new Prepared(key, build(c));
        });
        discard(cluster, replaced[0]);
        if (closed) {
            discard(cluster, prepared.remove(cluster));
        }
        return p.client();
    }

    /** Builds a fresh client for {@code cluster}; completes once it is the one {@link #get} returns. */
    public CompletableFuture<BookKeeper> renew(String cluster) {
        return install(cluster, build(cluster));
    }

    /**
     * Puts in use a client for {@code cluster}'s range starting at {@code key}: the one {@link #prepare} built for
     * that key if there is one that did not fail, else a fresh one. Completes once it is the one {@link #get}
     * returns.
     */
    public CompletableFuture<BookKeeper> renew(String cluster, long key) {
        Prepared p = prepared.remove(cluster);
        CompletableFuture<BookKeeper> client;
        if (p != null && p.key() == key && !p.client().isCompletedExceptionally()) {
            log.info("[{}] bookie-cluster={} using the client prepared for the range starting at {}", name, cluster,
                    key);
            client = p.client().exceptionallyCompose(e -> build(cluster));
        } else {
            discard(cluster, p);
            client = build(cluster);
        }
        return install(cluster, client).thenApply(c -> {
            inUseKey.put(cluster, key);
            return c;
        });
    }

    private void discard(String cluster, Prepared p) {
        if (p != null) {
            p.client().thenAccept(c -> {
                log.info("[{}] bookie-cluster={} closing the client prepared for the range starting at {}: not used",
                        name, cluster, p.key());
                closeQuietly(c);
            });
        }
    }

    private CompletableFuture<BookKeeper> install(String cluster, CompletableFuture<BookKeeper> fresh) {
        return fresh.thenApply(client -> {
            inUseKey.remove(cluster);
            CompletableFuture<BookKeeper> old = clients.put(cluster, CompletableFuture.completedFuture(client));
            if (old != null) {
                // retire the replaced client once it exists (it may still be being built)
                old.thenAccept(previous -> {
                    synchronized (retired) {
                        if (closed) {
                            closeQuietly(previous);
                        } else {
                            retired.add(previous);
                        }
                    }
                });
            }
            log.info("[{}] bookie-cluster={} new BookKeeper client in use", name, cluster);
            return client;
        });
    }

    /**
     * Closes {@code cluster}'s client (for a cluster that holds nothing any more); a later {@link #get}
     * would build a new one. Completes when it is closed.
     */
    public CompletableFuture<Void> closeClient(String cluster) {
        discard(cluster, prepared.remove(cluster));
        inUseKey.remove(cluster);
        CompletableFuture<BookKeeper> f = clients.remove(cluster);
        if (f == null) {
            return CompletableFuture.completedFuture(null);
        }
        return f.handle((c, e) -> {
            if (c != null) {
                closeQuietly(c);
                log.info("[{}] bookie-cluster={} BookKeeper client closed", name, cluster);
            }
            return null;
        });
    }

    /** Clusters that have a client (built or being built). */
    public List<String> clusters() {
        return List.copyOf(clients.keySet());
    }

    private CompletableFuture<BookKeeper> build(String cluster) {
        log.info("[{}] bookie-cluster={} creating BookKeeper client", name, cluster);
        CompletableFuture<BookKeeper> f;
        try {
            f = factory.create(cluster);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.whenComplete((c, e) -> {
            if (e != null) {
                log.warn("[{}] bookie-cluster={} cannot create BookKeeper client: {}", name, cluster, e.toString());
            }
        });
    }

    @Override
    public void close() {
        closed = true;
        List<BookKeeper> all = new ArrayList<>();
        clients.values().forEach(f -> {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                all.add(f.join());
            } else {
                f.thenAccept(ClusterClientPool::closeQuietly);
            }
        });
        clients.clear();
        prepared.values().forEach(p -> p.client().thenAccept(ClusterClientPool::closeQuietly));
        prepared.clear();
        synchronized (retired) {
            closed = true;
            all.addAll(retired);
            retired.clear();
        }
        all.forEach(ClusterClientPool::closeQuietly);
    }

    private static void closeQuietly(BookKeeper bk) {
        try {
            bk.close();
        } catch (Exception e) {
            log.warn("Error closing BookKeeper client", e);
        } 
    }
}
