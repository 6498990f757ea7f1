package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.testkit.TestCluster;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.WriteAdvHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ledger copier against two real bookie clusters, in the sequence where a migration's broker lost the
 * migration (its session expired) while copying, and the broker that took over replaced its half-made copy with
 * its own: the first copy then fails, and it must not delete what is now under the id.
 */
class LedgerCopierRaceTest extends CopierTestBase {
    private static BookKeeperLedgerCopier copier() {
        return new BookKeeperLedgerCopier(name -> CompletableFuture.completedFuture(
                name.equals("cluster-a") ? a : b), io);
    }

    @Test
    void aCopyThatFailsHalfWayIsDeleted() throws Exception {
        long id = sourceLedger(200);
        LongFunction<CompletableFuture<Void>> failing = bytes -> CompletableFuture.failedFuture(
                new java.io.IOException("source bookie went away"));
        LedgerCopier.Outcome out = copier().copy(id, "cluster-a", "cluster-b", failing).get(30, TimeUnit.SECONDS);
        assertEquals(LedgerCopier.Result.FAILED, out.result(), out.detail());
        assertFalse(isOnB(id), "the half-made copy is not left behind");
    }

    @Test
    void aFailedCopyNeverDeletesTheCopyAnotherRunMadeUnderTheSameId() throws Exception {
        long id = sourceLedger(200);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        CompletableFuture<Void> firstBatchRead = new CompletableFuture<>();
        LongFunction<CompletableFuture<Void>> stalled = bytes -> {
            firstBatchRead.complete(null);
            return gate;
        };
        CompletableFuture<LedgerCopier.Outcome> first = copier().copy(id, "cluster-a", "cluster-b", stalled);
        firstBatchRead.get(30, TimeUnit.SECONDS);

        // the broker that took over: it finds the half-made copy, replaces it with a complete, verified one
        LedgerCopier.Outcome second = copier().copy(id, "cluster-a", "cluster-b", bytes ->
                CompletableFuture.completedFuture(null)).get(30, TimeUnit.SECONDS);
        assertEquals(LedgerCopier.Result.COPIED, second.result(), second.detail());
        LedgerMetadata replaced = b.getLedgerMetadata(id).get();

        // now the first run's source read fails
        gate.completeExceptionally(new java.io.IOException("source bookie went away"));
        LedgerCopier.Outcome out = first.get(30, TimeUnit.SECONDS);
        assertEquals(LedgerCopier.Result.FAILED, out.result(), out.detail());
        assertTrue(isOnB(id), "the copy the other run made is still there");
        LedgerMetadata now = b.getLedgerMetadata(id).get();
        assertEquals(replaced.getCToken(), now.getCToken(), "the very copy the other run made");
        assertTrue(now.isClosed());
        assertEquals(199, now.getLastEntryId());
        assertTrue(copier().sameEntries(id, "cluster-a", "cluster-b", bytes -> CompletableFuture.completedFuture(null))
                .get(30, TimeUnit.SECONDS), "and it holds the source's entries");
    }

    /**
     * Found by MigrationFailoverTest: a broker stopped while copying; the copy failed because its clients closed,
     * it was deleted, and the bookies' garbage collector then made its id unwritable there for days (a later copy
     * under it is refused as "fenced/deleted"). A copy that fails because the broker stops is left for the next run.
     */
    @Test
    void aCopyThatFailsBecauseTheBrokerStopsIsLeftForTheRunThatTakesOver() throws Exception {
        long id = sourceLedger(200);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        CompletableFuture<Void> firstBatchRead = new CompletableFuture<>();
        BookKeeperLedgerCopier stopped = copier();
        CompletableFuture<LedgerCopier.Outcome> first = stopped.copy(id, "cluster-a", "cluster-b", bytes -> {
            firstBatchRead.complete(null);
            return gate;
        });
        firstBatchRead.get(30, TimeUnit.SECONDS);
        stopped.stopping();
        gate.completeExceptionally(new java.io.IOException("the client is closed"));
        LedgerCopier.Outcome out = first.get(30, TimeUnit.SECONDS);
        assertEquals(LedgerCopier.Result.FAILED, out.result(), out.detail());
        assertTrue(isOnB(id), "the half-made copy is left for the next run");

        LedgerCopier.Outcome next = copier().copy(id, "cluster-a", "cluster-b", bytes ->
                CompletableFuture.completedFuture(null)).get(30, TimeUnit.SECONDS);
        assertEquals(LedgerCopier.Result.COPIED, next.result(), next.detail());
        assertTrue(next.detail().contains("replaced an interrupted copy"), next.detail());
        assertTrue(copier().sameEntries(id, "cluster-a", "cluster-b", bytes -> CompletableFuture.completedFuture(null))
                .get(30, TimeUnit.SECONDS));
    }
}
