package io.bcswitch.adapter;

import static io.bcswitch.adapter.EntryChecksums.BATCH_ENTRIES;
import static io.bcswitch.adapter.EntryChecksums.checksums;
import static io.bcswitch.adapter.EntryChecksums.crc;
import static io.bcswitch.adapter.EntryChecksums.payload;
import static io.bcswitch.adapter.LedgerCalls.metadata;
import static io.bcswitch.adapter.LedgerCalls.open;
import static io.bcswitch.concurrent.Failures.unwrap;

import io.bcswitch.migration.LedgerCopier.Outcome;
import io.bcswitch.migration.LedgerCopier.Result;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.BKException;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteAdvHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ledger's copy, as {@link BookKeeperLedgerCopier} makes it: created on the target under the source's id and
 * shape with the copy mark, written from the source, closed, then verified against the checksums taken while
 * writing. A copy that fails is deleted, unless the broker stops. Logs under {@link BookKeeperLedgerCopier}'s logger,
 * as before this was part of it.
 */
final class CopyWriter {
    private static final Logger log = LoggerFactory.getLogger(BookKeeperLedgerCopier.class);

    private final BooleanSupplier stopping;

    /** @param stopping whether the broker stops (see {@link BookKeeperLedgerCopier#stopping}) */
    CopyWriter(BooleanSupplier stopping) {
        this.stopping = stopping;
    }

