package io.bcswitch.adapter;

import io.bcswitch.routing.LedgerRouter;
import org.apache.bookkeeper.common.util.OrderedExecutor;

/**
 * The routing client for the Pulsar 4.0 line (BookKeeper 4.17.2): {@link RoutingBookKeeper} as it is; this
 * BookKeeper release has no {@code openLedger(..., keepUpdateMetadata)} overloads to route. Every line's source folder
 * ({@code src/main/pulsar-<line>/java}) has its own version of this class; the shared code only constructs it.
 */
final class LineRoutingBookKeeper extends RoutingBookKeeper {

    LineRoutingBookKeeper(LedgerRouter router, OrderedExecutor workerPool, Runnable onClose,
                          CreateListener createListener, LedgerHandleTracker tracker) {
        super(router, workerPool, onClose, createListener, tracker);
    }
}
