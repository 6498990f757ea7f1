package io.bcswitch.adapter;

import io.bcswitch.concurrent.Windows;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.RegistryException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The stored inventory plus, for every compacted topic, the compacted ledger its owning broker uses now. The
 * metadata store's copy of the compaction cursor's properties is only rewritten when the cursor's own ledger
 * rolls over, so it can name an older compacted ledger than the one in use (a compaction that finished while
 * the broker's cutover ran leaves its ledger on the old cluster, known only to the cursor's ledger). Without
 * this, that ledger would be neither copied nor counted by the drain report.
 *
 * <p>A topic that no longer exists answers empty. A topic whose owner cannot answer (it cannot load the topic: the
 * bookies holding one of its ledgers are down, say) is an {@link LedgerInventory.Unknown} of the
 * {@link #picture()}, named by its stored compaction cursor; {@link #references()} fails on it (503: retry), so
 * nothing is deleted or reported drained on a partial picture. One such topic never holds up the others: each owner
 * is waited for at most {@link #ASK_TIMEOUT_MILLIS}, one reading for at most that plus
 * {@link #WINDOW_BUDGET_MILLIS} per window of {@link #PARALLEL} owners asked at once.
 */
final class LiveCompactionInventory implements LedgerInventory {
    static final int PARALLEL = 8;
    private static final int LISTED = 5;
    /**
     * How long one owner is waited for. An owner that cannot load a topic answers only when the load gives up (40 s
     * and more when the bookies holding its ledgers are down): waiting for that, window after window, would hold up
     * every caller, and verify past its HTTP deadline.
     */
    static final long ASK_TIMEOUT_MILLIS = 15_000;
    /** What each window of owners adds to the reading's deadline (a topic that is not loaded loads to answer). */
    static final long WINDOW_BUDGET_MILLIS = 2_000;

    private final LedgerInventory stored;
    private final Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf;
    private final Executor answers;
    private final long askTimeoutMillis;
    private final long windowBudgetMillis;

    /**
     * @param compactedLedgerOf the compacted ledger the topic of a managed ledger uses now (empty: none, or the
     *                          topic is gone)
     */
    LiveCompactionInventory(LedgerInventory stored,
                            Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf, Executor answers) {
        this(stored, compactedLedgerOf, answers, ASK_TIMEOUT_MILLIS, WINDOW_BUDGET_MILLIS);
    }

    /**
     * @param answers            where answers are taken in (a timeout fires on the JVM's one timer thread, which
     *                           must not go on to run the caller's work)
     * @param askTimeoutMillis   how long one owner is waited for: a topic that has not answered by then is unknown
     * @param windowBudgetMillis what each window of {@link #PARALLEL} owners adds to the reading's deadline, which
     *                           starts at {@code askTimeoutMillis}: once it has passed, topics not yet asked are not
     *                           asked (when many owners cannot answer, one reading still ends in bounded time)
     */
    LiveCompactionInventory(LedgerInventory stored,
                            Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf,
                            Executor answers, long askTimeoutMillis, long windowBudgetMillis) {
        this.stored = stored;
        this.compactedLedgerOf = compactedLedgerOf;
        this.answers = answers;
        this.askTimeoutMillis = askTimeoutMillis;
        this.windowBudgetMillis = windowBudgetMillis;
    }

    /** One owner's answer: the ledger in use (or none), or why it could not say. */
    private record Answer(Optional<Long> inUse, String failure) {
    }

    private CompletableFuture<Answer> ask(String managedLedger, long deadline) {
        long left = Math.min(deadline - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(askTimeoutMillis));
        if (left <= 0) {
            return CompletableFuture.completedFuture(new Answer(Optional.empty(), "not asked: the owners of other "
                    + "compacted topics took all the time there was to ask"));
        }
        CompletableFuture<Optional<Long>> asked;
        try {
            asked = compactedLedgerOf.apply(managedLedger);
        } catch (RuntimeException e) {
            asked = CompletableFuture.failedFuture(e);
        }
        return asked.orTimeout(left, TimeUnit.NANOSECONDS).handleAsync((v, e) -> e == null
                ? new Answer(v, null) : new Answer(Optional.empty(), reason(e)), answers);
    }

    private String reason(Throwable e) {
        Throwable c = e;
        while (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof TimeoutException) {
            return "no answer in time (at most " + askTimeoutMillis + " ms per owner)";
        }
        String m = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage().strip();
        int nl = m.indexOf('\n');
        m = nl < 0 ? m : m.substring(0, nl);
        return m.length() > 300 ? m.substring(0, 300) + "..." : m;
    }

    @Override
    public CompletableFuture<Picture> picture() {
        return stored.references().thenCompose(refs -> {
            Map<String, Long> compacted = new LinkedHashMap<>(); // managed ledger -> a stored compaction ledger
            Set<Long> known = new HashSet<>();
            for (LedgerReference r : refs) {
                if (r.kind() == LedgerKind.COMPACTION) {
                    // "<managed ledger>/<cursor>#<property>": managed-ledger names hold '/', cursor names do not
                    compacted.putIfAbsent(r.referencedBy().substring(0, r.referencedBy().lastIndexOf('/')),
                            r.ledgerId());
                    known.add(r.ledgerId());
                }
            }
            List<String> managedLedgers = new ArrayList<>(compacted.keySet());
            long windows = (managedLedgers.size() + PARALLEL - 1) / PARALLEL;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(askTimeoutMillis
                    + windows * windowBudgetMillis);
            return Windows.map(managedLedgers, PARALLEL, ml -> ask(ml, deadline)).thenApply(got -> {
                List<LedgerReference> all = new ArrayList<>(refs);
                List<Unknown> unknown = new ArrayList<>();
                for (int i = 0; i < managedLedgers.size(); i++) {
                    String ml = managedLedgers.get(i);
                    Answer a = got.get(i);
                    if (a.failure() != null) {
                        unknown.add(new Unknown(ml, compacted.get(ml), "its owning broker cannot say which "
                                + "compacted ledger it uses now: " + a.failure()));
                    } else if (a.inUse().isPresent() && known.add(a.inUse().get())) {
                        all.add(new LedgerReference(a.inUse().get(), LedgerKind.COMPACTION, ml
                                + "/__compaction#in-use"));
                    }
                }
                return new Picture(all, unknown);
            });
        });
    }

    @Override
    public CompletableFuture<List<LedgerReference>> references() {
        return picture().thenApply(p -> {
            if (!p.complete()) {
                throw RegistryException.unavailable(describe(p.unknown()));
            }
            return p.references();
        });
    }

    static String describe(List<Unknown> unknown) {
        StringBuilder s = new StringBuilder("the ledgers the brokers reference are not all known now (retry once "
                + "every topic loads): ").append(unknown.size()).append(" compacted topic(s) could not be asked: ");
        for (int i = 0; i < Math.min(LISTED, unknown.size()); i++) {
            Unknown u = unknown.get(i);
            s.append(i == 0 ? "" : "; ").append(u.referencedBy()).append(" (").append(u.reason()).append(')');
        }
        return s.append(unknown.size() > LISTED ? "; ..." : "").toString();
    }
}
