package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.api.DigestType;
import org.junit.jupiter.api.Test;

/**
 * The copier's listing of a bookie cluster's ledgers, on a real one: it must name ledgers of every id, those of the
 * ranges of clusters switched to after the first ({@code 1 << 32} and above, stored under BookKeeper's long
 * hierarchical paths) as well as the first cluster's. BookKeeper's client API lists only the short ones, so the
 * end of PROMOTE never saw a copy of a ledger another cluster had issued, and verify and cleanup never listed one.
 */
class LedgerListingTest extends CopierTestBase {

    @Test
    void ledgersOfEveryIdRangeAreListed() throws Exception {
        List<Long> ids = List.of(3L, Integer.MAX_VALUE - 1L, 1L << 32, (3L << 32) + 50, Long.MAX_VALUE / 2);
        for (long id : ids) {
            var w = b.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                    .withDigestType(DigestType.CRC32C).withPassword(PWD).withCustomMetadata(Map.of())
                    .makeAdv().withLedgerId(id).execute().get(30, TimeUnit.SECONDS);
            w.write(0, new byte[] {1});
            w.close();
        }
        BookKeeperLedgerCopier copier = new BookKeeperLedgerCopier(name -> CompletableFuture.completedFuture(
                name.equals("cluster-a") ? a : b), io);
        List<Long> listed = copier.list("cluster-b").get(30, TimeUnit.SECONDS);
        assertTrue(listed.containsAll(ids), "listed " + listed + ", created " + ids);
        // the listing borrows the cluster's client and leaves it open
        assertTrue(copier.list("cluster-b").get(30, TimeUnit.SECONDS).containsAll(ids));
        b.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                .withDigestType(DigestType.CRC32C).withPassword(PWD).execute().get(30, TimeUnit.SECONDS).close();
    }
}
