package io.bcswitch.adapter;

import static io.bcswitch.adapter.RouteLookups.rc;
import static io.bcswitch.adapter.RouteLookups.sync;

import io.bcswitch.adapter.RoutingBookKeeper.CreateListener;
import io.bcswitch.routing.LedgerRouter;
import io.bcswitch.routing.LedgerRouter.Target;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.bookkeeper.client.AsyncCallback.CreateCallback;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.BookKeeper.DigestType;
import org.apache.bookkeeper.client.LedgerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The create path of {@link RoutingBookKeeper}: every creation goes to the active cluster, is counted as in flight
 * until it completes, has its handle tracked, and, when it made a managed-ledger data ledger, is told to the create
 * listener. Logs under {@link RoutingBookKeeper}'s logger, as before this was part of it.
 */
final class RoutedCreates {
    private static final Logger log = LoggerFactory.getLogger(RoutingBookKeeper.class);

    private final LedgerRouter router;
    private final LedgerHandleTracker tracker;
    private final CreateListener createListener;

    /**
     * @param router         picks the active cluster's client
     * @param tracker        told about every handle created and every creation in flight
     * @param createListener (nullable) told about each managed-ledger data ledger created
     */
    RoutedCreates(LedgerRouter router, LedgerHandleTracker tracker, CreateListener createListener) {
        this.router = router;
        this.tracker = tracker;
        this.createListener = createListener;
    }

    void asyncCreateLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                           byte[] passwd, CreateCallback cb, Object ctx, Map<String, byte[]> customMetadata) {
        onActive(cb, ctx, t -> notifying(cb, t.cluster(), customMetadata), (client, tracked) ->
                client.asyncCreateLedger(ensSize, writeQuorumSize, ackQuorumSize, digestType, passwd, tracked, ctx,
                        customMetadata));
    }

    /**
     * Runs an asynchronous create on the active cluster's client, with the callback {@code wrap} makes for that
     * cluster counted as in flight and its handle tracked; a create that cannot be routed completes {@code cb} with
     * the route's error code.
     */
    private void onActive(CreateCallback cb, Object ctx, Function<Target, CreateCallback> wrap,
                          BiConsumer<BookKeeper, CreateCallback> create) {
        router.forCreate().whenComplete((t, e) -> {
            if (e != null) {
                cb.createComplete(rc(e), null, ctx);
            } else {
                tracker.createStarted(t.cluster());
                create.accept(t.client(), tracking(t, wrap.apply(t)));
            }
        });
    }

    /** {@code cb}, with the creation counted as done and its handle tracked before it runs. */
    private CreateCallback tracking(Target t, CreateCallback cb) {
        return (rc, lh, ctx) -> {
            tracker.createDone(t.cluster());
            if (rc == BKException.Code.OK && lh != null) {
                tracker.opened(t.cluster(), t.client(), lh.getId(), lh, true, false);
            }
            cb.createComplete(rc, lh, ctx);
        };
    }

    /** A handle of {@code t}'s cluster created through a sync call: tracked. */
    private LedgerHandle track(Target t, LedgerHandle lh) {
        tracker.opened(t.cluster(), t.client(), lh.getId(), lh, true, false);
        return lh;
    }

    /** Runs a sync create on the active cluster, counted as in flight meanwhile. */
    LedgerHandle create(SyncCreate create) throws BKException, InterruptedException {
        Target t = sync(router.forCreate());
        tracker.createStarted(t.cluster());
        try {
            return track(t, create.run(t.client()));
        } finally {
            tracker.createDone(t.cluster());
        }
    }

    @FunctionalInterface
    interface SyncCreate {
        LedgerHandle run(BookKeeper client) throws BKException, InterruptedException;
    }

    /** {@code cb}, telling the create listener first when it completes a managed-ledger data ledger. */
    private CreateCallback notifying(CreateCallback cb, String cluster, Map<String, byte[]> customMetadata) {
        if (createListener == null || RoutingBookKeeper.dataLedgerOf(customMetadata) == null) {
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
    void created(String cluster, Map<String, byte[]> customMetadata, long ledgerId) {
        CreateListener listener = createListener;
        String managedLedger = listener == null ? null : RoutingBookKeeper.dataLedgerOf(customMetadata);
        if (managedLedger == null) {
            return;
        }
        try {
            listener.dataLedgerCreated(managedLedger, ledgerId, cluster);
        } catch (RuntimeException e) {
            log.warn("[{}] create listener failed for ledger {}: {}", managedLedger, ledgerId, e.toString());
        }
    }

    void asyncCreateLedgerAdv(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
                              byte[] passwd, CreateCallback cb, Object ctx, Map<String, byte[]> customMetadata) {
        onActive(cb, ctx, t -> cb, (client, tracked) -> client.asyncCreateLedgerAdv(ensSize, writeQuorumSize,
                ackQuorumSize, digestType, passwd, tracked, ctx, customMetadata));
    }

    void asyncCreateLedgerAdv(long ledgerId, int ensSize, int writeQuorumSize, int ackQuorumSize,
                              DigestType digestType, byte[] passwd, CreateCallback cb, Object ctx,
                              Map<String, byte[]> customMetadata) {
        onActive(cb, ctx, t -> cb, (client, tracked) -> client.asyncCreateLedgerAdv(ledgerId, ensSize,
                writeQuorumSize, ackQuorumSize, digestType, passwd, tracked, ctx, customMetadata));
    }
}
