package io.bcswitch.adapter;

import static io.bcswitch.adapter.RouteLookups.rc;
import static io.bcswitch.adapter.RouteLookups.sync;

import io.bcswitch.routing.LedgerRouter;
import io.bcswitch.routing.LedgerRouter.Target;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
    private final LedgerRouter router;
    private final OrderedExecutor workerPool;
    private final Runnable onClose;
    private final LedgerHandleTracker tracker;
    private final RoutedCreates creates;
    private final RoutedOpens opens;
    private final RoutedDeletes deletes;
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
        this.tracker = tracker;
        this.creates = new RoutedCreates(router, tracker, createListener);
        this.opens = new RoutedOpens(router, tracker);
        this.deletes = new RoutedDeletes(router, tracker);
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
        creates.asyncCreateLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, cb, ctx,
                customMetadata);
    }

    @Override
    public void asyncCreateLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                     byte[] passwd, CreateCallback cb, Object ctx,
                                     Map<String, byte[]> customMetadata) {
        creates.asyncCreateLedgerAdv(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, cb, ctx,
                customMetadata);
    }

    @Override
    public void asyncCreateLedgerAdv(long ledgerId, int ensSize, int writeQuorumSize, int ackQuorumSize,
                                     DigestType digestType, byte[] passwd, CreateCallback cb, Object ctx,
                                     Map<String, byte[]> customMetadata) {
        creates.asyncCreateLedgerAdv(ledgerId, ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, cb, ctx,
                customMetadata);
    }

    @Override
    public LedgerHandle createLedger(DigestType digestType, byte[] passwd) throws BKException, InterruptedException {
        return creates.create(c -> c.createLedger(digestType, passwd));
    }

    @Override
    public LedgerHandle createLedger(int ensSize, int qSize, DigestType digestType, byte[] passwd)
            throws InterruptedException, BKException {
        return creates.create(c -> c.createLedger(ensSize, qSize, digestType, passwd));
    }

    @Override
    public LedgerHandle createLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                     byte[] passwd) throws InterruptedException, BKException {
        return creates.create(c -> c.createLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd));
    }

    @Override
    public LedgerHandle createLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                     byte[] passwd, Map<String, byte[]> customMetadata)
            throws InterruptedException, BKException {
        return creates.create(
                c -> c.createLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, customMetadata));
    }

    @Override
    public LedgerHandle createLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                        byte[] passwd) throws InterruptedException, BKException {
        return creates.create(c -> c.createLedgerAdv(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd));
    }

    @Override
    public LedgerHandle createLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                                        byte[] passwd, Map<String, byte[]> customMetadata)
            throws InterruptedException, BKException {
        return creates.create(
                c -> c.createLedgerAdv(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, customMetadata));
    }

    @Override
    public LedgerHandle createLedgerAdv(long ledgerId, int ensSize, int writeQuorumSize, int ackQuorumSize,
                                        DigestType digestType, byte[] passwd, Map<String, byte[]> customMetadata)
            throws InterruptedException, BKException {
        return creates.create(c -> c.createLedgerAdv(ledgerId, ensSize, writeQuorumSize, ackQuorumSize, digestType,
                passwd, customMetadata));
    }

    /**
     * Managed ledgers of newer Pulsar lines (5.0) create their ledgers through this builder, not the callback API: its
     * creations tell the create listener as {@link #asyncCreateLedger} does.
     */
    @Override
    public CreateBuilder newCreateLedgerOp() {
        return RecordedOpBuilder.create(router, tracker, creates::created);
    }

    // ---------------------------------------------------------------- open

    /**
     * Every callback-API open of every BookKeeper line arrives here, never kept updated (see the class comment):
     * the overload with {@code keepUpdateMetadata} that later lines add is routed here by {@code LineRoutingBookKeeper}
     * (per Pulsar line, {@code src/main/pulsar-<line>/java}).
     */
    @Override
    public void asyncOpenLedger(long lId, DigestType digestType, byte[] passwd, OpenCallback cb, Object ctx) {
        opens.asyncOpenLedger(lId, digestType, passwd, cb, ctx);
    }

    @Override
    public void asyncOpenLedgerNoRecovery(long lId, DigestType digestType, byte[] passwd, OpenCallback cb,
                                          Object ctx) {
        opens.asyncOpenLedgerNoRecovery(lId, digestType, passwd, cb, ctx);
    }

    @Override
    public LedgerHandle openLedger(long lId, DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        return opens.openLedger(lId, digestType, passwd);
    }

    @Override
    public LedgerHandle openLedgerNoRecovery(long lId, DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        return opens.openLedgerNoRecovery(lId, digestType, passwd);
    }

    @Override
    public OpenBuilder newOpenLedgerOp() {
        return RecordedOpBuilder.open(router, tracker);
    }

    // ---------------------------------------------------------------- delete, metadata

    @Override
    public void asyncDeleteLedger(long lId, DeleteCallback cb, Object ctx) {
        deletes.asyncDeleteLedger(lId, cb, ctx);
    }

    @Override
    public void deleteLedger(long lId) throws InterruptedException, BKException {
        deletes.deleteLedger(lId);
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
}
