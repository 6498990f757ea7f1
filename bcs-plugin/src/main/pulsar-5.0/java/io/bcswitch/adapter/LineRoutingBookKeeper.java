package io.bcswitch.adapter;

import io.bcswitch.routing.LedgerRouter;
import org.apache.bookkeeper.client.AsyncCallback.OpenCallback;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import java.util.concurrent.CompletableFuture;

/**
 * The routing client for the Pulsar 5.0 line (BookKeeper 4.18): {@link RoutingBookKeeper} plus the overloads this
 * BookKeeper release has and older ones lack, and the metadata-service check 4.18 adds. Every line has its own
 * version of this class ({@code src/main/pulsar-<line>/java}; the 4.2 one lacks only that check, which BookKeeper
 * 4.17.3 does not declare); the shared code only constructs it.
 */
final class LineRoutingBookKeeper extends RoutingBookKeeper {

    LineRoutingBookKeeper(LedgerRouter router, OrderedExecutor workerPool, Runnable onClose,
                          CreateListener createListener, LedgerHandleTracker tracker) {
        super(router, workerPool, onClose, createListener, tracker);
    }

    /** Opened like every other open, not kept updated (see {@link RoutingBookKeeper}). */
    @Override
    public void asyncOpenLedger(long lId, DigestType digestType, byte[] passwd, OpenCallback cb, Object ctx,
                                boolean keepUpdateMetadata) {
        asyncOpenLedger(lId, digestType, passwd, cb, ctx);
    }

    /** Opened like every other open, not kept updated (see {@link RoutingBookKeeper}). */
    @Override
    public LedgerHandle openLedger(long lId, DigestType digestType, byte[] passwd, boolean keepUpdateMetadata)
            throws BKException, InterruptedException {
        return openLedger(lId, digestType, passwd);
    }

    /**
     * Whether the active cluster's metadata service answers: the base class would ask the unconnected client this
     * routing client is built on, which has no driver.
     */
    @Override
    public CompletableFuture<Boolean> isDriverMetadataServiceAvailable() {
        return activeClient().thenCompose(BookKeeper::isDriverMetadataServiceAvailable);
    }
}
