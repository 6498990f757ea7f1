package io.bcswitch.audit;

import io.bcswitch.migration.LedgerCopier;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The reads one verify makes of the bookie clusters' metadata, each bounded in time. A cluster whose metadata service
 * does not answer (its ZooKeeper down: BookKeeper's client waits for it to come back) would otherwise hold verify past
 * the REST deadline, so that the operator learns nothing, not even which cluster is the problem. A read that gets no
 * answer within its bound fails, and every later read of that cluster in the same verify fails at once: what they
 * would have checked is reported unchecked, naming the cluster, and the rest of the report comes in time. A listing
 * (all of a cluster's ledger ids, which takes seconds on a large healthy cluster) has a longer bound than a read of
 * one ledger's metadata; verify's listings join one already running ({@link LedgerCopier#listJoiningRunning}), so that
 * verifies asked during an outage leave one blocked listing per cluster, not one each.
 *
 * <p>Entry comparisons (deep verify) are paced by the migration's rate and may rightly take long: they are not
 * bounded, but one on a cluster already found silent fails at once. Copying and deleting are not verify's business.
 */
final class BoundedClusterReads implements LedgerCopier {
    private final LedgerCopier copier;
    private final long listingMillis;
    private final long answerMillis;
    private final Set<String> silent = ConcurrentHashMap.newKeySet();
    private final java.util.Map<String, CompletableFuture<Optional<LedgerFacts>>> factsRead =
            new ConcurrentHashMap<>();

    /** One bound for every read, listings included (for tests). */
    BoundedClusterReads(LedgerCopier copier, long answerMillis) {
        this(copier, answerMillis, answerMillis);
    }

    /**
     * @param listingMillis how long listing a cluster's ledgers may take before the cluster counts as silent
     * @param answerMillis  how long any other metadata read of one cluster may take before it counts as silent
     */
    BoundedClusterReads(LedgerCopier copier, long listingMillis, long answerMillis) {
        this.copier = copier;
        this.listingMillis = listingMillis;
        this.answerMillis = answerMillis;
    }

    /** {@code read}, one of {@code cluster}'s metadata, bounded; at once failed when the cluster was found silent. */
    <T> CompletableFuture<T> bounded(String cluster, Supplier<CompletableFuture<T>> read) {
        return bounded(cluster, answerMillis, read);
    }

    private <T> CompletableFuture<T> bounded(String cluster, long millis, Supplier<CompletableFuture<T>> read) {
        if (silent.contains(cluster)) {
            return CompletableFuture.failedFuture(silence(cluster));
        }
        CompletableFuture<T> out = new CompletableFuture<>();
        // a copy of the read's future: the timeout completes the copy only, never the read another caller may share
        read.get().whenComplete((v, e) -> {
            if (e != null) {
                out.completeExceptionally(e);
            } else {
                out.complete(v);
            }
        });
        out.orTimeout(millis, TimeUnit.MILLISECONDS);
        return out.exceptionallyCompose(e -> {
            if (e instanceof TimeoutException) {
                silent.add(cluster);
                return CompletableFuture.failedFuture(new TimeoutException("the metadata service of bookie cluster '"
                        + cluster + "' did not answer within " + millis + " ms in this verify"));
            }
            return CompletableFuture.failedFuture(e);
        });
    }

    private static TimeoutException silence(String cluster) {
        return new TimeoutException("the metadata service of bookie cluster '" + cluster + "' did not answer earlier "
                + "in this verify");
    }

    /**
     * A ledger's metadata as first read in this verify: the checks that look at the same ledger (is it there and
     * closed, does its copy match it, would cleanup delete it) judge one read of it, which over 100,000 ledgers
     * spares tens of thousands of reads.
     */
    @Override
    public CompletableFuture<Optional<LedgerFacts>> facts(long ledgerId, String cluster) {
        return factsRead.computeIfAbsent(cluster + "/" + ledgerId, k -> factsAfresh(ledgerId, cluster));
    }

    /** A ledger's metadata read afresh (to learn whether it is gone since this verify first read it). */
    CompletableFuture<Optional<LedgerFacts>> factsAfresh(long ledgerId, String cluster) {
        return bounded(cluster, () -> copier.facts(ledgerId, cluster));
    }

    @Override
    public CompletableFuture<List<Long>> list(String cluster) {
        return bounded(cluster, listingMillis, () -> copier.listJoiningRunning(cluster));
    }

    @Override
    public CompletableFuture<Boolean> sameEntries(long ledgerId, String a, String b,
                                                  LongFunction<CompletableFuture<Void>> pace) {
        for (String c : List.of(a, b)) {
            if (silent.contains(c)) {
                return CompletableFuture.failedFuture(silence(c));
            }
        }
        return copier.sameEntries(ledgerId, a, b, pace);
    }

    @Override
    public CompletableFuture<Outcome> copy(long ledgerId, String from, String to,
                                           LongFunction<CompletableFuture<Void>> pace) {
        throw new UnsupportedOperationException("verify copies nothing");
    }

    @Override
    public CompletableFuture<Void> delete(long ledgerId, String cluster) {
        throw new UnsupportedOperationException("verify deletes nothing");
    }
}
