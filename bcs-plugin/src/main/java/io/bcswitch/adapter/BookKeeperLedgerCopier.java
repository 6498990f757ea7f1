package io.bcswitch.adapter;

import static io.bcswitch.adapter.CopyWriter.done;
import static io.bcswitch.adapter.EntryChecksums.compare;
import static io.bcswitch.adapter.LedgerCalls.metadata;
import static io.bcswitch.adapter.LedgerCalls.noSuchLedger;
import static io.bcswitch.concurrent.Failures.unwrap;

import io.bcswitch.migration.LedgerCopier;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongFunction;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerMetadata;

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
 * <p>The copy itself is made by {@link CopyWriter}; a ledger already on the target under the id is judged by
 * {@link ExistingTargetLedger}.
 */
final class BookKeeperLedgerCopier implements LedgerCopier {
    /** Custom-metadata key marking a copy this plugin made; the value names the cluster it was copied from. */
    static final String COPY_OF_KEY = "bookie-cluster-switch/copy-of";

    /** A cluster's client, held for one operation; {@code release} ends the hold (exactly once). */
    record Held(BookKeeper client, Runnable release) {
    }

    /** Where the copier gets a cluster's client for one operation. */
    @FunctionalInterface
    interface ClientSource {
        CompletableFuture<Held> hold(String cluster);
    }

    private final ClientSource clients;
    private final Executor blocking;
    /** Set when the broker stops: copies failing from then on failed because of it (see {@link #stopping}). */
    private final java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
    private final CopyWriter writer;
    private final ExistingTargetLedger existingTarget;
    /** The shared listing of each cluster in flight ({@link #listJoiningRunning}). */
    private final Map<String, CompletableFuture<List<Long>>> listings = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param clients  client of each cluster, by name
     * @param blocking runs BookKeeper calls that block (listing ledgers)
     */
    BookKeeperLedgerCopier(Function<String, CompletableFuture<BookKeeper>> clients, Executor blocking) {
        this((ClientSource) cluster -> clients.apply(cluster).thenApply(c -> new Held(c, () -> { })), blocking);
    }

    /**
     * @param clients  client of each cluster, by name, held for each operation (the pool does not close a client an
     *                 operation holds: a cleanup, a verify or a copy goes on while the cluster's client is closed)
     * @param blocking runs BookKeeper calls that block (listing ledgers)
     */
    static BookKeeperLedgerCopier holding(ClientSource clients, Executor blocking) {
        return new BookKeeperLedgerCopier(clients, blocking);
    }

    private BookKeeperLedgerCopier(ClientSource clients, Executor blocking) {
        this.clients = clients;
        this.blocking = blocking;
        this.writer = new CopyWriter(stopping::get);
        this.existingTarget = new ExistingTargetLedger(writer);
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
        return with(from, to, (src, dst) -> metadata(src, id).thenCompose(srcMeta -> {
                    if (srcMeta.isEmpty()) {
                        return done(Result.SOURCE_MISSING, 0, "no ledger " + id + " on " + from);
                    }
                    LedgerMetadata m = srcMeta.get();
                    if (!m.isClosed()) {
                        return done(Result.NOT_CLOSED, 0, "ledger " + id + " on " + from + " is open");
                    }
                    return metadata(dst, id).thenCompose(existing -> existing.isEmpty()
                            ? writer.copyAndVerify(src, dst, id, m, pace, from, to, "")
                            : existingTarget.existingOnTarget(src, dst, id, m, existing.get(), pace, from, to));
                }))
                // a metadata read or a client that failed: an outcome that says whether trying later may work
                .exceptionally(e -> new Outcome(Result.FAILED, 0, "copy of ledger " + id + " from " + from + " to "
                        + to + " failed: " + unwrap(e), UnreachableCluster.isCause(unwrap(e))));
    }

    /** {@code op} with {@code cluster}'s client held until the future it returns completes. */
    private <T> CompletableFuture<T> with(String cluster, Function<BookKeeper, CompletableFuture<T>> op) {
        return clients.hold(cluster).thenCompose(h -> {
            CompletableFuture<T> r;
            try {
                r = op.apply(h.client());
            } catch (RuntimeException e) {
                h.release().run();
                throw e;
            }
            return r.whenComplete((x, e) -> h.release().run());
        });
    }

