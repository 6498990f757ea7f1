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
 * The BookKeeper clients of each bookie cluster: one that every operation on an existing ledger goes through (open,
 * read, delete, metadata), built on first use and kept for the cluster's life, and one that new ledgers are created
 * through ({@link #forCreate}). A client that failed to build is forgotten so the next use tries again (a cluster that
 * was down may come back).
 *
 * <p>{@link #renew} replaces a cluster's client for creates: BookKeeper's ZooKeeper driver caches its id generator's
 * high-order range for the client's whole life, so a cluster that is given a new range needs a new client to create
 * ledgers with. Until a cluster's first renewal, its one client does both. Only creates need the new range: reads keep
 * going through the client they always used, whose read handles Pulsar caches for as long as a topic is loaded. So a
 * replaced client holds only the write handles of ledgers created through it, which the cutover closes soon after
 * the switch; that is what lets it be closed (below) instead of living as long as the broker.
 *
 * <p>{@link #prepare} builds that new client ahead of the switch, once the cluster has its new range but before
 * anything routes to it; {@link #renew} with the same range key then puts it in use instead of building one in the
 * busy first moments after the switch. At most one prepared client per cluster is kept: preparing another range
 * closes the one before, and so does renewing with another range.
 *
 * <p>A replaced client is retired, not kept for good: {@link #closeIdleRetired} closes each one that has been retired
 * for a grace period (operations routed to it just before it was replaced are over) and through which no handle is
 * open any more (the {@code openThrough} test the pool is built with). Every switch replaces a client of the target in each
 * pool, so without this each switch would leave one client per pool (its threads, metadata session and bookie
 * connections) for the life of the broker.
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
    /** Each cluster's client for everything but creates, kept for the cluster's life. */
    private final Map<String, CompletableFuture<BookKeeper>> clients = new ConcurrentHashMap<>();
    /** Each renewed cluster's client for creates, from its latest range (absent: {@link #clients}' does both). */
    private final Map<String, CompletableFuture<BookKeeper>> creators = new ConcurrentHashMap<>();
    /** Replaced clients not closed yet (guarded by itself). */
    private final List<Retired> retired = new ArrayList<>();
    private final java.util.function.Function<BookKeeper, String> openThrough;
    private final long graceNanos;
    private final java.util.function.LongSupplier nanoTime;

    /** A client replaced at {@code sinceNanos}; {@code toldKept}: the log said once why it is kept. */
    private static final class Retired {
        final String cluster;
        final BookKeeper client;
        final long sinceNanos;
        boolean toldKept;

        Retired(String cluster, BookKeeper client, long sinceNanos) {
            this.cluster = cluster;
            this.client = client;
            this.sinceNanos = sinceNanos;
        }
    }
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

    /**
     * A pool that keeps replaced clients until it is closed.
     *
     * @param closer runs the close of a client that was prepared and not used ({@code BookKeeper.close} blocks)
     */
    public ClusterClientPool(String name, ClientFactory factory, java.util.concurrent.Executor closer) {
        this(name, factory, closer, c -> "kept until the pool closes", 0, System::nanoTime);
    }

    /**
     * @param closer     runs the close of a client that is not used any more ({@code BookKeeper.close} blocks)
     * @param openThrough what is still open through a client (a handle that may still be read or written through it),
     *                   null when nothing is
     * @param graceNanos how long a replaced client is kept whatever {@code openThrough} says: operations routed to it before
     *                   it was replaced may still be running
     * @param nanoTime   the clock of the grace
     */
    public ClusterClientPool(String name, ClientFactory factory, java.util.concurrent.Executor closer,
                             java.util.function.Function<BookKeeper, String> openThrough, long graceNanos,
                             java.util.function.LongSupplier nanoTime) {
        this.name = name;
        this.factory = factory;
        this.closer = closer;
        this.openThrough = openThrough;
        this.graceNanos = graceNanos;
        this.nanoTime = nanoTime;
    }

    /**
     * The client new ledgers of {@code cluster} are created through: the one the latest {@link #renew} put in use (it
     * issues ids of the cluster's latest range), else the cluster's client ({@link #get}).
     */
    public CompletableFuture<BookKeeper> forCreate(String cluster) {
        CompletableFuture<BookKeeper> creator = creators.get(cluster);
        return creator != null ? creator : get(cluster);
    }

    /** The client every operation on an existing ledger of {@code cluster} goes through. */
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
     * A client in use by one operation: {@link #closeClient} does not close it before {@link #release} (an operator's
     * cleanup, verify or copy may run while another request, or the cluster's deprecation, closes the cluster's
     * client; closing it under them failed them with "Ledger manager is closed"). Release exactly once.
     */
    public final class Lease {
        private final BookKeeper client;
        private final java.util.concurrent.atomic.AtomicBoolean released =
                new java.util.concurrent.atomic.AtomicBoolean();

        private Lease(BookKeeper client) {
            this.client = client;
        }

        public BookKeeper client() {
            return client;
        }

        /** The operation is over: a client closed meanwhile is closed now, once its last lease is released. */
        public void release() {
            if (released.compareAndSet(false, true)) {
                boolean closeNow;
                synchronized (leases) {
                    int left = leases.merge(client, -1, Integer::sum);
                    if (left <= 0) {
                        leases.remove(client);
                    }
                    closeNow = left <= 0 && closeWhenReleased.remove(client);
                }
                if (closeNow) {
                    closer.execute(() -> {
                        closeQuietly(client);
                        log.info("[{}] BookKeeper client closed: its last operation is over", name);
                    });
                }
            }
        }
    }

    /** Operations running through each client (guarded by itself). */
    private final Map<BookKeeper, Integer> leases = new java.util.IdentityHashMap<>();
    /** Clients {@link #closeClient} took out of use while leased: closed by their last release (guarded by leases). */
    private final java.util.Set<BookKeeper> closeWhenReleased =
            java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    /** {@link #get}, held for one operation: the client is not closed until the lease is released. */
    public CompletableFuture<Lease> lease(String cluster) {
        return get(cluster).thenApply(c -> {
            synchronized (leases) {
                leases.merge(c, 1, Integer::sum);
            }
            return new Lease(c);
        });
    }

    /** Closes {@code c} now unless an operation holds it, else when its last lease is released. */
    private void closeUnlessLeased(BookKeeper c, String cluster) {
        synchronized (leases) {
            if (leases.containsKey(c)) {
                closeWhenReleased.add(c);
                log.info("[{}] bookie-cluster={} BookKeeper client out of use; closed when the operations running "
                        + "through it are over", name, cluster);
                return;
            }
        }
        closeQuietly(c);
        log.info("[{}] bookie-cluster={} BookKeeper client closed", name, cluster);
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

    /** Builds a fresh client for {@code cluster}; completes once it is the one {@link #forCreate} returns. */
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
     * Completes once it is the one {@link #forCreate} returns.
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
            CompletableFuture<BookKeeper> old = creators.put(cluster, CompletableFuture.completedFuture(client));
            if (old != null) {
                // retire the replaced creator (the cluster's client for everything else stays)
                old.thenAccept(previous -> {
                    synchronized (retired) {
                        if (closed) {
                            closeQuietly(previous);
                        } else {
                            retired.add(new Retired(cluster, previous, nanoTime.getAsLong()));
                        }
                    }
                });
            }
            log.info("[{}] bookie-cluster={} new BookKeeper client in use for creates", name, cluster);
            return client;
        });
    }

    /**
     * Closes {@code cluster}'s client (for a cluster that holds nothing any more); a later {@link #get}
     * would build a new one. Completes when it is closed, or, when operations hold it ({@link #lease}), when it is
     * out of use: their last release closes it.
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
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (CompletableFuture<BookKeeper> f : new CompletableFuture[] {clients.remove(cluster),
                creators.remove(cluster)}) {
            if (f != null) {
                closing.add(f.handle((c, e) -> {
                    if (c != null) {
                        closeUnlessLeased(c, cluster);
                    }
                    return null;
                }));
            }
        }
        return CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new));
    }

    /**
     * Closes, on the closer, every replaced client retired for longer than the grace through which nothing is open
     * any more; completes with how many it closes. Called periodically; cheap when there is none.
     */
    public int closeIdleRetired() {
        List<Retired> idle = new ArrayList<>();
        long now = nanoTime.getAsLong();
        synchronized (retired) {
            for (java.util.Iterator<Retired> it = retired.iterator(); it.hasNext(); ) {
                Retired r = it.next();
                if (now - r.sinceNanos < graceNanos) {
                    continue;
                }
                String open = openThrough.apply(r.client);
                if (open == null) {
                    it.remove();
                    idle.add(r);
                } else if (!r.toldKept) {
                    r.toldKept = true;
                    log.info("[{}] bookie-cluster={} replaced BookKeeper client kept open: {}", name, r.cluster, open);
                }
            }
        }
        for (Retired r : idle) {
            closer.execute(() -> {
                closeQuietly(r.client);
                log.info("[{}] bookie-cluster={} replaced BookKeeper client closed: nothing is open through it",
                        name, r.cluster);
            });
        }
        return idle.size();
    }

    /** Replaced clients not closed yet. */
    public int retiredCount() {
        synchronized (retired) {
            return retired.size();
        }
    }

    /** Clusters that have a client (built or being built). */
    public List<String> clusters() {
        java.util.Set<String> all = new java.util.TreeSet<>(clients.keySet());
        all.addAll(creators.keySet());
        return List.copyOf(all);
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
        for (Map<String, CompletableFuture<BookKeeper>> m : List.of(clients, creators)) {
            m.values().forEach(f -> {
                if (f.isDone() && !f.isCompletedExceptionally()) {
                    all.add(f.join());
                } else {
                    f.thenAccept(ClusterClientPool::closeQuietly);
                }
            });
            m.clear();
        }
        Prepared unused = takePrepared();
        if (unused != null) {
            unused.client().thenAccept(ClusterClientPool::closeQuietly);
        }
        synchronized (retired) {
            closed = true;
            retired.forEach(r -> all.add(r.client));
            retired.clear();
        }
        synchronized (leases) {
            all.addAll(closeWhenReleased); // their operations end with the broker
            closeWhenReleased.clear();
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
