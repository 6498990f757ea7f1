package io.bcswitch.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.migration.LedgerCopier;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

/** A silent cluster's reads in one verify: the first waits its bound, the later ones fail at once, others go on. */
class BoundedClusterReadsTest {
    private final AtomicInteger asked = new AtomicInteger();
    /** Reads of "silent" never complete; of any other cluster at once. */
    private final LedgerCopier copier = new ReadsOnly() {
        private <T> CompletableFuture<T> answer(String cluster, T value) {
            asked.incrementAndGet();
            return cluster.equals("silent") ? new CompletableFuture<>() : CompletableFuture.completedFuture(value);
        }

        @Override
        public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
            return answer(cluster, Optional.empty());
        }

        @Override
        public CompletableFuture<List<Long>> list(String cluster) {
            return answer(cluster, List.of(1L, 2L));
        }

        @Override
        public CompletableFuture<Boolean> sameEntries(long id, String a, String b, LongFunction<CompletableFuture<Void>> p) {
            return answer(a.equals("silent") || b.equals("silent") ? "silent" : a, true);
        }
    };

    @Test
    void aSilentClusterIsFoundOnceAndItsLaterReadsFailAtOnce() throws Exception {
        BoundedClusterReads reads = new BoundedClusterReads(copier, 200);
        Throwable first = TestWaits.failure(reads.list("silent"));
        assertTrue(first instanceof TimeoutException, String.valueOf(first));
        assertEquals("the metadata service of bookie cluster 'silent' did not answer within 200 ms in this verify",
                first.getMessage());
        assertEquals(1, asked.get());

        CompletableFuture<Optional<LedgerCopier.LedgerFacts>> later = reads.facts(5, "silent");
        assertTrue(later.isCompletedExceptionally(), "failed at once, without asking again");
        assertEquals("the metadata service of bookie cluster 'silent' did not answer earlier in this verify",
                TestWaits.failure(later).getMessage());
        assertTrue(reads.sameEntries(5, "other", "silent", n -> null).isCompletedExceptionally());
        assertEquals(1, asked.get(), "the silent cluster was asked once");

        // another cluster answers as before, unbounded entry comparisons included
        assertEquals(List.of(1L, 2L), TestWaits.get(reads.list("other")));
        assertTrue(TestWaits.get(reads.sameEntries(5, "other", "third", n -> null)));
        assertEquals(3, asked.get());
    }

    /** One verify reads a ledger's metadata once however many checks look at it; afresh reads it again. */
    @Test
    void aLedgersMetadataIsReadOncePerVerifyUnlessAskedAfresh() throws Exception {
        BoundedClusterReads reads = new BoundedClusterReads(copier, 200);
        assertEquals(Optional.empty(), TestWaits.get(reads.facts(5, "other")));
        assertEquals(Optional.empty(), TestWaits.get(reads.facts(5, "other")));
        assertEquals(1, asked.get(), "read once");
        TestWaits.get(reads.facts(6, "other"));
        TestWaits.get(reads.facts(5, "third"));
        assertEquals(3, asked.get(), "another ledger, another cluster: read each");
        TestWaits.get(reads.factsAfresh(5, "other"));
        assertEquals(4, asked.get(), "afresh asks again");
        assertEquals(5, new BoundedClusterReads(copier, 200).facts(5, "other").thenApply(f -> asked.get()).get(),
                "the next verify reads it again");
    }

    /** The bound fails the verify's own future, never the listing it joined, which other callers still wait for. */
    @Test
    void aListingThatTimesOutIsLeftRunningForWhoeverSharesIt() throws Exception {
        CompletableFuture<List<Long>> shared = new CompletableFuture<>();
        BoundedClusterReads reads = new BoundedClusterReads(new LedgerCopierStub() {
            @Override
            public CompletableFuture<List<Long>> listJoiningRunning(String cluster) {
                return shared;
            }
        }, 100);
        assertTrue(TestWaits.failure(reads.list("slow")) instanceof TimeoutException);
        assertTrue(!shared.isDone(), "the shared listing goes on");
    }

    @Test
    void aListingHasItsOwnLongerBound() throws Exception {
        CompletableFuture<List<Long>> later = new CompletableFuture<>();
        BoundedClusterReads reads = new BoundedClusterReads(new LedgerCopierStub() {
            @Override
            public CompletableFuture<List<Long>> listJoiningRunning(String cluster) {
                return later;
            }
        }, 60_000, 50);
        CompletableFuture<List<Long>> listing = reads.list("big");
        Thread.sleep(300); // six times the bound of a ledger's read
        later.complete(List.of(7L));
        assertEquals(List.of(7L), TestWaits.get(listing));
    }

    @Test
    void aFailedReadIsPassedOnAndDoesNotSilenceTheCluster() throws Exception {
        BoundedClusterReads reads = new BoundedClusterReads(new LedgerCopierStub(), 200);
        Throwable e = TestWaits.failure(reads.facts(5, "broken"));
        assertEquals("no such ledger manager", e.getMessage());
        assertEquals(Optional.empty(), TestWaits.get(reads.facts(6, "ok")));
        assertEquals("no such ledger manager", TestWaits.failure(reads.facts(7, "broken")).getMessage(), "asked again");
    }

    /** Fails every read of "broken" at once. */
    private static class LedgerCopierStub extends ReadsOnly {
        @Override
        public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
            return cluster.equals("broken") ? CompletableFuture.failedFuture(new IllegalStateException(
                    "no such ledger manager")) : CompletableFuture.completedFuture(Optional.empty());
        }

        @Override
        public CompletableFuture<List<Long>> list(String cluster) {
            return CompletableFuture.completedFuture(List.of());
        }

        @Override
        public CompletableFuture<Boolean> sameEntries(long id, String a, String b, LongFunction<CompletableFuture<Void>> p) {
            return CompletableFuture.completedFuture(true);
        }
    }

    /** What verify asks of a copier: reads only. */
    private abstract static class ReadsOnly implements LedgerCopier {
        @Override
        public CompletableFuture<Outcome> copy(long id, String from, String to, LongFunction<CompletableFuture<Void>> p) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Void> delete(long id, String cluster) {
            throw new UnsupportedOperationException();
        }
    }
}