    /** {@code op} with the clients of {@code a} and {@code b} held until the future it returns completes. */
    private <T> CompletableFuture<T> with(String a, String b,
                                          java.util.function.BiFunction<BookKeeper, BookKeeper, CompletableFuture<T>> op) {
        return with(a, ca -> with(b, cb -> op.apply(ca, cb)));
    }

    @Override
    public CompletableFuture<Boolean> sameEntries(long id, String a, String b,
                                                  LongFunction<CompletableFuture<Void>> pace) {
        return with(a, b, (ca, cb) -> metadata(ca, id)
                .thenCombine(metadata(cb, id), (ma, mb) -> new Object[] {ma, mb}).thenCompose(m -> {
                    @SuppressWarnings("unchecked")
                    Optional<LedgerMetadata> ma = (Optional<LedgerMetadata>) m[0];
                    @SuppressWarnings("unchecked")
                    Optional<LedgerMetadata> mb = (Optional<LedgerMetadata>) m[1];
                    if (ma.isEmpty() || mb.isEmpty() || !ma.get().isClosed() || !mb.get().isClosed()
                            || ma.get().getLastEntryId() != mb.get().getLastEntryId()) {
                        return CompletableFuture.completedFuture(false);
                    }
                    return compare(ca, cb, id, ma.get(), ma.get().getLastEntryId(), pace);
                }));
    }

    @Override
    public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
        return with(cluster, c -> metadata(c, id))
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

    /**
     * Every ledger id the cluster's ledger manager holds, from its ranges (as BookKeeperAdmin's listing walks them),
     * not the client API's {@code newListLedgersOp}: on a hierarchical ledger manager that one names only the ids under
     * the legacy paths (below 2^31) and none under the long ones, where every id of a range issued after the first
     * cluster's lives. A read that fails half way fails the listing: it is never taken for the whole.
     */
    @Override
    public CompletableFuture<List<Long>> list(String cluster) {
        return listOnce(cluster);
    }

    /**
     * One shared listing per cluster at a time, joined by whoever asks through this method meanwhile: a listing blocks
     * a thread for as long as the cluster's metadata service does not answer (BookKeeper's client waits for it to
     * come back), and callers that give up on it (verify, after its bound) must not leave a blocked thread each.
     */
    @Override
    public CompletableFuture<List<Long>> listJoiningRunning(String cluster) {
        CompletableFuture<List<Long>> mine = new CompletableFuture<>();
        CompletableFuture<List<Long>> running = listings.putIfAbsent(cluster, mine);
        if (running != null) {
            return running.thenApply(ids -> ids); // each caller its own future: none completes another's
        }
        CompletableFuture<List<Long>> listing;
        try {
            listing = listOnce(cluster);
        } catch (RuntimeException e) {
            listing = CompletableFuture.failedFuture(e); // never a joined listing that nothing will complete
        }
        listing.whenComplete((ids, e) -> {
            listings.remove(cluster, mine);
            if (e != null) {
                mine.completeExceptionally(e);
            } else {
                mine.complete(List.copyOf(ids));
            }
        });
        return mine.thenApply(ids -> ids);
    }

    private CompletableFuture<List<Long>> listOnce(String cluster) {
        return with(cluster, c -> CompletableFuture.supplyAsync(() -> {
            List<Long> ids = new ArrayList<>();
            // the ledger manager's own ranges, not BookKeeperAdmin.listLedgers(): that one logs a read that fails half
            // way and ends the iteration, so a truncated listing would pass for the cluster's whole content
            try {
                org.apache.bookkeeper.meta.LedgerManager.LedgerRangeIterator ranges =
                        c.getLedgerManager().getLedgerRanges(0);
                while (ranges.hasNext()) {
                    ids.addAll(ranges.next().getLedgers());
                }
            } catch (IOException e) {
                throw new CompletionException(e);
            }
            return ids;
        }, blocking));
    }

    @Override
    public CompletableFuture<Void> delete(long id, String cluster) {
        return with(cluster, c -> c.newDeleteLedgerOp().withLedgerId(id).execute())
                .exceptionally(e -> {
                    if (noSuchLedger(e)) {
                        return null;
                    }
                    throw new CompletionException(unwrap(e));
                });
    }
}