    /** The source's custom metadata with the copy mark naming {@code from}. */
    private static Map<String, byte[]> marked(Map<String, byte[]> custom, String from) {
        Map<String, byte[]> m = new java.util.HashMap<>(custom);
        m.put(BookKeeperLedgerCopier.COPY_OF_KEY, from.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return m;
    }

    CompletableFuture<Outcome> copyAndVerify(BookKeeper src, BookKeeper dst, long id, LedgerMetadata m,
                                             LongFunction<CompletableFuture<Void>> pace, String from,
                                             String to, String note) {
        CompletableFuture<WriteAdvHandle> created = dst.newCreateLedgerOp()
                .withEnsembleSize(m.getEnsembleSize())
                .withWriteQuorumSize(m.getWriteQuorumSize())
                .withAckQuorumSize(m.getAckQuorumSize())
                .withDigestType(m.getDigestType())
                .withPassword(m.getPassword())
                .withCustomMetadata(marked(m.getCustomMetadata(), from))
                .makeAdv()
                .withLedgerId(id)
                .execute();
        // taken as created, in the chain's first step: the handle's view of its metadata follows later changes
        // (a conflicting close). Not a stage of its own to join later: stages of one future run newest first, so
        // a chain that failed at once would wait for it on the very thread that was to complete it
        AtomicReference<LedgerMetadata> createdAs = new AtomicReference<>();
        // the source's checksums are taken while copying, so verifying reads only the copy: the source is
        // read once, which halves what a migration costs the old cluster
        long[] sourceCrcs = new long[Math.toIntExact(m.getLastEntryId() + 1)];
        return created.thenApply(w -> {
            createdAs.set(w.getLedgerMetadata());
            return w;
        }).thenCompose(w -> open(src, id, m, false).thenCompose(r ->
                writeFrom(r, w, 0, m.getLastEntryId(), pace, 0L, sourceCrcs)
                        .whenComplete((bytes, e) -> r.closeAsync())
                        .thenCompose(bytes -> w.closeAsync().thenApply(v -> bytes))
                        .whenComplete((bytes, e) -> {
                            if (e != null) {
                                w.closeAsync();
                            }
                        })))
                .thenCompose(bytes -> metadata(dst, id).thenCompose(copy -> {
                    if (copy.isEmpty() || !copy.get().isClosed() || copy.get().getLastEntryId() != m.getLastEntryId()
                            || copy.get().getLength() != m.getLength()) {
                        return done(Result.FAILED, bytes, "copy of ledger " + id + " on " + to
                                + " does not match its source: " + (copy.isEmpty() ? "it is gone"
                                : "closed " + copy.get().isClosed() + ", last entry " + copy.get().getLastEntryId()
                                + " (source " + m.getLastEntryId() + "), length " + copy.get().getLength()
                                + " (source " + m.getLength() + ")"));
                    }
                    return checksums(dst, id, m, m.getLastEntryId(), pace)
                            .thenApply(copyCrcs -> Arrays.equals(copyCrcs, sourceCrcs)).thenApply(same -> same
                            ? new Outcome(Result.COPIED, bytes, "copied " + (m.getLastEntryId() + 1) + " entries, "
                                    + bytes + " bytes" + note)
                            : new Outcome(Result.FAILED, bytes, "copy of ledger " + id + " on " + to
                                    + " has different entry payloads"));
                }))
                .exceptionally(e -> {
                    Throwable c = unwrap(e);
                    if (c instanceof BKException bke && bke.getCode() == BKException.Code.LedgerExistException) {
                        return new Outcome(Result.COLLISION, 0, "ledger " + id + " appeared on " + to
                                + " while copying");
                    }
                    if (c instanceof BKException bke && bke.getCode() == BKException.Code.LedgerFencedException) {
                        return new Outcome(Result.FAILED, 0, burnedId(id, from, to));
                    }
                    return new Outcome(Result.FAILED, 0, "copy of ledger " + id + " from " + from + " to " + to
                            + " failed: " + c, UnreachableCluster.isCause(c));
                })
                .thenCompose(out -> out.result() != Result.FAILED || createdAs.get() == null
                        ? CompletableFuture.completedFuture(out)
                        : stopping.getAsBoolean() ? leftForTheNextRun(out, id, to)
                        // a failed copy is not left behind: it differs from its source (a source that became
                        // unreadable half way leaves an empty or partial ledger)
                        : deleteOwnCopy(dst, id, createdAs.get(), to)
                                .thenApply(v -> out));
    }

    /**
     * Why a copy's writes are refused as fenced: the target's bookies wrote a ledger under this id before, and their
     * garbage collector removed it after it was deleted (a failed, rolled-back or cleaned-up copy). BookKeeper's
     * bookies then refuse writes under that id from memory, until 7 days pass without a write asking for it (each
     * refused write starts the 7 days again) or until they restart.
     */
    static String burnedId(long id, String from, String to) {
        return "the bookies of " + to + " refuse writes under ledger id " + id + ": a ledger with this id was written "
                + "there before and deleted, and bookies refuse such an id until they restart or 7 days pass without "
                + "a write to it; the ledger stays home on " + from + ", readable there; after a rolling restart of "
                + to + "'s bookies, retry-migration moves it";
    }

    private static CompletableFuture<Outcome> leftForTheNextRun(Outcome out, long id, String to) {
        log.info("ledger={} bookie-cluster={}: the copy failed while the broker stops; it is left for the run that "
                + "takes the migration over ({})", id, to, out.detail());
        return CompletableFuture.completedFuture(out);
    }

    /**
     * Whether {@code now} is the ledger {@code ours} created: the same creator token while both still carry one
     * (BookKeeper drops it when it rewrites a ledger's metadata, on close for one), else the same creation time
     * (the migration's clients store it). Neither known: not provably ours.
     */
    static boolean sameCreation(LedgerMetadata ours, LedgerMetadata now) {
        if (ours.getCToken() != 0 && now.getCToken() != 0) {
            return ours.getCToken() == now.getCToken();
        }
        return ours.getCtime() > 0 && ours.getCtime() == now.getCtime();
    }

    /**
     * Deletes the copy this run created, identified by {@link #sameCreation}: if another run
     * (a broker that took the migration over) replaced it meanwhile, the id now names that run's copy, which
     * may be promoted already, and it is left alone. When that cannot be told, nothing is deleted: cleanup removes
     * a leftover copy, it carries the copy mark.
     */
    private CompletableFuture<Void> deleteOwnCopy(BookKeeper dst, long id, LedgerMetadata ours, String to) {
        return metadata(dst, id).thenCompose(now -> {
            if (now.isEmpty()) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (!sameCreation(ours, now.get())) {
                log.warn("ledger={} bookie-cluster={}: the failed copy is not deleted: the ledger under this id is "
                        + "not the one this copy created (replaced by another run), or cannot be told apart (created "
                        + "at {}, the one there now at {})", id, to, ours.getCtime(), now.get().getCtime());
                return CompletableFuture.<Void>completedFuture(null);
            }
            return dst.newDeleteLedgerOp().withLedgerId(id).execute();
        }).handle((v, e) -> {
            if (e != null) {
                log.warn("ledger={} bookie-cluster={}: cannot delete the failed copy (cleanup removes it, it is "
                        + "marked as a copy): {}", id, to, e.toString());
            }
            return null;
        });
    }

    private CompletableFuture<Long> writeFrom(ReadHandle r, WriteAdvHandle w, long first, long last,
                                              LongFunction<CompletableFuture<Void>> pace, long bytesSoFar,
                                              long[] crcs) {
        if (first > last) {
            return CompletableFuture.completedFuture(bytesSoFar);
        }
        long end = Math.min(last, first + BATCH_ENTRIES - 1);
        return r.readAsync(first, end).thenCompose(entries -> {
            long bytes = 0;
            List<CompletableFuture<Long>> writes = new ArrayList<>();
            try (LedgerEntries es = entries) {
                for (LedgerEntry e : es) {
                    bytes += e.getEntryBuffer().readableBytes(); // getLength() is the ledger length so far
                    crcs[Math.toIntExact(e.getEntryId())] = crc(e);
                    // the write takes its own reference; the batch releases the read's
                    writes.add(w.writeAsync(e.getEntryId(), payload(e)));
                }
            }
            long batchBytes = bytes;
            return pace.apply(batchBytes)
                    .thenCompose(v -> CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)))
                    .thenCompose(v -> writeFrom(r, w, end + 1, last, pace, bytesSoFar + batchBytes, crcs));
        });
    }

    static CompletableFuture<Outcome> done(Result r, long bytes, String detail) {
        return CompletableFuture.completedFuture(new Outcome(r, bytes, detail));
    }
}
