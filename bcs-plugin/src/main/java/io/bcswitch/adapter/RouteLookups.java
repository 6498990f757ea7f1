package io.bcswitch.adapter;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.routing.LedgerRouter.Target;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.client.BKException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A route the {@link io.bcswitch.routing.LedgerRouter} looks up, as the classic BookKeeper API of the routing client
 * needs it: waited for by its sync calls, its failure turned into a return code for its callbacks. Logs under
 * {@link RoutingBookKeeper}'s logger, as before these were its own.
 */
final class RouteLookups {
    private static final Logger log = LoggerFactory.getLogger(RoutingBookKeeper.class);
    private static final long SYNC_ROUTE_TIMEOUT_SECONDS = 60;

    private RouteLookups() {
    }

    static Target sync(CompletableFuture<Target> f) throws BKException, InterruptedException {
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

    static int rc(Throwable e) {
        Throwable t = Failures.unwrap(e);
        if (t instanceof org.apache.bookkeeper.client.api.BKException bke) {
            return bke.getCode();
        }
        log.warn("Routing failed: {}", t.toString());
        return BKException.Code.UnexpectedConditionException;
    }
}
