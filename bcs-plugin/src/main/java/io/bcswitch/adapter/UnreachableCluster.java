package io.bcswitch.adapter;

import java.util.Set;
import org.apache.bookkeeper.client.api.BKException;
import org.apache.zookeeper.KeeperException;

/**
 * Which failures of a BookKeeper call say that a cluster cannot be reached for now rather than that something is
 * wrong with the ledger: its bookies do not answer (restarting, say, after they lost their metadata session), too
 * few of them are writable, a request timed out, its metadata service is away. A copy that failed for one of these
 * may well work a little later; one that failed for anything else (a digest or payload mismatch, an id the bookies
 * refuse, a collision) will not.
 */
final class UnreachableCluster {
    private static final Set<Integer> CODES = Set.of(
            BKException.Code.ReadException,
            BKException.Code.NoBookieAvailableException,
            BKException.Code.NotEnoughBookiesException,
            BKException.Code.BookieHandleNotAvailableException,
            BKException.Code.ZKException,
            BKException.Code.WriteException,
            BKException.Code.MetaStoreException,
            BKException.Code.AddEntryQuorumTimeoutException,
            BKException.Code.TimeoutException,
            BKException.Code.WriteOnReadOnlyBookieException,
            BKException.Code.TooManyRequestsException);

    private UnreachableCluster() {
    }

    /** Whether {@code failure} (unwrapped, or any of its causes) says a cluster cannot be reached for now. */
    static boolean isCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof BKException bke) {
                return CODES.contains(bke.getCode());
            }
            if (t instanceof KeeperException.ConnectionLossException
                    || t instanceof KeeperException.SessionExpiredException
                    || t instanceof KeeperException.OperationTimeoutException
                    || t instanceof java.util.concurrent.TimeoutException) {
                return true;
            }
        }
        return false;
    }
}
