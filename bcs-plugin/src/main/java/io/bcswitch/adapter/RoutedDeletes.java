package io.bcswitch.adapter;

import static io.bcswitch.adapter.RouteLookups.rc;
import static io.bcswitch.adapter.RouteLookups.sync;

import io.bcswitch.routing.LedgerRouter;
import io.bcswitch.routing.LedgerRouter.Target;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.AsyncCallback.DeleteCallback;
import org.apache.bookkeeper.client.BKException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delete path of {@link RoutingBookKeeper} (its builder deletes, {@link RecordedOpBuilder}, end here too): a
 * delete goes to the cluster that owns the ledger id and, once done, lets go of the ledger's handles and of the
 * original a migrated ledger was copied from. Logs under {@link RoutingBookKeeper}'s logger, as before this was part
 * of it.
 */
final class RoutedDeletes {
    private static final Logger log = LoggerFactory.getLogger(RoutingBookKeeper.class);

    private final LedgerRouter router;
    private final LedgerHandleTracker tracker;

    /**
     * @param router  picks the cluster client that owns each ledger
     * @param tracker told about every ledger deleted
     */
    RoutedDeletes(LedgerRouter router, LedgerHandleTracker tracker) {
        this.router = router;
        this.tracker = tracker;
    }

    void asyncDeleteLedger(long lId, DeleteCallback cb, Object ctx) {
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

    void deleteLedger(long lId) throws InterruptedException, BKException {
        Target t = sync(router.forLedger(lId));
        t.client().deleteLedger(lId);
        deleted(router, tracker, t.cluster(), lId);
    }

    /**
     * Pulsar deleted a ledger on {@code cluster}: its handles there are done with, and if its home was a migrated
     * copy, the original on the cluster that issued the id is not needed either, so it is deleted too, and so is
     * every other copy the migration made of it (one left on a cluster it was moved through would be read by nothing
     * and deleted by nothing: no home is left to check it against). Best effort; cleanup removes what is left.
     */
    static void deleted(LedgerRouter router, LedgerHandleTracker tracker, String cluster, long ledgerId) {
        tracker.pulsarDeleted(cluster, ledgerId);
        router.copyHoldersOf(ledgerId).thenAccept(holders -> holders.forEach(h -> deleteCopy(tracker, h, ledgerId)))
                .exceptionally(e -> {
                    log.info("ledger={} copies of a deleted migrated ledger not looked for (cleanup will): {}",
                            ledgerId, e.toString());
                    return null;
                });
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

    /** Deletes ledger {@code ledgerId} on {@code h}'s cluster if a copy the migration made is there (nothing else). */
    private static void deleteCopy(LedgerHandleTracker tracker, Target h, long ledgerId) {
        h.client().getLedgerMetadata(ledgerId).thenCompose(m -> {
            if (!m.getCustomMetadata().containsKey(BookKeeperLedgerCopier.COPY_OF_KEY)) {
                return CompletableFuture.completedFuture(false); // not a copy of ours: never ours to delete
            }
            return h.client().newDeleteLedgerOp().withLedgerId(ledgerId).execute().thenApply(v -> true);
        }).whenComplete((gone, e) -> {
            if (e == null && gone) {
                tracker.deleted(h.cluster(), ledgerId);
                log.info("bookie-cluster={} ledger={} copy of a deleted migrated ledger deleted", h.cluster(),
                        ledgerId);
            } else if (e != null && !(io.bcswitch.concurrent.Failures.unwrap(e)
                    instanceof BKException.BKNoSuchLedgerExistsOnMetadataServerException)) {
                log.info("bookie-cluster={} ledger={} copy of a deleted migrated ledger not deleted (cleanup will): {}",
                        h.cluster(), ledgerId, e.toString());
            }
        });
    }
}
