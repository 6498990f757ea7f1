package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.FaultyBookKeeper.Fault;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.migration.LedgerCopier.Outcome;
import io.bcswitch.migration.LedgerCopier.Result;
import io.bcswitch.testkit.TestCluster;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.WriteAdvHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The ledger copier against two real bookie clusters, its client of the target failing or corrupting one step of
 * a copy at a time (create, a write, close, the read-back that verifies it, the delete of a failed copy), and
 * against a target that already holds something under the ledger's id (identical, other entries, other metadata,
 * an interrupted copy, a ledger that is not one). Each outcome must say what happened, a copy that is not the
 * source's is never reported as copied, and what a failed copy made is not left behind (or, when even its delete
 * fails, is marked as a copy, so that cleanup removes it).
 */
class LedgerCopierFaultTest extends CopierTestBase {
    private static final int ENTRIES = 100; // more than one copy batch
    private static final LongFunction<CompletableFuture<Void>> NO_PACE = bytes -> CompletableFuture.completedFuture(null);
    private static FaultyBookKeeper faultyB;

    @BeforeAll
    static void faultyClientOfB() {
        faultyB = new FaultyBookKeeper(b);
    }

    @AfterEach
    void heal() {
        faultyB.heal();
    }

    private static BookKeeperLedgerCopier copier() {
        return new BookKeeperLedgerCopier(name -> CompletableFuture.completedFuture(
                name.equals("cluster-a") ? a : faultyB), io);
    }

    private static Outcome copy(long id) throws Exception {
        return copier().copy(id, "cluster-a", "cluster-b", NO_PACE).get(60, TimeUnit.SECONDS);
    }

