package io.bcswitch.adapter;

import static io.bcswitch.adapter.RouteLookups.rc;
import static io.bcswitch.adapter.RouteLookups.sync;

import io.bcswitch.routing.LedgerRouter;
import io.bcswitch.routing.LedgerRouter.Target;
import java.util.function.BiConsumer;
import org.apache.bookkeeper.client.AsyncCallback.OpenCallback;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.BookKeeper.DigestType;
import org.apache.bookkeeper.client.LedgerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open path of {@link RoutingBookKeeper}: every open goes to the cluster that owns the ledger id, has its handle
 * tracked, and a failed callback open is logged with the ledger and its cluster. Logs under
 * {@link RoutingBookKeeper}'s logger, as before this was part of it.
 */
final class RoutedOpens {
    private static final Logger log = LoggerFactory.getLogger(RoutingBookKeeper.class);

    private final LedgerRouter router;
    private final LedgerHandleTracker tracker;

    /**
     * @param router  picks the cluster client that owns each ledger
     * @param tracker told about every handle opened
     */
    RoutedOpens(LedgerRouter router, LedgerHandleTracker tracker) {
        this.router = router;
        this.tracker = tracker;
    }

    void asyncOpenLedger(long lId, DigestType digestType, byte[] passwd, OpenCallback cb, Object ctx) {
        onOwner(lId, "open", cb, ctx, (client, wrapped) -> client.asyncOpenLedger(lId, digestType, passwd, wrapped,
                ctx));
    }

    void asyncOpenLedgerNoRecovery(long lId, DigestType digestType, byte[] passwd, OpenCallback cb, Object ctx) {
        onOwner(lId, "open (no recovery)", cb, ctx, (client, wrapped) -> client.asyncOpenLedgerNoRecovery(lId,
                digestType, passwd, wrapped, ctx));
    }

    /**
     * Runs an asynchronous open on the client of the cluster that owns {@code lId}, with {@code cb} logging a failure
     * and tracking the handle; an open that cannot be routed completes {@code cb} with the route's error code.
     */
    private void onOwner(long lId, String op, OpenCallback cb, Object ctx, BiConsumer<BookKeeper, OpenCallback> open) {
        router.forLedger(lId).whenComplete((t, e) -> {
            if (e != null) {
                cb.openComplete(rc(e), null, ctx);
            } else {
                open.accept(t.client(), tracked(t, namingFailures(t, lId, op, cb)));
            }
        });
    }

    LedgerHandle openLedger(long lId, DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        Target t = sync(router.forLedger(lId));
        return track(t, t.client().openLedger(lId, digestType, passwd));
    }

    LedgerHandle openLedgerNoRecovery(long lId, DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        Target t = sync(router.forLedger(lId));
        return track(t, t.client().openLedgerNoRecovery(lId, digestType, passwd));
    }

    /** A handle of {@code t}'s cluster opened through a sync call: tracked. */
    private LedgerHandle track(Target t, LedgerHandle lh) {
        tracker.opened(t.cluster(), t.client(), lh.getId(), lh, false, true);
        return lh;
    }

    /** {@code cb}, with the handle it gets tracked first. */
    private OpenCallback tracked(Target t, OpenCallback cb) {
        return (rc, lh, ctx) -> {
            if (rc == BKException.Code.OK && lh != null) {
                tracker.opened(t.cluster(), t.client(), lh.getId(), lh, false, true);
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
}
