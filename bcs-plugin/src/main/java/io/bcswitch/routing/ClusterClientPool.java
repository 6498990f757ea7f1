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
    private final java.util.concurrent.Executor closer;
    private final Object preparation = new Object();
    /** The one client built ahead of a switch and not in use yet (guarded by {@link #preparation}). */
    private Prepared prepared;
    /** The client the latest {@link #renew(String, long)} puts (or put) in use (guarded by {@link #preparation}). */
    private Prepared claimed;

    /** A client built for {@code cluster}'s range starting at {@code key}. */
    private record Prepared(String cluster, long key, CompletableFuture<BookKeeper> client) {
        boolean isFor(String c, long k) {
            return cluster.equals(c) && key == k;
        }
    }
    private volatile boolean closed;

    /** A pool that closes unused prepared clients on the caller's thread: for tests with clients that do not block. */
    public ClusterClientPool(String name, ClientFactory factory) {
        this(name, factory, Runnable::run);
    }

    /** @param closer runs the close of a client that was prepared and not used ({@code BookKeeper.close} blocks) */
    public ClusterClientPool(String name, ClientFactory factory, java.util.concurrent.Executor closer) {
        this.name = name;
        this.factory = factory;
        this.closer = closer;
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
     * {@code cluster}'s range starting at {@code key}. Returns the one already prepared or being put in use for that
     * key. At most one prepared client is kept: preparing another closes the one before.
     */
    public CompletableFuture<BookKeeper> prepare(String cluster, long key) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("client pool " + name + " is closed"));
        }
        CompletableFuture<BookKeeper> mine = new CompletableFuture<>();
        Prepared replaced;
        synchronized (preparation) {
            if (claimed != null && claimed.isFor(cluster, key)) {
                return claimed.client(); // the switch was applied before its preparation reached this broker
            }
            if (prepared != null && prepared.isFor(cluster, key) && !prepared.client().isCompletedExceptionally()) {
                return prepared.client();
            }
            replaced = prepared;
            prepared = new Prepared(cluster, key, mine);
        }
        discard(replaced);
        pipe(build(cluster), mine);
        if (closed) {
            discard(takePrepared());
        }
        return mine;
    }

    /** Builds a fresh client for {@code cluster}; completes once it is the one {@link #get} returns. */
    public CompletableFuture<BookKeeper> renew(String cluster) {
        synchronized (preparation) {
            if (claimed != null && claimed.cluster().equals(cluster)) {
                claimed = null;
            }
        }
        return install(cluster, build(cluster));
    }

    /**
     * Puts in use a client for {@code cluster}'s range starting at {@code key}: the one {@link #prepare} built for
     * that key if there is one that did not fail, else a fresh one; a client prepared for anything else is closed.
     * Completes once it is the one {@link #get} returns.
     */
    public CompletableFuture<BookKeeper> renew(String cluster, long key) {
        CompletableFuture<BookKeeper> fresh = new CompletableFuture<>();
        Prepared p;
        boolean usePrepared;
        synchronized (preparation) {
            p = prepared;
            prepared = null;
            usePrepared = p != null && p.isFor(cluster, key) && !p.client().isCompletedExceptionally();
            claimed = new Prepared(cluster, key, usePrepared ? p.client() : fresh);
        }
        CompletableFuture<BookKeeper> client;
        if (usePrepared) {
            log.info("[{}] bookie-cluster={} using the client prepared for the range starting at {}", name, cluster,
                    key);
            client = p.client().exceptionallyCompose(e -> build(cluster));
        } else {
            discard(p);
            pipe(build(cluster), fresh);
            client = fresh;
        }
        return install(cluster, client);
    }

    private Prepared takePrepared() {
        synchronized (preparation) {
            Prepared p = prepared;
            prepared = null;
            return p;
        }
    }

    private static void pipe(CompletableFuture<BookKeeper> from, CompletableFuture<BookKeeper> to) {
        from.whenComplete((c, e) -> {
            if (e != null) {
                to.completeExceptionally(e);
            } else {
                to.complete(c);
            }
        });
    }

    /** Closes a prepared client that will not be used, once it exists, on the closer (never the caller's thread). */
    private void discard(Prepared p) {
        if (p != null) {
            p.client().thenAcceptAsync(c -> {
                log.info("[{}] bookie-cluster={} closing the client prepared for the range starting at {}: not used",
                        name, p.cluster(), p.key());
                closeQuietly(c);
            }, closer);
        }
    }

    private CompletableFuture<BookKeeper> install(String cluster, CompletableFuture<BookKeeper> fresh) {
        return fresh.thenApply(client -> {
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
        Prepared unused = null;
        synchronized (preparation) {
            if (prepared != null && prepared.cluster().equals(cluster)) {
                unused = prepared;
                prepared = null;
            }
            if (claimed != null && claimed.cluster().equals(cluster)) {
                claimed = null;
            }
        }
        discard(unused);
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
        Prepared unused = takePrepared();
        if (unused != null) {
            unused.client().thenAccept(ClusterClientPool::closeQuietly);
        }
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
