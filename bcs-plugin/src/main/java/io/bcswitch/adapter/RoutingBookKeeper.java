package io.bcswitch.adapter;

import io.bcswitch.routing.LedgerRouter;
import io.bcswitch.routing.LedgerRouter.Target;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.client.AsyncCallback.CreateCallback;
import org.apache.bookkeeper.client.AsyncCallback.DeleteCallback;
import org.apache.bookkeeper.client.AsyncCallback.IsClosedCallback;
import org.apache.bookkeeper.client.AsyncCallback.OpenCallback;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BcsForwardingBookKeeper;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.BookieInfoReader.BookieInfo;
import org.apache.bookkeeper.client.ClientContext;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.CreateBuilder;
import org.apache.bookkeeper.client.api.DeleteBuilder;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ListLedgersResultBuilder;
import org.apache.bookkeeper.client.api.OpenBuilder;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.meta.LedgerManagerFactory;
import org.apache.bookkeeper.meta.MetadataClientDriver;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.proto.BookieAddressResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The BookKeeper client handed to the managed-ledger factory. It owns no connection of its own: every
 * call is forwarded to the real client of the cluster the {@link LedgerRouter} picks. Creates (every
 * overload, callback, sync and builder API) go to the active cluster; opens, deletes, metadata reads
 * and closed-checks go to the cluster that owns the ledger id. Handles returned are the real
 * cluster's handles, so reads and writes on them never pass through here.
 *
 * <p>Calls that have no ledger id (ledger manager, metadata driver, bookie info) answer for the
 * active cluster. Callbacks run on the target client's threads, or inline when the target is known.
 *
 * <p>Every handle returned and every creation in flight is told to a {@link LedgerHandleTracker}, shared by all
 * routing clients of the broker. Opens of the callback API are passed on without {@code keepUpdateMetadata}: they
 * always recover (and so close) the ledger, whose metadata cannot change afterwards, and a handle kept updated is
 * registered with the cluster client's ledger manager for good, so it would never be let go even after its user
 * dropped it (Pulsar drops the compacted topic's handle without closing it).
 */
public abstract class RoutingBookKeeper extends BcsForwardingBookKeeper {
    private static final Logger log = LoggerFactory.getLogger(RoutingBookKeeper.class);
    private static final long SYNC_ROUTE_TIMEOUT_SECONDS = 60;

    private final LedgerRouter router;
    private final OrderedExecutor workerPool;
    private final Runnable onClose;
    private final CreateListener createListener;
    private final LedgerHandleTracker tracker;
    private volatile boolean closed;

    /**
     * Built as the {@code LineRoutingBookKeeper} of the Pulsar line the jar is for, which adds the overloads of that
     * line's BookKeeper client.
     *
     * @param router         picks the cluster client for each call
     * @param workerPool     executor handed to managed ledgers through {@link #getMainWorkerPool()}; owned by
     *                       this client, so that closing one cluster's client never takes it away
     * @param onClose        closes the per-cluster clients
     * @param createListener (nullable) told about each managed-ledger data ledger created
     * @param tracker        told about every handle handed out and every creation in flight
     */
    RoutingBookKeeper(LedgerRouter router, OrderedExecutor workerPool, Runnable onClose,
                      CreateListener createListener, LedgerHandleTracker tracker) {
        this.router = router;
        this.workerPool = workerPool;
        this.onClose = onClose;
        this.createListener = createListener;
        this.tracker = tracker;
    }

    /** Told, on the creating client's thread, about each data ledger a managed ledger created through here. */
    public interface CreateListener {
        /** Must not block; must not throw (a throw is logged and ignored). */
        void dataLedgerCreated(String managedLedger, long ledgerId, String cluster);
    }

    /**
     * The custom-metadata key under which managed ledgers tag their ledgers with the managed ledger's name (Pulsar's
     * {@code LedgerMetadataUtils}, whose constants are private before 4.0.11: the value is what the broker writes, the
     * same on every line).
     */
    static final String MANAGED_LEDGER_NAME_PROPERTY = "pulsar/managed-ledger";
    /** The key under which cursor ledgers also carry the cursor's name. */
    static final String CURSOR_NAME_PROPERTY = "pulsar/cursor";

    /**
     * The managed ledger a ledger with {@code customMetadata} is a data ledger of, or null: managed ledgers
     * tag every ledger with their name ({@code pulsar/managed-ledger}) and cursor ledgers also with the
     * cursor name ({@code pulsar/cursor}); compacted, schema and other ledgers carry neither.
     */
    static String dataLedgerOf(Map<String, byte[]> customMetadata) {
        if (customMetadata == null
                || customMetadata.containsKey(CURSOR_NAME_PROPERTY)) {
            return null;
        }
        byte[] name = customMetadata.get(MANAGED_LEDGER_NAME_PROPERTY);
        return name == null || name.length == 0 ? null : new String(name, StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- create

    @Override
    public void asyncCreateLedger(int ensSize, int writeQuorumSize, DigestType digestType, byte[] passwd,
                                  CreateCallback cb, Object ctx) {
        asyncCreateLedger(ensSize, writeQuorumSize, writeQuorumSize, digestType, passwd, cb, ctx, Map.of());
    }

    @Override
    public void asyncCreateLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                  byte[] passwd, CreateCallback cb, Object ctx, Map<String, byte[]> customMetadata) {
        router.forCreate().whenComplete((t, e) -> {
            if (e != null) {
                cb.createComplete(rc(e), null, ctx);
            } else {
                tracker.createStarted(t.cluster());
                t.client().asyncCreateLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd,
                        tracking(t, notifying(cb, t.cluster(), customMetadata)), ctx, customMetadata);
            }
        });
    }

    /** {@code cb}, with the creation counted as done and its handle tracked before it runs. */
    private CreateCallback tracking(Target t, CreateCallback cb) {
        return (rc, lh, ctx) -> {
            tracker.createDone(t.cluster());
            if (rc == BKException.Code.OK && lh != null) {
                tracker.opened(t.cluster(), lh.getId(), lh, true, false);
            }
            cb.createComplete(rc, lh, ctx);
        };
    }

    /** A handle of {@code t}'s cluster handed out through a sync call: tracked. */
    private LedgerHandle track(Target t, LedgerHandle lh, boolean write) {
        tracker.opened(t.cluster(), lh.getId(), lh, write, !write);
        return lh;
    }

    /** Runs a sync create on {@code t}, counted as in flight meanwhile. */
    private LedgerHandle create(Target t, SyncCreate create) throws BKException, InterruptedException {
        tracker.createStarted(t.cluster());
        try {
            return track(t, create.run(t.client()), true);
        } finally {
            tracker.createDone(t.cluster());
        }
    }

    @FunctionalInterface
    private interface SyncCreate {
        LedgerHandle run(BookKeeper client) throws BKException, InterruptedException;
    }

    /** {@code cb}, telling the create listener first when it completes a managed-ledger data ledger. */
    private CreateCallback notifying(CreateCallback cb, String cluster, Map<String, byte[]> customMetadata) {
        if (createListener == null || dataLedgerOf(customMetadata) == null) {
            return cb;
        }
        return (rc, lh, ctx) -> {
            if (rc == BKException.Code.OK && lh != null) {
                created(cluster, customMetadata, lh.getId());
            }
            cb.createComplete(rc, lh, ctx);
        };
    }

    /** Ledger {@code ledgerId} was created on {@code cluster}: the create listener is told when it is a data ledger. */
    private void created(String cluster, Map<String, byte[]> customMetadata, long ledgerId) {
        CreateListener listener = createListener;
        String managedLedger = listener == null ? null : dataLedgerOf(customMetadata);
        if (managedLedger == null) {
            return;
        }
        try {
            listener.dataLedgerCreated(managedLedger, ledgerId, cluster);
        } catch (RuntimeException e) {
            log.warn("[{}] create listener failed for ledger {}: {}", managedLedger, ledgerId, e.toString());
        }
    }

    @Override
    public void asyncCreateLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                     byte[] passwd, CreateCallback cb, Object ctx,
                                     Map<String, byte[]> customMetadata) {
        router.forCreate().whenComplete((t, e) -> {
            if (e != null) {
                cb.createComplete(rc(e), null, ctx);
            } else {
                tracker.createStarted(t.cluster());
                t.client().asyncCreateLedgerAdv(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd,
                        tracking(t, cb), ctx, customMetadata);
            }
        });
    }

    @Override
    public void asyncCreateLedgerAdv(long ledgerId, int ensSize, int writeQuorumSize, int ackQuorumSize,
                                     DigestType digestType, byte[] passwd, CreateCallback cb, Object ctx,
                                     Map<String, byte[]> customMetadata) {
        router.forCreate().whenComplete((t, e) -> {
            if (e != null) {
                cb.createComplete(rc(e), null, ctx);
            } else {
                tracker.createStarted(t.cluster());
                t.client().asyncCreateLedgerAdv(ledgerId, ensSize, writeQuorumSize, ackQuorumSize, digestType,
                        passwd, tracking(t, cb), ctx, customMetadata);
            }
        });
    }

    @Override
    public LedgerHandle createLedger(DigestType digestType, byte[] passwd) throws BKException, InterruptedException {
        return create(sync(router.forCreate()), c -> c.createLedger(digestType, passwd));
    }

    @Override
    public LedgerHandle createLedger(int ensSize, int qSize, DigestType digestType, byte[] passwd)
            throws InterruptedException, BKException {
        return create(sync(router.forCreate()), c -> c.createLedger(ensSize, qSize, digestType, passwd));
    }

    @Override
    public LedgerHandle createLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                     byte[] passwd) throws InterruptedException, BKException {
        return create(sync(router.forCreate()),
                c -> c.createLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd));
    }

    @Override
    public LedgerHandle createLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                     byte[] passwd, Map<String, byte[]> customMetadata)
            throws InterruptedException, BKException {
        return create(sync(router.forCreate()),
                c -> c.createLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, customMetadata));
    }

    @Override
    public LedgerHandle createLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                        byte[] passwd) throws InterruptedException, BKException {
        return create(sync(router.forCreate()),
                c -> c.createLedgerAdv(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd));
    }

    @Override
    public LedgerHandle createLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                        byte[] passwd, Map<String, byte[]> customMetadata)
            throws InterruptedException, BKException {
        return create(sync(router.forCreate()),
                c -> c.createLedgerAdv(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, customMetadata));
    }

    @Override
    public LedgerHandle createLedgerAdv(long ledgerId, int ensSize, int writeQuorumSize, int ackQuorumSize,
                                        DigestType digestType, byte[] passwd, Map<String, byte[]> customMetadata)
            throws InterruptedException, BKException {
        return create(sync(router.forCreate()), c -> c.createLedgerAdv(ledgerId, ensSize, writeQuorumSize,
                ackQuorumSize, digestType, passwd, customMetadata));
    }

    /**
     * Managed ledgers of newer Pulsar lines (5.0) create their ledgers through this builder, not the callback API: its
     * creations tell the create listener as {@link #asyncCreateLedger} does.
     */
    @Override
    public CreateBuilder newCreateLedgerOp() {
        return RecordedOpBuilder.create(router, tracker, this::created);
    }

    // ---------------------------------------------------------------- open

    /**
     * Every callback-API open of every BookKeeper line arrives here, never kept updated (see the class comment):
     * the overload with {@code keepUpdateMetadata} that later lines add is routed here by {@code LineRoutingBookKeeper}
     * (per Pulsar line, {@code src/main/pulsar-<line>/java}).
     */
    @Override
    public void asyncOpenLedger(long lId, DigestType digestType, byte[] passwd, OpenCallback cb, Object ctx) {
        router.forLedger(lId).whenComplete((t, e) -> {
            if (e != null) {
                cb.openComplete(rc(e), null, ctx);
            } else {
                t.client().asyncOpenLedger(lId, digestType, passwd, tracked(t, namingFailures(t, lId, "open", cb)),
                        ctx);
            }
        });
    }

    @Override
    public void asyncOpenLedgerNoRecovery(long lId, DigestType digestType, byte[] passwd, OpenCallback cb,
                                          Object ctx) {
        router.forLedger(lId).whenComplete((t, e) -> {
            if (e != null) {
                cb.openComplete(rc(e), null, ctx);
            } else {
                t.client().asyncOpenLedgerNoRecovery(lId, digestType, passwd,
                        tracked(t, namingFailures(t, lId, "open (no recovery)", cb)), ctx);
            }
        });
    }

    @Override
    public LedgerHandle openLedger(long lId, DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        Target t = sync(router.forLedger(lId));
        return track(t, t.client().openLedger(lId, digestType, passwd), false);
    }

    @Override
    public LedgerHandle openLedgerNoRecovery(long lId, DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        Target t = sync(router.forLedger(lId));
        return track(t, t.client().openLedgerNoRecovery(lId, digestType, passwd), false);
    }

    @Override
    public OpenBuilder newOpenLedgerOp() {
        return RecordedOpBuilder.open(router, tracker);
    }

    // ---------------------------------------------------------------- delete, metadata

    @Override
    public void asyncDeleteLedger(long lId, DeleteCallback cb, Object ctx) {
        router.forLedger(lId).whenComplete((t, e) -> {
            if (e != null) {
                cb.deleteComplete(rc(e), ctx);
            } else {
                t.client().asyncDeleteLedger(lId, (rc, c) -> {
                    if (rc == BKException.Code.OK) {
                        deleted(router, tracker, t.cluster(), lId);
                    }
                    cb.deleteComplete(rc, c);
                }, ctx);
            }
        });
    }

    @Override
    public void deleteLedger(long lId) throws InterruptedException, BKException {
        Target t = sync(router.forLedger(lId));
        t.client().deleteLedger(lId);
        deleted(router, tracker, t.cluster(), lId);
    }

    /**
     * Pulsar deleted a ledger on {@code cluster}: its handles there are done with, and if its home was a migrated
     * copy, the original on the cluster that issued the id is not needed either, so it is deleted too (best effort;
     * cleanup removes what is left).
     */
    static void deleted(LedgerRouter router, LedgerHandleTracker tracker, String cluster, long ledgerId) {
        tracker.pulsarDeleted(cluster, ledgerId);
        router.originalOf(ledgerId).thenCompose(orig -> orig.isEmpty() ? CompletableFuture.completedFuture(null)
                : orig.get().client().newDeleteLedgerOp().withLedgerId(ledgerId).execute().whenComplete((v, e) -> {
                    if (e == null) {
                        tracker.deleted(orig.get().cluster(), ledgerId);
                        log.info("bookie-cluster={} ledger={} original of a deleted migrated ledger deleted",
                                orig.get().cluster(), ledgerId);
                    } else {
                        log.info("bookie-cluster={} ledger={} original of a deleted migrated ledger not deleted "
                                + "(cleanup will): {}", orig.get().cluster(), ledgerId, e.toString());
                    }
                }));
    }

    @Override
    public DeleteBuilder newDeleteLedgerOp() {
        return RecordedOpBuilder.delete(router, tracker);
    }

    @Override
    public CompletableFuture<LedgerMetadata> getLedgerMetadata(long ledgerId) {
        return router.forLedger(ledgerId).thenCompose(t -> t.client().getLedgerMetadata(ledgerId));
    }

    @Override
    public void asyncIsClosed(long lId, IsClosedCallback cb, Object ctx) {
        router.forLedger(lId).whenComplete((t, e) -> {
            if (e != null) {
                cb.isClosedComplete(rc(e), false, ctx);
            } else {
                t.client().asyncIsClosed(lId, cb, ctx);
            }
        });
    }

    @Override
    public boolean isClosed(long lId) throws BKException, InterruptedException {
        return sync(router.forLedger(lId)).client().isClosed(lId);
    }

    // ---------------------------------------------------------------- no ledger id: the active cluster

    @Override
    public ListLedgersResultBuilder newListLedgersOp() {
        return active().newListLedgersOp();
    }

    @Override
    public LedgerManager getLedgerManager() {
        return active().getLedgerManager();
    }

    @Override
    public LedgerManagerFactory getLedgerManagerFactory() {
        return active().getLedgerManagerFactory();
    }

    @Override
    public MetadataClientDriver getMetadataClientDriver() {
        return active().getMetadataClientDriver();
    }

    @Override
    public BookieAddressResolver getBookieAddressResolver() {
        return active().getBookieAddressResolver();
    }

    @Override
    public Map<BookieId, BookieInfo> getBookieInfo() throws BKException, InterruptedException {
        return active().getBookieInfo();
    }

    @Override
    public ClientContext getClientCtx() {
        return active().getClientCtx();
    }

    @Override
    protected ClientConfiguration getConf() {
        return new ClientConfiguration();
    }

    @Override
    public OrderedExecutor getMainWorkerPool() {
        return workerPool;
    }

    // ---------------------------------------------------------------- lifecycle

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        onClose.run();
        workerPool.shutdown();
    }

    /** The active cluster's client, for calls without a ledger id that later BookKeeper releases add. */
    protected final CompletableFuture<BookKeeper> activeClient() {
        return router.forCreate().thenApply(Target::client);
    }

    private BookKeeper active() {
        try {
            return sync(router.forCreate()).client();
        } catch (BKException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("active bookie cluster has no usable client: " + e.getMessage(), e);
        }
    }

    private static Target sync(CompletableFuture<Target> f) throws BKException, InterruptedException {
        try {
            return f.get(SYNC_ROUTE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof BKException bke) {
                throw bke;
            }
            log.warn("Routing failed: {}", c.toString());
            throw BKException.create(c instanceof org.apache.bookkeeper.client.api.BKException api
                    ? api.getCode() : BKException.Code.UnexpectedConditionException);
        } catch (TimeoutException e) {
            log.warn("Routing failed: no bookie-cluster client within {}s", SYNC_ROUTE_TIMEOUT_SECONDS);
            throw BKException.create(BKException.Code.TimeoutException);
        }
    }

    /** {@code cb}, with the handle it gets tracked first. */
    private OpenCallback tracked(Target t, OpenCallback cb) {
        return (rc, lh, ctx) -> {
            if (rc == BKException.Code.OK && lh != null) {
                tracker.opened(t.cluster(), lh.getId(), lh, false, true);
            }
            cb.openComplete(rc, lh, ctx);
        };
    }

    /**
     * BookKeeper's open errors name neither the ledger's cluster nor, often, the ledger: when a cluster is
     * down, operators need both to know what is unreadable and why, so failed opens are logged here.
     */
    private static OpenCallback namingFailures(Target t, long ledgerId, String op, OpenCallback cb) {
        return (rc, lh, ctx) -> {
            if (rc != BKException.Code.OK) {
                log.warn("bookie-cluster={} ledger={} {} failed: {}", t.cluster(), ledgerId, op,
                        BKException.getMessage(rc));
            }
            cb.openComplete(rc, lh, ctx);
        };
    }

    private static int rc(Throwable e) {
        Throwable t = e;
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof org.apache.bookkeeper.client.api.BKException bke) {
            return bke.getCode();
        }
        log.warn("Routing failed: {}", t.toString());
        return BKException.Code.UnexpectedConditionException;
    }
}
