package io.bcswitch.adapter;

import io.bcswitch.migration.LedgerCopier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.zip.CRC32C;
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
 * {@link LedgerCopier} with BookKeeper clients of the named clusters (the migration's own clients, not
 * the ones serving topics). Sources are opened without recovery and only when their metadata says
 * closed. A copy is created with the source's id, sizes, digest, password and custom metadata
 * ({@code createLedgerAdv} with an explicit id), written with the source's entry ids, closed, then
 * read back and compared entry by entry with the CRC32C of each payload taken from the source while
 * copying.
 *
 * <p>Each copy's custom metadata carries {@value #COPY_OF_KEY} (the cluster it was copied from): cleanup deletes a
 * ledger that merely sits in another cluster's id range only when it is one of these. Metadata comparisons
 * between a ledger and its copy leave that key out.
 *
 * <p>An unclosed ledger already on the target with the source's sizes, digest, password and custom
 * metadata can only be an earlier copy whose writer died (this cluster issues no id of another
 * cluster's range): if its entries are a prefix of the source's it is deleted and copied again;
 * anything else there is a collision and is left untouched.
 */
final class BookKeeperLedgerCopier implements LedgerCopier {
    private static final Logger log = LoggerFactory.getLogger(BookKeeperLedgerCopier.class);
    private static final int BATCH_ENTRIES = 64;
    /** Custom-metadata key marking a copy this plugin made; the value names the cluster it was copied from. */
    static final String COPY_OF_KEY = "bookie-cluster-switch/copy-of";

    private final Function<String, CompletableFuture<BookKeeper>> clients;
    private final Executor blocking;
    /** Set when the broker stops: copies failing from then on failed because of it (see {@link #stopping}). */
    private final java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * @param clients  client of each cluster, by name
     * @param blocking runs BookKeeper calls that block (listing ledgers)
     */
    BookKeeperLedgerCopier(Function<String, CompletableFuture<BookKeeper>> clients, Executor blocking) {
        this.clients = clients;
        this.blocking = blocking;
    }

    /**
     * The broker stops: a copy that fails from now on failed because its clients are being closed, not because of
     * what it copied, and is left where it is instead of being deleted. The run that takes the migration over finds
     * it (identical: kept; a prefix: replaced at once). Deleting it would burn its id on the target: bookies refuse,
     * for days, writes to a ledger id they wrote before once their garbage collector removed it
     * ({@code LedgerFencedAndDeletedException}), so the next run could not copy the ledger there again.
     */
    void stopping() {
        stopping.set(true);
    }

    @Override
    public CompletableFuture<Outcome> copy(long id, String from, String to,
                                           LongFunction<CompletableFuture<Void>> pace) {
        return clients.apply(from).thenCombine(clients.apply(to), (src, dst) -> new Pair(src, dst))
                .thenCompose(p -> metadata(p.src(), id).thenCompose(srcMeta -> {
                    if (srcMeta.isEmpty()) {
                        return done(Result.SOURCE_MISSING, 0, "no ledger " + id + " on " + from);
                    }
                    LedgerMetadata m = srcMeta.get();
                    if (!m.isClosed()) {
                        return done(Result.NOT_CLOSED, 0, "ledger " + id + " on " + from + " is open");
                    }
                    return metadata(p.dst(), id).thenCompose(existing -> existing.isEmpty()
                            ? copyAndVerify(p, id, m, pace, from, to, "")
                            : existingOnTarget(p, id, m, existing.get(), pace, from, to));
                }));
    }

    private record Pair(BookKeeper src, BookKeeper dst) {
    }

    private CompletableFuture<Outcome> existingOnTarget(Pair p, long id, LedgerMetadata src, LedgerMetadata dst,
                                                        LongFunction<CompletableFuture<Void>> pace, String from,
                                                        String to) {
        if (!sameShape(src, dst)) {
            return done(Result.COLLISION, 0, "ledger " + id + " on " + to + " differs from the one on " + from
                    + " (size, quorum, digest or custom metadata)");
        }
        if (dst.isClosed() && dst.getLastEntryId() == src.getLastEntryId() && dst.getLength() == src.getLength()) {
            return compare(p.src(), p.dst(), id, src, src.getLastEntryId(), pace).thenApply(same -> same
                    ? new Outcome(Result.ALREADY_PRESENT, 0, "identical copy already on " + to)
                    : new Outcome(Result.COLLISION, 0, "ledger " + id + " on " + to + " has different entries"));
        }
        // an interrupted copy: redo it if what it holds is a prefix of the source. It is not recovered: that
        // would fence the id on the bookies and the copy could not be made again under it; a writer of it
        // still alive could only write the same entries (the source's) under the same ids
        return open(p.dst(), id, src, false).thenCompose(h -> {
            long last = h.getLastAddConfirmed();
            return h.closeAsync().thenCompose(v -> last > src.getLastEntryId()
                    ? CompletableFuture.completedFuture(false)
                    : compare(p.src(), p.dst(), id, src, last, pace));
        }).thenCompose(prefix -> {
            if (!prefix) {
                return done(Result.COLLISION, 0, "ledger " + id + " on " + to + " is not a copy of the one on " + from);
            }
            log.info("ledger={} bookie-cluster={}: replacing an interrupted copy", id, to);
            return p.dst().newDeleteLedgerOp().withLedgerId(id).execute()
                    .thenCompose(v -> copyAndVerify(p, id, src, pace, from, to, " (replaced an interrupted copy)"));
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
        if (!custom.containsKey(COPY_OF_KEY)) {
            return custom;
        }
        Map<String, byte[]> m = new java.util.HashMap<>(custom);
        m.remove(COPY_OF_KEY);
        return m;
    }

    /** The source's custom metadata with the copy mark naming {@code from}. */
    private static Map<String, byte[]> marked(Map<String, byte[]> custom, String from) {
        Map<String, byte[]> m = new java.util.HashMap<>(custom);
        m.put(COPY_OF_KEY, from.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return m;
    }

    private CompletableFuture<Outcome> copyAndVerify(Pair p, long id, LedgerMetadata m,
                                                     LongFunction<CompletableFuture<Void>> pace, String from,
                                                     String to, String note) {
        CompletableFuture<WriteAdvHandle> created = p.dst().newCreateLedgerOp()
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
        }).thenCompose(w -> open(p.src(), id, m, false).thenCompose(r ->
                writeFrom(r, w, 0, m.getLastEntryId(), pace, 0L, sourceCrcs)
                        .whenComplete((bytes, e) -> r.closeAsync())
                        .thenCompose(bytes -> w.closeAsync().thenApply(v -> bytes))
                        .whenComplete((bytes, e) -> {
                            if (e != null) {
                                w.closeAsync();
                            }
                        })))
                .thenCompose(bytes -> metadata(p.dst(), id).thenCompose(copy -> {
                    if (copy.isEmpty() || !copy.get().isClosed() || copy.get().getLastEntryId() != m.getLastEntryId()
                            || copy.get().getLength() != m.getLength()) {
                        return done(Result.FAILED, bytes, "copy of ledger " + id + " on " + to
                                + " does not match (closed/last entry/length)");
                    }
                    return checksums(p.dst(), id, m, m.getLastEntryId(), pace)
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
                            + " failed: " + c);
                })
                .thenCompose(out -> out.result() != Result.FAILED || createdAs.get() == null
                        ? CompletableFuture.completedFuture(out)
                        : stopping.get() ? leftForTheNextRun(out, id, to)
                        // a failed copy is not left behind: it differs from its source (a source that became
                        // unreadable half way leaves an empty or partial ledger)
                        : deleteOwnCopy(p.dst(), id, createdAs.get(), to)
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
                    writes.add(w.writeAsync(e.getEntryId(), e.getEntryBuffer().retainedSlice()));
                }
            }
            long batchBytes = bytes;
            return pace.apply(batchBytes)
                    .thenCompose(v -> CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)))
                    .thenCompose(v -> writeFrom(r, w, end + 1, last, pace, bytesSoFar + batchBytes, crcs));
        });
    }

    @Override
    public CompletableFuture<Boolean> sameEntries(long id, String a, String b,
                                                  LongFunction<CompletableFuture<Void>> pace) {
        return clients.apply(a).thenCombine(clients.apply(b), Pair::new).thenCompose(p -> metadata(p.src(), id)
                .thenCombine(metadata(p.dst(), id), (ma, mb) -> new Object[] {ma, mb}).thenCompose(m -> {
                    @SuppressWarnings("unchecked")
                    Optional<LedgerMetadata> ma = (Optional<LedgerMetadata>) m[0];
                    @SuppressWarnings("unchecked")
                    Optional<LedgerMetadata> mb = (Optional<LedgerMetadata>) m[1];
                    if (ma.isEmpty() || mb.isEmpty() || !ma.get().isClosed() || !mb.get().isClosed()
                            || ma.get().getLastEntryId() != mb.get().getLastEntryId()) {
                        return CompletableFuture.completedFuture(false);
                    }
                    return compare(p.src(), p.dst(), id, ma.get(), ma.get().getLastEntryId(), pace);
                }));
    }

    /** True when entries 0..{@code last} of both ledgers have the same payloads (CRC32C each). */
    private CompletableFuture<Boolean> compare(BookKeeper src, BookKeeper dst, long id, LedgerMetadata m, long last,
                                               LongFunction<CompletableFuture<Void>> pace) {
        return checksums(src, id, m, last, pace).thenCombine(checksums(dst, id, m, last, pace), Arrays::equals);
    }

    /**
     * CRC32C of the payload of entries 0..{@code last}, read in batches paced like the copy (a read-back
     * of a copy hits the bookies that serve the brokers' writes).
     */
    private CompletableFuture<long[]> checksums(BookKeeper client, long id, LedgerMetadata m, long last,
                                                LongFunction<CompletableFuture<Void>> pace) {
        long[] crcs = new long[Math.toIntExact(last + 1)];
        if (crcs.length == 0) {
            return CompletableFuture.completedFuture(crcs);
        }
        return open(client, id, m, false).thenCompose(h -> checksumsFrom(h, 0, crcs, pace)
                .whenComplete((v, e) -> h.closeAsync())).thenApply(v -> crcs);
    }

    private CompletableFuture<Void> checksumsFrom(ReadHandle h, long first, long[] crcs,
                                                  LongFunction<CompletableFuture<Void>> pace) {
        if (first >= crcs.length) {
            return CompletableFuture.completedFuture(null);
        }
        long end = Math.min(crcs.length - 1, first + BATCH_ENTRIES - 1);
        return h.readAsync(first, end).thenApply(entries -> {
            long bytes = 0;
            try (LedgerEntries es = entries) {
                for (LedgerEntry e : es) {
                    bytes += e.getEntryBuffer().readableBytes();
                    crcs[Math.toIntExact(e.getEntryId())] = crc(e);
                }
            }
            return bytes;
        }).thenCompose(pace::apply).thenCompose(v -> checksumsFrom(h, end + 1, crcs, pace));
    }

    private static long crc(LedgerEntry e) {
        CRC32C crc = new CRC32C();
        crc.update(e.getEntryBuffer().nioBuffer());
        return crc.getValue();
    }

    private static CompletableFuture<ReadHandle> open(BookKeeper client, long id, LedgerMetadata m, boolean recovery) {
        return client.newOpenLedgerOp().withLedgerId(id).withRecovery(recovery).withDigestType(m.getDigestType())
                .withPassword(m.getPassword()).execute();
    }

    private static CompletableFuture<Optional<LedgerMetadata>> metadata(BookKeeper client, long id) {
        return client.getLedgerMetadata(id).thenApply(Optional::of).exceptionally(e -> {
            if (noSuchLedger(e)) {
                return Optional.empty();
            }
            throw new CompletionException(unwrap(e));
        });
    }

    @Override
    public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
        return clients.apply(cluster).thenCompose(c -> metadata(c, id))
                .thenApply(m -> m.map(x -> new LedgerFacts(x.isClosed(), x.getLength(), x.getLastEntryId(),
                        component(x.getCustomMetadata()), text(x.getCustomMetadata().get(COPY_OF_KEY)),
                        x.getCustomMetadata().containsKey(BrokerClientProbe.PROBE_KEY))));
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String component(Map<String, byte[]> custom) {
        byte[] app = custom.get("application");
        byte[] component = custom.get("component");
        if (app == null || component == null || !"pulsar".equals(new String(app, java.nio.charset.StandardCharsets.UTF_8))) {
            return null;
        }
        return new String(component, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public CompletableFuture<List<Long>> list(String cluster) {
        return clients.apply(cluster).thenComposeAsync(c -> {
            List<Long> ids = new ArrayList<>();
            try (var result = c.newListLedgersOp().execute().get()) {
                for (long id : result.toIterable()) {
                    ids.add(id);
                }
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
            return CompletableFuture.completedFuture(ids);
        }, blocking);
    }

    @Override
    public CompletableFuture<Void> delete(long id, String cluster) {
        return clients.apply(cluster).thenCompose(c -> c.newDeleteLedgerOp().withLedgerId(id).execute())
                .exceptionally(e -> {
                    if (noSuchLedger(e)) {
                        return null;
                    }
                    throw new CompletionException(unwrap(e));
                });
    }

    private static boolean noSuchLedger(Throwable e) {
        return unwrap(e) instanceof BKException bke && (bke.getCode() == BKException.Code.NoSuchLedgerExistsException
                || bke.getCode() == BKException.Code.NoSuchLedgerExistsOnMetadataServerException);
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static CompletableFuture<Outcome> done(Result r, long bytes, String detail) {
        return CompletableFuture.completedFuture(new Outcome(r, bytes, detail));
    }
}
