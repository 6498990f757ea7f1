package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.bookkeeper.client.BKException;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;

/** Which failures make a failed copy worth retrying: a cluster that cannot be reached for now, nothing else. */
class UnreachableClusterTest {

    @Test
    void bookKeepersCodesOfAClusterAwayAreRetriable() {
        for (int code : List.of(BKException.Code.ReadException, BKException.Code.NoBookieAvailableException,
                BKException.Code.NotEnoughBookiesException, BKException.Code.BookieHandleNotAvailableException,
                BKException.Code.ZKException, BKException.Code.WriteException, BKException.Code.MetaStoreException,
                BKException.Code.AddEntryQuorumTimeoutException, BKException.Code.TimeoutException,
                BKException.Code.WriteOnReadOnlyBookieException, BKException.Code.TooManyRequestsException)) {
            assertTrue(UnreachableCluster.isCause(BKException.create(code)), BKException.getMessage(code));
        }
    }

    @Test
    void bookKeepersCodesOfTheLedgerItselfAreNot() {
        for (int code : List.of(BKException.Code.DigestMatchException, BKException.Code.LedgerFencedException,
                BKException.Code.NoSuchLedgerExistsOnMetadataServerException, BKException.Code.LedgerExistException,
                BKException.Code.UnauthorizedAccessException)) {
            assertFalse(UnreachableCluster.isCause(BKException.create(code)), BKException.getMessage(code));
        }
    }

    @Test
    void aMetadataServiceAwayOrATimeoutIsRetriable() {
        assertTrue(UnreachableCluster.isCause(new KeeperException.ConnectionLossException()));
        assertTrue(UnreachableCluster.isCause(new KeeperException.SessionExpiredException()));
        assertTrue(UnreachableCluster.isCause(new KeeperException.OperationTimeoutException()));
        assertTrue(UnreachableCluster.isCause(new java.util.concurrent.TimeoutException()));
        assertFalse(UnreachableCluster.isCause(new KeeperException.NoNodeException()));
        assertFalse(UnreachableCluster.isCause(new IllegalStateException("x")));
        assertFalse(UnreachableCluster.isCause(null));
    }

    @Test
    void theFirstBookKeeperErrorAmongTheCausesDecides() {
        assertTrue(UnreachableCluster.isCause(new CompletionException(new RuntimeException(
                BKException.create(BKException.Code.ReadException)))));
        assertTrue(UnreachableCluster.isCause(new RuntimeException(new KeeperException.ConnectionLossException())));
        Exception ledgerGone = BKException.create(BKException.Code.NoSuchLedgerExistsException);
        ledgerGone.initCause(new KeeperException.ConnectionLossException());
        assertFalse(UnreachableCluster.isCause(ledgerGone), "the ledger is gone, whatever lies under it");
    }
}
