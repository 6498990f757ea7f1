package io.bcswitch.adapter;

import static io.bcswitch.adapter.CopyWriter.done;
import static io.bcswitch.adapter.EntryChecksums.compare;
import static io.bcswitch.adapter.LedgerCalls.open;

import io.bcswitch.migration.LedgerCopier.Outcome;
import io.bcswitch.migration.LedgerCopier.Result;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link BookKeeperLedgerCopier} does when the target already has a ledger under the id it copies. An unclosed
 * ledger already on the target with the source's sizes, digest, password and custom metadata can only be an earlier
 * copy whose writer died (this cluster issues no id of another cluster's range): if its entries are a prefix of the
 * source's it is deleted and copied again; anything else there is a collision and is left untouched. Logs under
 * {@link BookKeeperLedgerCopier}'s logger, as before this was part of it.
 */
final class ExistingTargetLedger {
    private static final Logger log = LoggerFactory.getLogger(BookKeeperLedgerCopier.class);

    private final CopyWriter writer;

    /** @param writer copies the ledger again when what is there is an interrupted copy */
    ExistingTargetLedger(CopyWriter writer) {
        this.writer = writer;
    }

    /**
     * What to do about ledger {@code id}, which the target cluster already holds: nothing when it is an identical
     * copy, copy again over an interrupted copy, and a collision otherwise.
     *
     * @param source     client of the cluster the ledger is copied from, {@code sourceMeta} its metadata there
     * @param target     client of the cluster it is copied to, {@code targetMeta} the metadata of what is there
     */
    CompletableFuture<Outcome> existingOnTarget(BookKeeper source, BookKeeper target, long id,
                                                LedgerMetadata sourceMeta, LedgerMetadata targetMeta,
                                                LongFunction<CompletableFuture<Void>> pace, String from, String to) {
        if (!sameShape(sourceMeta, targetMeta)) {
            return done(Result.COLLISION, 0, "ledger " + id + " on " + to + " differs from the one on " + from
                    + " (size, quorum, digest or custom metadata)");
        }
        if (targetMeta.isClosed() && targetMeta.getLastEntryId() == sourceMeta.getLastEntryId()
                && targetMeta.getLength() == sourceMeta.getLength()) {
            return compare(source, target, id, sourceMeta, sourceMeta.getLastEntryId(), pace).thenApply(same -> same
                    ? new Outcome(Result.ALREADY_PRESENT, 0, "identical copy already on " + to)
                    : new Outcome(Result.COLLISION, 0, "ledger " + id + " on " + to + " has different entries"));
        }
        // an interrupted copy: redo it if what it holds is a prefix of the source. It is not recovered: that
        // would fence the id on the bookies and the copy could not be made again under it; a writer of it
        // still alive could only write the same entries (the source's) under the same ids
        return open(target, id, sourceMeta, false).thenCompose(h -> {
            long last = h.getLastAddConfirmed();
            return h.closeAsync().thenCompose(v -> last > sourceMeta.getLastEntryId()
                    ? CompletableFuture.completedFuture(false)
                    : compare(source, target, id, sourceMeta, last, pace));
        }).thenCompose(prefix -> {
            if (!prefix) {
                return done(Result.COLLISION, 0, "ledger " + id + " on " + to + " is not a copy of the one on " + from);
            }
            log.info("ledger={} bookie-cluster={}: replacing an interrupted copy", id, to);
            return target.newDeleteLedgerOp().withLedgerId(id).execute()
                    .thenCompose(v -> writer.copyAndVerify(source, target, id, sourceMeta, pace, from, to,
                            " (replaced an interrupted copy)"));
        });
    }

    private static boolean sameShape(LedgerMetadata a, LedgerMetadata b) {
        return a.getEnsembleSize() == b.getEnsembleSize() && a.getWriteQuorumSize() == b.getWriteQuorumSize()
                && a.getAckQuorumSize() == b.getAckQuorumSize() && a.getDigestType() == b.getDigestType()
                && Arrays.equals(a.getPassword(), b.getPassword())
                && customEquals(a.getCustomMetadata(), b.getCustomMetadata());
    }

    /** Equal custom metadata, leaving out the copy mark. */
    private static boolean customEquals(Map<String, byte[]> a, Map<String, byte[]> b) {
        Map<String, byte[]> x = withoutMark(a);
        Map<String, byte[]> y = withoutMark(b);
        if (x.size() != y.size()) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : x.entrySet()) {
            if (!Arrays.equals(e.getValue(), y.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    private static Map<String, byte[]> withoutMark(Map<String, byte[]> custom) {
        if (!custom.containsKey(BookKeeperLedgerCopier.COPY_OF_KEY)) {
            return custom;
        }
        Map<String, byte[]> m = new java.util.HashMap<>(custom);
        m.remove(BookKeeperLedgerCopier.COPY_OF_KEY);
        return m;
    }
}
