package io.bcswitch.migration;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** Ledger-level operations on named bookie clusters, for migration and cleanup. */
public interface LedgerCopier {

    /** What happened to one ledger. */
    enum Result {
        /** copied now and verified */
        COPIED,
        /** an identical, closed copy was already on the target (an earlier, interrupted run) */
        ALREADY_PRESENT,
        /** the source ledger is still open: it may still be written, so it is not touched */
        NOT_CLOSED,
        /** the source ledger no longer exists (deleted since the inventory was read) */
        SOURCE_MISSING,
        /** the target holds a different ledger with this id: never overwritten */
        COLLISION,
        /** the copy could not be made or did not verify; the ledger stays home where it is */
        FAILED
    }

    /**
     * @param retriable for {@link Result#FAILED}: the failure says a cluster cannot be reached for now (its bookies do
     *                  not answer, too few of them are writable, a read or write timed out, its metadata service is
     *                  away), not that anything is wrong with the ledger: the same copy may well work a little later
     */
    record Outcome(Result result, long bytes, String detail, boolean retriable) {
        public Outcome(Result result, long bytes, String detail) {
            this(result, bytes, detail, false);
        }
    }

    /**
     * BookKeeper's metadata of a ledger, read without touching bookies.
     *
     * @param pulsarComponent the {@code component} custom-metadata value of ledgers Pulsar created
     *                        ({@code managed-ledger}, {@code schema}, {@code compacted-ledger}, ...), else null
     * @param copyOf          for a copy the migration made: the cluster it was copied from (its custom metadata
     *                        says so), else null
     * @param probe           a ledger a precheck created to probe the cluster
     */
    record LedgerFacts(boolean closed, long length, long lastEntryId, String pulsarComponent, String copyOf,
                       boolean probe) {
        public LedgerFacts(boolean closed, long length, long lastEntryId, String pulsarComponent) {
            this(closed, length, lastEntryId, pulsarComponent, null, false);
        }

        /** Same content as {@code other} by BookKeeper's metadata: both closed, same last entry and length. */
        public boolean sameClosedContent(LedgerFacts other) {
            return closed && other.closed && lastEntryId == other.lastEntryId && length == other.length;
        }
    }

    /**
     * Copies closed ledger {@code ledgerId} from {@code from} to {@code to} with the same id, entry ids,
     * custom metadata (plus a mark naming {@code from}, so that cleanup knows its own copies), ensemble and
     * quorum sizes, digest type and password, then verifies the copy
     * (closed, last entry id, length, CRC32C of every entry payload). Never opens the source with
     * recovery and never fences it; never overwrites an existing ledger on the target.
     *
     * @param pace called with the bytes of every batch read (from the source while copying, and from the
     *             copy while verifying) before the next step; may delay it (the rate limit)
     */
    CompletableFuture<Outcome> copy(long ledgerId, String from, String to,
                                    java.util.function.LongFunction<CompletableFuture<Void>> pace);

    /** The ledger's metadata on {@code cluster}, empty when it does not exist there. */
    CompletableFuture<Optional<LedgerFacts>> facts(long ledgerId, String cluster);

    /** Every ledger id on {@code cluster}, from a listing that starts now. */
    CompletableFuture<List<Long>> list(String cluster);

    /**
     * Every ledger id on {@code cluster}, from a listing that may have started before this call (one already running
     * for another caller of this method is joined): for a reader that takes the listing for what it is, never a
     * snapshot (verify), and must not start a blocked listing per call while the cluster's metadata service does not
     * answer. A caller that relies on seeing what it made before asking (the migration looking for its copies) uses
     * {@link #list}.
     */
    default CompletableFuture<List<Long>> listJoiningRunning(String cluster) {
        return list(cluster);
    }

    /**
     * Whether ledger {@code ledgerId} has the same entries on clusters {@code a} and {@code b}: both closed, same last
     * entry, and the same CRC32C of every entry payload (both read, paced by {@code pace}).
     */
    CompletableFuture<Boolean> sameEntries(long ledgerId, String a, String b,
                                           java.util.function.LongFunction<CompletableFuture<Void>> pace);

    /** Deletes {@code ledgerId} from {@code cluster}; a ledger already gone counts as deleted. */
    CompletableFuture<Void> delete(long ledgerId, String cluster);
}