    /** A ledger made on cluster-b under {@code id}: {@code count} entries named by {@code name}, closed or not. */
    private static WriteAdvHandle onB(long id, int count, java.util.function.IntFunction<String> name,
                                      Map<String, byte[]> custom, boolean close) throws Exception {
        WriteAdvHandle w = b.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                .withDigestType(DigestType.CRC32C).withPassword(PWD).withCustomMetadata(custom).makeAdv()
                .withLedgerId(id).execute().get();
        for (int i = 0; i < count; i++) {
            w.write(i, name.apply(i).getBytes(StandardCharsets.UTF_8));
        }
        if (close) {
            w.close();
        }
        return w;
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"CREATE_FAILS", "WRITE_FAILS", "WRITE_CORRUPTED", "LAST_WRITE_DROPPED",
            "EXTRA_ENTRY", "CLOSE_FAILS", "READ_BACK_FAILS"})
    void aCopyThatGoesWrongAtOneStepFailsAndLeavesNothingBehind(Fault fault) throws Exception {
        long id = sourceLedger(ENTRIES);
        faultyB.arm(ENTRIES - 1, fault);
        Outcome out = copy(id);
        assertEquals(Result.FAILED, out.result(), fault + ": " + out.detail());
        String expected = switch (fault) {
            case WRITE_CORRUPTED -> "has different entry payloads";
            case LAST_WRITE_DROPPED, EXTRA_ENTRY -> "does not match its source: closed true, last entry";
            default -> "injected fault: " + fault;
        };
        assertTrue(out.detail().contains(expected), fault + ": " + out.detail());
        assertFalse(out.retriable(), fault + ": a later try would not mend it: " + out.detail());
        assertFalse(isOnB(id), fault + ": what the failed copy made is deleted from cluster-b");
    }

    /**
     * The target's bookies stop answering half way through a copy: it fails as one worth trying again, and what it
     * wrote is deleted (a later try may never come: the run can be superseded, and a leftover would be a copy that
     * differs from its source); the next try makes a verified copy.
     */
    @Test
    void aCopyWhoseTargetWentAwayFailsAsWorthTryingAgainAndLeavesNothing() throws Exception {
        long id = sourceLedger(ENTRIES);
        faultyB.arm(ENTRIES - 1, Fault.WRITE_UNREACHABLE);
        Outcome out = copy(id);
        assertEquals(Result.FAILED, out.result(), out.detail());
        assertTrue(out.retriable(), out.detail());
        assertFalse(isOnB(id), "what the failed copy made is deleted from cluster-b");
        faultyB.heal();
        Outcome again = copy(id);
        assertEquals(Result.COPIED, again.result(), again.detail());
    }

    /**
     * Found by the sequence explorer (seed -4966829370179537111): the clusters' clients are closed (the cluster was
     * deprecated by another request) while a copy runs through them. The copy holds them: it goes on to a verified
     * copy, and the clients close when it is over, not under it ("Ledger manager is closed").
     */
    @Test
    void aCopyGoesOnWhileItsClientsAreClosedAndTheyCloseWhenItIsOver() throws Exception {
        long id = sourceLedger(ENTRIES);
        java.util.List<BookKeeper> built = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (io.bcswitch.routing.ClusterClientPool pool = new io.bcswitch.routing.ClusterClientPool("test", name -> {
            try {
                BookKeeper c = migrationClient(name, org.apache.bookkeeper.common.allocator.PoolingPolicy.UnpooledHeap,
                        false);
                built.add(c);
                return CompletableFuture.completedFuture(c);
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        })) {
            BookKeeperLedgerCopier copier = BookKeeperLedgerCopier.holding(c -> pool.lease(c)
                    .thenApply(l -> new BookKeeperLedgerCopier.Held(l.client(), l::release)), io);
            CompletableFuture<Void> reading = new CompletableFuture<>();
            CompletableFuture<Void> goOn = new CompletableFuture<>();
            CompletableFuture<Outcome> copy = copier.copy(id, "cluster-a", "cluster-b", bytes -> {
                reading.complete(null);
                return goOn;
            });
            reading.get(60, TimeUnit.SECONDS);
            pool.closeClient("cluster-a").get(60, TimeUnit.SECONDS);
            pool.closeClient("cluster-b").get(60, TimeUnit.SECONDS);
            goOn.complete(null);
            Outcome out = copy.get(60, TimeUnit.SECONDS);
            assertEquals(Result.COPIED, out.result(), out.detail());
            assertEquals(2, built.size(), "no client built again: " + built);
            assertThrows(Exception.class, () -> built.get(0).getLedgerManager().readLedgerMetadata(id).get(10,
                    TimeUnit.SECONDS), "closed once the copy was over");
        }
    }

    /**
     * The source's bookies are down (restarting, say): the copy fails as one worth trying again, leaves nothing on
     * the target, and once they are back the same copy is made and verified.
     */
    @Test
    void aSourceWhoseBookiesAreDownFailsAsWorthTryingAgainAndIsCopiedOnceTheyAreBack() throws Exception {
        long id = sourceLedger(ENTRIES);
        io.bcswitch.testkit.TestBookieCluster source = cluster.bookieCluster("cluster-a");
        Outcome out;
        source.stopBookies();
        try {
            out = copy(id);
        } finally {
            source.startBookies();
        }
        assertEquals(Result.FAILED, out.result(), out.detail());
        assertTrue(out.retriable(), "the source cannot be reached for now: " + out.detail());
        assertFalse(isOnB(id), "what the failed copy made is deleted from cluster-b");
        Outcome again = copy(id);
        assertEquals(Result.COPIED, again.result(), again.detail());
    }

    @Test
    void aFailedCopyWhoseDeleteFailsIsLeftMarkedAsACopy() throws Exception {
        long id = sourceLedger(ENTRIES);
        faultyB.arm(ENTRIES - 1, Fault.WRITE_CORRUPTED, Fault.DELETE_FAILS);
        Outcome out = copy(id);
        assertEquals(Result.FAILED, out.result(), out.detail());
        assertTrue(out.detail().contains("has different entry payloads"), out.detail());
        assertTrue(isOnB(id), "its delete failed: the copy is still there");
        assertTrue(b.getLedgerMetadata(id).get().getCustomMetadata().containsKey(BookKeeperLedgerCopier.COPY_OF_KEY),
                "and carries the copy mark, so that cleanup removes it");
        faultyB.heal();
        Outcome again = copy(id);
        assertEquals(Result.COLLISION, again.result(), "the corrupt leftover is never taken for a copy: "
                + again.detail());
    }

    @Test
    void anIdenticalLedgerAlreadyOnTheTargetCountsAsCopied() throws Exception {
        long id = sourceLedger(ENTRIES);
        onB(id, ENTRIES, LedgerCopierFaultTest::entry, Map.of(), true);
        Outcome out = copy(id);
        assertEquals(Result.ALREADY_PRESENT, out.result(), out.detail());
    }

    @Test
    void aLedgerOnTheTargetWithOtherEntriesOfTheSameSizeIsACollision() throws Exception {
        long id = sourceLedger(ENTRIES);
        onB(id, ENTRIES, i -> "ENTRY-" + i, Map.of(), true);
        Outcome out = copy(id);
        assertEquals(Result.COLLISION, out.result(), out.detail());
        assertTrue(out.detail().contains("has different entries"), out.detail());
        assertTrue(isOnB(id), "what is on the target is never overwritten or deleted");
    }

    @Test
    void aLedgerOnTheTargetWithOtherMetadataIsACollision() throws Exception {
        long id = sourceLedger(ENTRIES);
        onB(id, ENTRIES, LedgerCopierFaultTest::entry, Map.of("owner", "someone else".getBytes(StandardCharsets.UTF_8)),
                true);
        Outcome out = copy(id);
        assertEquals(Result.COLLISION, out.result(), out.detail());
        assertTrue(out.detail().contains("custom metadata"), out.detail());
    }

    @Test
    void anInterruptedCopyOnTheTargetIsReplacedByAVerifiedOne() throws Exception {
        long id = sourceLedger(ENTRIES);
        WriteAdvHandle interrupted = onB(id, 10, LedgerCopierFaultTest::entry, Map.of(), false);
        Outcome out = copy(id);
        assertEquals(Result.COPIED, out.result(), out.detail());
        assertTrue(out.detail().contains("replaced an interrupted copy"), out.detail());
        assertEquals(ENTRIES - 1, b.getLedgerMetadata(id).get().getLastEntryId());
        assertTrue(copier().sameEntries(id, "cluster-a", "cluster-b", NO_PACE).get(30, TimeUnit.SECONDS));
        interrupted.closeAsync(); // its ledger was replaced: only the handle is let go
    }

    @Test
    void anOpenLedgerOnTheTargetThatIsNotAPrefixIsACollision() throws Exception {
        long id = sourceLedger(ENTRIES);
        WriteAdvHandle other = onB(id, 10, i -> "ENTRY-" + i, Map.of(), false);
        Outcome out = copy(id);
        assertEquals(Result.COLLISION, out.result(), out.detail());
        assertTrue(out.detail().contains("is not a copy"), out.detail());
        assertTrue(isOnB(id));
        other.close();
    }

    @Test
    void aSourceThatIsGoneIsReportedSoAndNothingIsMade() throws Exception {
        long id = sourceLedger(ENTRIES);
        a.newDeleteLedgerOp().withLedgerId(id).execute().get();
        Outcome out = copy(id);
        assertEquals(Result.SOURCE_MISSING, out.result(), out.detail());
        assertFalse(isOnB(id));
    }

    @Test
    void aCopyWithoutFaultsIsCopiedAndVerified() throws Exception {
        long id = sourceLedger(ENTRIES);
        Outcome out = copy(id);
        assertEquals(Result.COPIED, out.result(), out.detail());
        assertTrue(copier().sameEntries(id, "cluster-a", "cluster-b", NO_PACE).get(30, TimeUnit.SECONDS));
        LedgerCopier.LedgerFacts facts = copier().facts(id, "cluster-b").get(30, TimeUnit.SECONDS).orElseThrow();
        assertTrue(facts.closed());
    }

    /**
     * A ledger id the target's bookies wrote and collected after its delete (a failed, rolled-back or cleaned-up
     * copy): BookKeeper's bookies refuse writes under it for days. The copy fails saying so, and what to do.
     */
    @Test
    void anIdTheTargetsBookiesCollectedIsRefusedAndTheOutcomeSaysWhy() throws Exception {
        long id = sourceLedger(ENTRIES);
        onB(id, 3, LedgerCopierFaultTest::entry, Map.of(), true); // an earlier copy under this id
        b.newDeleteLedgerOp().withLedgerId(id).execute().get();
        cluster.bookieCluster("cluster-b").bookie(0).forceGarbageCollection(id);
        Outcome out = copy(id);
        assertEquals(Result.FAILED, out.result(), out.detail());
        assertEquals(CopyWriter.burnedId(id, "cluster-a", "cluster-b"), out.detail());
        assertFalse(out.retriable(), "the bookies refuse the id for days: " + out.detail());
    }
}
