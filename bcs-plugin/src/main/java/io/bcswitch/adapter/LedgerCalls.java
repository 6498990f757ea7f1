package io.bcswitch.adapter;

import static io.bcswitch.concurrent.Failures.unwrap;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.BKException;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ReadHandle;

/**
 * The ledger look-ups every part of {@link BookKeeperLedgerCopier} makes, with a ledger that is not there told apart
 * from a call that failed.
 */
final class LedgerCalls {

    private LedgerCalls() {
    }

    static CompletableFuture<ReadHandle> open(BookKeeper client, long id, LedgerMetadata m, boolean recovery) {
        return client.newOpenLedgerOp().withLedgerId(id).withRecovery(recovery).withDigestType(m.getDigestType())
                .withPassword(m.getPassword()).execute();
    }

    static CompletableFuture<Optional<LedgerMetadata>> metadata(BookKeeper client, long id) {
        return client.getLedgerMetadata(id).thenApply(Optional::of).exceptionally(e -> {
            if (noSuchLedger(e)) {
                return Optional.empty();
            }
            throw new CompletionException(unwrap(e));
        });
    }

    static boolean noSuchLedger(Throwable e) {
        return unwrap(e) instanceof BKException bke && (bke.getCode() == BKException.Code.NoSuchLedgerExistsException
                || bke.getCode() == BKException.Code.NoSuchLedgerExistsOnMetadataServerException);
    }
}
