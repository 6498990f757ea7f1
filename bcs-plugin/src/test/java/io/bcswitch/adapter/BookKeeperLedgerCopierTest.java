package io.bcswitch.adapter;

import static io.bcswitch.concurrent.TestWaits.get;
import static io.bcswitch.adapter.InMemoryBookKeeper.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.InMemoryBookKeeper.Fault;
import io.bcswitch.adapter.InMemoryBookKeeper.Meta;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.migration.LedgerCopier.LedgerFacts;
import io.bcswitch.migration.LedgerCopier.Outcome;
import io.bcswitch.migration.LedgerCopier.Result;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.DigestType;
import org.junit.jupiter.api.Test;

/**
 * The copier end to end over two in-memory clusters: a copy is made, verified and judged as the migration relies on
 * (what it leaves on the target, what it deletes, what it never touches), for a good copy and for each way one can go
 * wrong.
 */
class BookKeeperLedgerCopierTest {
    private static final long ID = 7;

    private final InMemoryBookKeeper a = new InMemoryBookKeeper();
    private final InMemoryBookKeeper b = new InMemoryBookKeeper();
    private final Map<String, InMemoryBookKeeper> clusters = Map.of("a", a, "b", b);
    /** holds taken and released per cluster: every operation must release what it held */
    private final Map<String, AtomicInteger> holds = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> releases = new ConcurrentHashMap<>();
    private final BookKeeperLedgerCopier copier = BookKeeperLedgerCopier.holding(cluster -> {
        InMemoryBookKeeper c = clusters.get(cluster);
        if (c == null) {
            return CompletableFuture.failedFuture(BKException.create(BKException.Code.ZKException));
        }
        holds.computeIfAbsent(cluster, x -> new AtomicInteger()).incrementAndGet();
        return CompletableFuture.completedFuture(new BookKeeperLedgerCopier.Held(c,
                () -> releases.computeIfAbsent(cluster, x -> new AtomicInteger()).incrementAndGet()));
    }, Runnable::run);
    /** the bytes of each paced batch, in order */
    private final List<Long> paced = new ArrayList<>();

    private CompletableFuture<Void> pace(long bytes) {
        paced.add(bytes);
        return CompletableFuture.completedFuture(null);
    }


    private Outcome copy() throws Exception {
        Outcome o = get(copier.copy(ID, "a", "b", this::pace));
        assertEquals(holds.get("a") == null ? 0 : holds.get("a").get(),
                releases.get("a") == null ? 0 : releases.get("a").get(), "every hold of a released");
        assertEquals(holds.get("b") == null ? 0 : holds.get("b").get(),
                releases.get("b") == null ? 0 : releases.get("b").get(), "every hold of b released");
        return o;
    }

    private static byte[][] payloads(int n) {
        byte[][] p = new byte[n][];
        for (int i = 0; i < n; i++) {
            p[i] = bytes("entry-" + i + "-" + "x".repeat(i % 7));
        }
        return p;
    }

    private static long size(byte[][] p) {
        long n = 0;
        for (byte[] x : p) {
            n += x.length;
        }
        return n;
    }

    private void assertSameEntries(InMemoryBookKeeper x, InMemoryBookKeeper y) {
        List<byte[]> px = x.payloads(ID);
        List<byte[]> py = y.payloads(ID);
        assertEquals(px.size(), py.size());
        for (int i = 0; i < px.size(); i++) {
            assertArrayEquals(px.get(i), py.get(i), "entry " + i);
        }
    }

    private boolean recoveryOpened() {
        return a.calls.stream().anyMatch(c -> c.endsWith("recovery=true"))
                || b.calls.stream().anyMatch(c -> c.endsWith("recovery=true"));
    }

    // ---- a copy made ----

    @Test
    void aClosedLedgerIsCopiedWithItsShapeAndEntriesAndVerified() throws Exception {
        byte[][] p = payloads(130); // three batches of 64, 64 and 2
        // a v2-protocol read: each payload behind a header that only the reader index skips
        a.readHeaderBytes = 36;
        b.readHeaderBytes = 36;
        Meta src = a.addClosed(ID, p);

        Outcome o = copy();

        assertEquals(new Outcome(Result.COPIED, size(p), "copied 130 entries, " + size(p) + " bytes"), o);
        assertSameEntries(a, b);
        Meta copy = b.ledger(ID).orElseThrow().meta;
        assertTrue(copy.isClosed());
        assertEquals(129, copy.getLastEntryId());
        assertEquals(src.getLength(), copy.getLength());
        assertEquals(src.getEnsembleSize(), copy.getEnsembleSize());
        assertEquals(src.getWriteQuorumSize(), copy.getWriteQuorumSize());
        assertEquals(src.getAckQuorumSize(), copy.getAckQuorumSize());
        assertEquals(src.getDigestType(), copy.getDigestType());
        assertArrayEquals(src.getPassword(), copy.getPassword());
        Map<String, byte[]> custom = new HashMap<>(copy.getCustomMetadata());
        assertArrayEquals(bytes("a"), custom.remove(BookKeeperLedgerCopier.COPY_OF_KEY), "the copy mark names a");
        assertEquals(src.getCustomMetadata().keySet(), custom.keySet());
        src.getCustomMetadata().forEach((k, v) -> assertArrayEquals(v, custom.get(k)));
        // the source is read once, in batches, paced; verifying reads the copy the same way
        assertEquals(List.of("read 7 0..63", "read 7 64..127", "read 7 128..129"),
                a.calls.stream().filter(c -> c.startsWith("read")).toList());
        assertEquals(List.of("read 7 0..63", "read 7 64..127", "read 7 128..129"),
                b.calls.stream().filter(c -> c.startsWith("read")).toList());
        long first = size(java.util.Arrays.copyOfRange(p, 0, 64));
        long second = size(java.util.Arrays.copyOfRange(p, 64, 128));
        long third = size(java.util.Arrays.copyOfRange(p, 128, 130));
        assertEquals(List.of(first, second, third, first, second, third), paced);
        assertFalse(recoveryOpened(), "never opened with recovery (it would fence)");
        assertTrue(a.calls.contains("close 7"), "the source's read handle is closed");
        assertTrue(b.calls.contains("close-write 7") && b.calls.contains("close 7"), "the copy's handles are closed");
        assertFalse(b.calls.contains("delete 7"));
    }

    @Test
    void anEmptyClosedLedgerIsCopiedWithoutReadingAnything() throws Exception {
        a.addClosed(ID);

        assertEquals(new Outcome(Result.COPIED, 0, "copied 0 entries, 0 bytes"), copy());

        Meta copy = b.ledger(ID).orElseThrow().meta;
        assertTrue(copy.isClosed());
        assertEquals(-1, copy.getLastEntryId());
        assertTrue(a.calls.stream().noneMatch(c -> c.startsWith("read")));
        assertTrue(b.calls.stream().noneMatch(c -> c.startsWith("read")));
        assertEquals(List.of(), paced);
    }

    @Test
    void aSingleEntryLedgerIsCopied() throws Exception {
        a.addClosed(ID, bytes("only"));

        assertEquals(new Outcome(Result.COPIED, 4, "copied 1 entries, 4 bytes"), copy());
        assertSameEntries(a, b);
        assertEquals(List.of(4L, 4L), paced);
    }

    @Test
    void exactlyOneBatchIsReadInOneRead() throws Exception {
        a.addClosed(ID, payloads(64));

        assertEquals(Result.COPIED, copy().result());
        assertEquals(List.of("read 7 0..63"), a.calls.stream().filter(c -> c.startsWith("read")).toList());
    }

    // ---- nothing to copy ----

    @Test
    void aMissingSourceIsReportedAndNothingIsCreated() throws Exception {
        assertEquals(new Outcome(Result.SOURCE_MISSING, 0, "no ledger 7 on a"), copy());
        assertTrue(b.ledger(ID).isEmpty());
        assertFalse(b.calls.contains("create 7"));
    }

    @Test
    void anOpenSourceIsNotTouched() throws Exception {
        a.add(ID, false, payloads(3));

        assertEquals(new Outcome(Result.NOT_CLOSED, 0, "ledger 7 on a is open"), copy());
        assertTrue(b.ledger(ID).isEmpty());
        assertTrue(a.calls.stream().noneMatch(c -> c.startsWith("open")), "an open ledger is not even opened");
    }

    @Test
    void aSourceMetadataReadThatFailsIsARetriableFailureWhenTheClusterIsAway() throws Exception {
        a.metadataFaults.put(ID, new Fault(BKException.Code.ZKException));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.retriable());
        assertTrue(o.detail().startsWith("copy of ledger 7 from a to b failed: "), o.detail());
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aFailureThatSaysNothingOfReachabilityIsNotRetriable() throws Exception {
        a.metadataFaults.put(ID, new Fault(BKException.Code.UnauthorizedAccessException));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertFalse(o.retriable());
    }

    @Test
    void aClusterWithoutAClientFailsTheCopy() throws Exception {
        a.addClosed(ID, payloads(2));

        Outcome o = get(copier.copy(ID, "a", "nowhere", this::pace));

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.retriable(), "a metadata service that is away");
        assertEquals(holds.get("a").get(), releases.get("a").get(), "the source's client is released");
    }

    @Test
    void anOperationThatThrowsReleasesItsClient() throws Exception {
        a.metadataThrows = new IllegalStateException("client closed");

        Outcome o = copy(); // asserts the releases

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.detail().contains("client closed"), o.detail());
        assertFalse(o.retriable());
        assertEquals(1, releases.get("a").get());
    }

    // ---- a copy that fails verification is deleted ----

    @Test
    void aCopyWhosePayloadDiffersFailsAndIsDeleted() throws Exception {
        byte[][] p = payloads(5);
        a.addClosed(ID, p);
        b.corruptedWrites.add(3L);

        Outcome o = copy();

        assertEquals(new Outcome(Result.FAILED, size(p), "copy of ledger 7 on b has different entry payloads"), o);
        assertTrue(b.ledger(ID).isEmpty(), "the copy is deleted");
        assertTrue(a.ledger(ID).isPresent(), "the source stays");
    }

    @Test
    void aCopyMissingAnEntryFailsOnItsLengthAndIsDeleted() throws Exception {
        byte[][] p = payloads(5);
        Meta src = a.addClosed(ID, p);
        b.droppedWrites.add(2L);

        Outcome o = copy();

        assertEquals(new Outcome(Result.FAILED, size(p), "copy of ledger 7 on b does not match its source: closed "
                + "true, last entry 4 (source 4), length " + (src.getLength() - p[2].length) + " (source "
                + src.getLength() + ")"), o);
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aCopyMissingItsLastEntryFailsOnItsLastEntry() throws Exception {
        byte[][] p = payloads(5);
        p[4] = new byte[0]; // same length either way: only the last entry id tells
        Meta src = a.addClosed(ID, p);
        b.droppedWrites.add(4L);

        Outcome o = copy();

        assertEquals(new Outcome(Result.FAILED, size(p), "copy of ledger 7 on b does not match its source: closed "
                + "true, last entry 3 (source 4), length " + src.getLength() + " (source " + src.getLength() + ")"),
                o);
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aCopyLeftOpenFails() throws Exception {
        a.addClosed(ID, payloads(3));
        b.closeLeavesOpen = true;

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.detail().contains("closed false"), o.detail());
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aCopyLongerThanItsSourceFails() throws Exception {
        byte[][] p = payloads(3);
        a.addClosed(ID, p);
        // a writer of another run added an entry before this close
        b.afterWriteClose = id -> b.ledger(id).ifPresent(l -> {
            l.entries.put(3L, bytes("extra"));
            l.meta = l.meta.closedAt(3, l.meta.getLength() + 5);
        });

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.detail().contains("last entry 3 (source 2)"), o.detail());
    }

    @Test
    void aCopyThatDisappearsIsReportedGone() throws Exception {
        a.addClosed(ID, payloads(3));
        b.afterWriteClose = b::remove;

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertEquals("copy of ledger 7 on b does not match its source: it is gone", o.detail());
        assertFalse(b.calls.contains("delete 7"), "nothing left to delete");
    }

    @Test
    void aSourceReadFailingHalfWayFailsRetriablyAndThePartialCopyIsDeleted() throws Exception {
        a.addClosed(ID, payloads(100));
        a.readFaults.put(70L, new Fault(BKException.Code.ReadException));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertEquals(0, o.bytes());
        assertTrue(o.retriable(), "bookies that do not answer");
        assertTrue(o.detail().startsWith("copy of ledger 7 from a to b failed: "), o.detail());
        assertTrue(b.ledger(ID).isEmpty(), "the partial copy is deleted");
        assertTrue(b.calls.contains("close-write 7"), "the copy's writer is closed");
        assertTrue(a.calls.contains("close 7"), "the source's reader is closed");
    }

    @Test
    void aSourceDeletedWhileCopyingFailsTheCopy() throws Exception {
        a.addClosed(ID, payloads(100));
        a.beforeRead = first -> {
            if (first == 64) {
                a.remove(ID);
            }
        };

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertFalse(o.retriable());
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aWriteRefusedAsFencedSaysTheIdIsBurned() throws Exception {
        a.addClosed(ID, payloads(3));
        b.writeFaults.put(1L, new Fault(BKException.Code.LedgerFencedException));

        Outcome o = copy();

        assertEquals(new Outcome(Result.FAILED, 0, CopyWriter.burnedId(ID, "a", "b")), o);
        assertTrue(o.detail().contains("ledger id 7") && o.detail().contains("stays home on a")
                && o.detail().contains("restart of b"), o.detail());
    }

    @Test
    void aWriteTimingOutIsRetriable() throws Exception {
        a.addClosed(ID, payloads(3));
        b.writeFaults.put(2L, new Fault(BKException.Code.AddEntryQuorumTimeoutException));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.retriable());
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aCloseOfTheCopyThatFailsFailsTheCopy() throws Exception {
        a.addClosed(ID, payloads(3));
        b.closeFault = new Fault(BKException.Code.MetadataVersionException);

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertFalse(o.retriable());
        assertTrue(b.ledger(ID).isEmpty(), "deleted: it is not the source's");
    }

    @Test
    void aLedgerAppearingOnTheTargetMeanwhileIsACollisionAndLeftAlone() throws Exception {
        a.addClosed(ID, payloads(3));
        b.createFault = new Fault(BKException.Code.LedgerExistException);

        assertEquals(new Outcome(Result.COLLISION, 0, "ledger 7 appeared on b while copying"), copy());
        assertFalse(b.calls.contains("delete 7"));
    }

    @Test
    void aCreateThatFailsLeavesNothingToDelete() throws Exception {
        a.addClosed(ID, payloads(3));
        b.createFault = new Fault(BKException.Code.NotEnoughBookiesException);

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.retriable());
        assertFalse(b.calls.contains("delete 7"));
        assertTrue(b.calls.stream().noneMatch(c -> c.startsWith("metadata 7") && b.calls.indexOf(c)
                > b.calls.indexOf("create 7")), "no look-up for a copy never made");
    }

    @Test
    void aFailedCopyIsLeftWhenTheBrokerStops() throws Exception {
        byte[][] p = payloads(5);
        a.addClosed(ID, p);
        b.corruptedWrites.add(0L);
        copier.stopping();

        Outcome o = copy();

        assertEquals(new Outcome(Result.FAILED, size(p), "copy of ledger 7 on b has different entry payloads"), o);
        assertTrue(b.ledger(ID).isPresent(), "left for the run that takes over: deleting would burn its id");
        assertFalse(b.calls.contains("delete 7"));
    }

    @Test
    void theOutcomeOfAFailedCopyWaitsForItsDelete() throws Exception {
        a.addClosed(ID, payloads(5));
        b.corruptedWrites.add(0L);
        b.deferDeletes = true;

        CompletableFuture<Outcome> o = copier.copy(ID, "a", "b", this::pace);

        // a retry must not find the failed copy still there
        assertFalse(o.isDone(), "not before the failed copy is gone");
        assertEquals(1, b.deferredDeletes.size());
        b.deferredDeletes.get(0).complete(null);
        assertEquals(Result.FAILED, get(o).result());
        assertTrue(b.ledger(ID).isEmpty());
    }

    @Test
    void aFailedCopyReplacedByAnotherRunIsNotDeleted() throws Exception {
        a.addClosed(ID, payloads(5));
        b.corruptedWrites.add(0L);
        // another broker's run deleted this copy and made its own under the id
        b.afterWriteClose = id -> b.ledger(id).ifPresent(l -> l.meta = l.meta.withCreation(l.meta.getCtime() + 100,
                l.meta.getCToken() + 100));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(b.ledger(ID).isPresent(), "not ours to delete");
        assertFalse(b.calls.contains("delete 7"));
    }

    @Test
    void theOperatorIsToldWhyAFailedCopyIsNotDeleted() throws Exception {
        a.addClosed(ID, payloads(5));
        b.corruptedWrites.add(0L);
        b.afterWriteClose = id -> b.ledger(id).ifPresent(l -> l.meta = l.meta.withCreation(l.meta.getCtime() + 100,
                l.meta.getCToken() + 100));

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(
                BookKeeperLedgerCopier.class)) {
            assertEquals(Result.FAILED, copy().result());
            logged = log.messages();
        }

        assertTrue(logged.stream().anyMatch(m -> m.contains("the failed copy is not deleted: the ledger under this id "
                + "is not the one this copy created")), logged.toString());
        assertTrue(logged.stream().noneMatch(m -> m.contains("cannot delete")), logged.toString());
    }

    @Test
    void aFailedCopyGoneMeanwhileNeedsNoDeleteAndNoWarning() throws Exception {
        a.addClosed(ID, payloads(5));
        b.corruptedWrites.add(0L);

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(
                BookKeeperLedgerCopier.class)) {
            CompletableFuture<Outcome> o = copier.copy(ID, "a", "b", bytes -> {
                // the copy goes away right after its verification read (another run's cleanup): nothing to delete
                if (b.calls.stream().anyMatch(c -> c.startsWith("read 7"))) {
                    b.remove(ID);
                }
                return CompletableFuture.completedFuture(null);
            });
            assertEquals(Result.FAILED, get(o).result());
            logged = log.messages();
        }

        assertFalse(b.calls.contains("delete 7"));
        assertTrue(logged.stream().noneMatch(m -> m.contains("cannot delete") || m.contains("not deleted")),
                logged.toString());
    }

    @Test
    void listNamesEveryLedgerOfTheCluster() throws Exception {
        b.addClosed(3);
        b.addClosed(1L << 40);
        b.add(9, false);

        assertEquals(List.of(3L, 9L, 1L << 40), get(copier.list("b")));
        assertEquals(holds.get("b").get(), releases.get("b").get());
    }

    /**
     * A listing whose ledger-manager read fails half way fails: BookKeeperAdmin's {@code listLedgers()} iterator
     * logs such an IOException and ends the iteration, which returned a truncated listing as if it were complete
     * to the audit (which then did not check the ledgers left out) and to cleanup.
     */
    @Test
    void aListingThatFailsFails() {
        b.addClosed(3);
        b.listFault = new java.io.IOException("metadata store away");

        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> get(copier.list("b")));
        assertTrue(e.getCause().toString().contains("metadata store away"), e.getCause().toString());
        assertEquals(holds.get("b").get(), releases.get("b").get());
    }

    /**
     * A listing blocks a thread while its cluster's metadata service does not answer; whoever asks meanwhile joins
     * it instead of blocking another thread (a verify asked every minute during an outage would pile them up). Once
     * it ended, the next one lists again.
     */
    @Test
    void aListingInFlightIsJoinedAndTheNextOneListsAgain() throws Exception {
        b.addClosed(3);
        List<Runnable> queued = new ArrayList<>();
        BookKeeperLedgerCopier deferred = BookKeeperLedgerCopier.holding(cluster -> CompletableFuture.completedFuture(
                new BookKeeperLedgerCopier.Held(clusters.get(cluster), () -> { })), queued::add);

        CompletableFuture<List<Long>> first = deferred.listJoiningRunning("b");
        CompletableFuture<List<Long>> second = deferred.listJoiningRunning("b");
        CompletableFuture<List<Long>> other = deferred.listJoiningRunning("a");
        assertEquals(2, queued.size(), "one listing of b for both callers, one of a");
        queued.remove(0).run();
        assertEquals(List.of(3L), get(first));
        assertEquals(List.of(3L), get(second));
        assertTrue(!other.isDone(), "a's listing is its own");

        b.addClosed(4);
        CompletableFuture<List<Long>> third = deferred.listJoiningRunning("b");
        assertEquals(2, queued.size(), "a new listing once the first ended");
        queued.remove(1).run();
        assertEquals(List.of(3L, 4L), get(third));

        // a caller that must see what it made before asking (the migration looking for its copies) lists afresh
        CompletableFuture<List<Long>> shared = deferred.listJoiningRunning("b");
        CompletableFuture<List<Long>> fresh = deferred.list("b");
        assertEquals(3, queued.size(), "list() never joins");
        queued.forEach(Runnable::run);
        assertEquals(List.of(3L, 4L), get(fresh));
        assertEquals(List.of(3L, 4L), get(shared));
    }

    /** A listing that cannot even start (no client yet) fails its callers and leaves nothing for the next to join. */
    @Test
    void aSharedListingThatCannotStartFailsAndTheNextOneStartsAgain() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        BookKeeperLedgerCopier failing = BookKeeperLedgerCopier.holding(cluster -> {
            if (asked.incrementAndGet() == 1) {
                throw new IllegalStateException("no client yet");
            }
            return CompletableFuture.completedFuture(new BookKeeperLedgerCopier.Held(clusters.get(cluster), () -> { }));
        }, Runnable::run);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> get(failing.listJoiningRunning("b")));
        assertTrue(e.getCause().getMessage().contains("no client yet"), e.getCause().toString());
        b.addClosed(3);
        assertEquals(List.of(3L), get(failing.listJoiningRunning("b")));
    }

    @Test
    void aFailedCopyWithoutCreatorTokensIsToldByItsCreationTime() throws Exception {
        a.addClosed(ID, payloads(5));
        b.corruptedWrites.add(0L);
        b.noCTokens = true;

        assertEquals(Result.FAILED, copy().result());
        assertTrue(b.ledger(ID).isEmpty(), "same creation time: ours, deleted");
    }

    @Test
    void aFailedCopyWhoseDeleteFailsStillReportsTheFailure() throws Exception {
        a.addClosed(ID, payloads(5));
        b.corruptedWrites.add(0L);
        b.deleteFaults.put(ID, new Fault(BKException.Code.ZKException));

        Outcome o = copy();

        assertEquals(new Outcome(Result.FAILED, o.bytes(), "copy of ledger 7 on b has different entry payloads"), o);
        assertTrue(b.ledger(ID).isPresent(), "cleanup removes it: it carries the copy mark");
    }

    @Test
    void aCopyWhoseMetadataCannotBeReadBackFails() throws Exception {
        a.addClosed(ID, payloads(3));
        b.afterWriteClose = id -> b.metadataFaults.put(id, new Fault(BKException.Code.ZKException));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.retriable());
        assertTrue(b.ledger(ID).isPresent(), "its metadata cannot be read to tell it is ours: left to cleanup");
    }

    // ---- a ledger already on the target ----

    /** Puts on b what a copy of a's ledger would be, marked, closed or not, with these payloads. */
    private void targetLike(Meta src, boolean closed, byte[]... payloads) {
        Map<String, byte[]> custom = new HashMap<>(src.getCustomMetadata());
        custom.put(BookKeeperLedgerCopier.COPY_OF_KEY, bytes("a"));
        b.put(new Meta(ID, src.getEnsembleSize(), src.getWriteQuorumSize(), src.getAckQuorumSize(),
                src.getDigestType(), src.getPassword(), custom, false, -1, 0, 5, 6), closed, payloads);
    }

    @Test
    void anIdenticalCopyAlreadyThereIsKept() throws Exception {
        byte[][] p = payloads(70);
        Meta src = a.addClosed(ID, p);
        targetLike(src, true, p);

        assertEquals(new Outcome(Result.ALREADY_PRESENT, 0, "identical copy already on b"), copy());
        assertSameEntries(a, b);
        assertFalse(b.calls.contains("create 7") || b.calls.contains("delete 7"));
        assertFalse(recoveryOpened());
        assertEquals(4, paced.size(), "both ledgers read, two batches each");
    }

    @Test
    void aClosedLedgerWithOtherEntriesIsACollision() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        byte[][] other = payloads(3);
        other[1] = bytes("entry-1-y"); // same length
        targetLike(src, true, other);

        assertEquals(new Outcome(Result.COLLISION, 0, "ledger 7 on b has different entries"), copy());
        assertArrayEquals(other[1], b.payloads(ID).get(1), "never overwritten");
    }

    /** A target differing from the source in its shape: a collision, left untouched. */
    private void assertShapeCollision(Meta differing) throws Exception {
        byte[][] p = payloads(3);
        a.addClosed(ID, p);
        b.put(differing, true, p);

        assertEquals(new Outcome(Result.COLLISION, 0, "ledger 7 on b differs from the one on a (size, quorum, "
                + "digest or custom metadata)"), copy());
        assertTrue(b.ledger(ID).isPresent());
        assertTrue(b.calls.stream().noneMatch(c -> c.startsWith("open") || c.startsWith("delete")));
    }

    private static Meta shape(int ensemble, int wq, int aq, DigestType digest, String password,
                              Map<String, byte[]> custom) {
        return new Meta(ID, ensemble, wq, aq, digest, bytes(password), custom, false, -1, 0, 5, 6);
    }

    private static Map<String, byte[]> pulsarCustom() {
        return Map.of("application", bytes("pulsar"), "component", bytes("managed-ledger"));
    }

    @Test
    void aTargetOfAnotherEnsembleSizeIsACollision() throws Exception {
        assertShapeCollision(shape(4, 2, 2, DigestType.CRC32C, "secret", pulsarCustom()));
    }

    @Test
    void aTargetOfAnotherWriteQuorumIsACollision() throws Exception {
        assertShapeCollision(shape(3, 3, 2, DigestType.CRC32C, "secret", pulsarCustom()));
    }

    @Test
    void aTargetOfAnotherAckQuorumIsACollision() throws Exception {
        assertShapeCollision(shape(3, 2, 1, DigestType.CRC32C, "secret", pulsarCustom()));
    }

    @Test
    void aTargetOfAnotherDigestIsACollision() throws Exception {
        assertShapeCollision(shape(3, 2, 2, DigestType.CRC32, "secret", pulsarCustom()));
    }

    @Test
    void aTargetOfAnotherPasswordIsACollision() throws Exception {
        assertShapeCollision(shape(3, 2, 2, DigestType.CRC32C, "other", pulsarCustom()));
    }

    @Test
    void aTargetWithAnotherCustomValueIsACollision() throws Exception {
        assertShapeCollision(shape(3, 2, 2, DigestType.CRC32C, "secret",
                Map.of("application", bytes("pulsar"), "component", bytes("schema"))));
    }

    @Test
    void aTargetWithAnExtraCustomKeyIsACollision() throws Exception {
        Map<String, byte[]> custom = new HashMap<>(pulsarCustom());
        custom.put("more", bytes("x"));
        assertShapeCollision(shape(3, 2, 2, DigestType.CRC32C, "secret", custom));
    }

    @Test
    void aTargetWithAnotherCustomKeyOfTheSameCountIsACollision() throws Exception {
        assertShapeCollision(shape(3, 2, 2, DigestType.CRC32C, "secret",
                Map.of("application", bytes("pulsar"), "other", bytes("managed-ledger"))));
    }

    @Test
    void anUnmarkedIdenticalLedgerCountsAsTheSameShape() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        b.put(shape(3, 2, 2, DigestType.CRC32C, "secret", src.getCustomMetadata()), true, p);

        assertEquals(Result.ALREADY_PRESENT, copy().result());
    }

    @Test
    void anInterruptedCopyThatIsAPrefixIsReplaced() throws Exception {
        byte[][] p = payloads(5);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false, p[0], p[1], p[2]);

        Outcome o = copy();

        assertEquals(new Outcome(Result.COPIED, size(p), "copied 5 entries, " + size(p) + " bytes (replaced an "
                + "interrupted copy)"), o);
        assertSameEntries(a, b);
        assertTrue(b.ledger(ID).orElseThrow().meta.isClosed());
        assertTrue(b.calls.contains("delete 7"));
        assertFalse(recoveryOpened(), "the interrupted copy is not recovered: that would fence its id");
        // the prefix compared: entries 0..2 of both, once each
        assertTrue(a.calls.contains("read 7 0..2") && b.calls.contains("read 7 0..2"), a.calls.toString());
    }

    @Test
    void anEmptyInterruptedCopyIsReplaced() throws Exception {
        byte[][] p = payloads(2);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false);

        assertEquals(Result.COPIED, copy().result());
        assertSameEntries(a, b);
    }

    @Test
    void aClosedShorterCopyIsReplacedWhenItIsAPrefix() throws Exception {
        byte[][] p = payloads(5);
        Meta src = a.addClosed(ID, p);
        targetLike(src, true, p[0], p[1]);

        assertEquals(Result.COPIED, copy().result());
        assertSameEntries(a, b);
    }

    @Test
    void aCopyOfTheSameLastEntryButAnotherLengthIsJudgedAsAPrefix() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        targetLike(src, true, p);
        b.ledger(ID).orElseThrow().meta = b.ledger(ID).orElseThrow().meta.withLength(src.getLength() + 1);

        assertEquals(Result.COPIED, copy().result(), "its entries are the source's: replaced");
        assertEquals(src.getLength(), b.ledger(ID).orElseThrow().meta.getLength());
    }

    @Test
    void anUnclosedLedgerThatIsNoPrefixIsACollision() throws Exception {
        byte[][] p = payloads(5);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false, p[0], bytes("not the source's"));

        assertEquals(new Outcome(Result.COLLISION, 0, "ledger 7 on b is not a copy of the one on a"), copy());
        assertEquals(2, b.payloads(ID).size(), "left untouched");
        assertFalse(b.calls.contains("delete 7"));
    }

    @Test
    void anUnclosedLedgerLongerThanTheSourceIsACollision() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false, p[0], p[1], p[2], bytes("more"));

        assertEquals(Result.COLLISION, copy().result());
        assertFalse(b.calls.contains("delete 7"));
        assertTrue(b.calls.contains("close 7"), "its read handle is closed");
    }

    @Test
    void anUnclosedLedgerOneEntryShorterIsStillAPrefix() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false, p[0], p[1]);

        assertEquals(Result.COPIED, copy().result());
    }

    @Test
    void anUnclosedLedgerAsLongAsTheSourceIsStillAPrefix() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false, p);

        assertEquals(Result.COPIED, copy().result());
        assertTrue(b.calls.contains("delete 7"));
    }

    @Test
    void anExistingLedgerThatCannotBeOpenedFailsTheCopy() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        targetLike(src, false, p[0]);
        b.openFaults.put(ID, new Fault(BKException.Code.BookieHandleNotAvailableException));

        Outcome o = copy();

        assertEquals(Result.FAILED, o.result());
        assertTrue(o.retriable());
        assertTrue(b.ledger(ID).isPresent());
    }

    // ---- sameEntries ----

    @Test
    void sameEntriesComparesEveryPayload() throws Exception {
        byte[][] p = payloads(70);
        Meta src = a.addClosed(ID, p);
        targetLike(src, true, p);

        assertTrue(get(copier.sameEntries(ID, "a", "b", this::pace)));
        assertEquals(4, paced.size());

        b.ledger(ID).orElseThrow().entries.put(69L, bytes("entry-69-xxxxxy"));
        assertFalse(get(copier.sameEntries(ID, "a", "b", this::pace)));
        assertEquals(holds.get("b").get(), releases.get("b").get());
    }

    @Test
    void sameEntriesIsFalseForAMissingOrOpenOrOtherLedger() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);
        assertFalse(get(copier.sameEntries(ID, "a", "b", this::pace)), "missing on b");
        assertFalse(get(copier.sameEntries(ID, "b", "a", this::pace)), "missing on the first");

        targetLike(src, false, p);
        assertFalse(get(copier.sameEntries(ID, "a", "b", this::pace)), "open on b");
        assertFalse(get(copier.sameEntries(ID, "b", "a", this::pace)), "open on the first");

        targetLike(src, true, p[0], p[1]);
        assertFalse(get(copier.sameEntries(ID, "a", "b", this::pace)), "another last entry");

        targetLike(src, true, p);
        assertTrue(get(copier.sameEntries(ID, "a", "b", this::pace)));
    }

    @Test
    void sameEntriesOfEmptyLedgersReadsNothing() throws Exception {
        Meta src = a.addClosed(ID);
        targetLike(src, true);

        assertTrue(get(copier.sameEntries(ID, "a", "b", this::pace)));
        assertEquals(List.of(), paced);
    }

    // ---- facts ----

    @Test
    void factsAreTheLedgersMetadata() throws Exception {
        byte[][] p = payloads(3);
        Meta src = a.addClosed(ID, p);

        assertEquals(Optional.of(new LedgerFacts(true, size(p), 2, "managed-ledger", null, false)),
                get(copier.facts(ID, "a")));
        assertEquals(Optional.empty(), get(copier.facts(ID, "b")));

        Map<String, byte[]> custom = new HashMap<>(src.getCustomMetadata());
        custom.put(BookKeeperLedgerCopier.COPY_OF_KEY, bytes("a"));
        custom.put(BrokerClientProbe.PROBE_KEY, bytes("1"));
        b.put(shape(3, 2, 2, DigestType.CRC32C, "secret", custom), false, p);
        assertEquals(Optional.of(new LedgerFacts(false, 0, -1, "managed-ledger", "a", true)),
                get(copier.facts(ID, "b")));
        assertEquals(holds.get("b").get(), releases.get("b").get());
    }

    @Test
    void onlyPulsarsLedgersHaveAComponent() throws Exception {
        b.put(shape(3, 2, 2, DigestType.CRC32C, "s", Map.of("application", bytes("other"),
                "component", bytes("x"))), true);
        assertNull(get(copier.facts(ID, "b")).orElseThrow().pulsarComponent());
        b.put(shape(3, 2, 2, DigestType.CRC32C, "s", Map.of("application", bytes("pulsar"))), true);
        assertNull(get(copier.facts(ID, "b")).orElseThrow().pulsarComponent());
        b.put(shape(3, 2, 2, DigestType.CRC32C, "s", Map.of("component", bytes("schema"))), true);
        assertNull(get(copier.facts(ID, "b")).orElseThrow().pulsarComponent());
        b.put(shape(3, 2, 2, DigestType.CRC32C, "s", Map.of("application", bytes("pulsar"),
                "component", bytes("schema"))), true);
        assertEquals("schema", get(copier.facts(ID, "b")).orElseThrow().pulsarComponent());
    }

    @Test
    void factsOfAClusterThatFailsFail() {
        b.metadataFaults.put(ID, new Fault(BKException.Code.ZKException));

        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> get(copier.facts(ID, "b")));
        assertInstanceOf(BKException.ZKException.class, io.bcswitch.concurrent.Failures.unwrap(e));
    }

    // ---- delete ----

    @Test
    void deleteRemovesTheLedgerAndALedgerAlreadyGoneCountsAsDeleted() throws Exception {
        a.addClosed(ID, payloads(2));

        get(copier.delete(ID, "a"));
        assertTrue(a.ledger(ID).isEmpty());
        get(copier.delete(ID, "a")); // gone: no failure
        assertEquals(List.of("delete 7", "delete 7"), a.calls);
        assertEquals(2, releases.get("a").get());
    }

    @Test
    void aDeleteThatFailsFailsWithBookKeepersError() {
        a.addClosed(ID, payloads(2));
        a.deleteFaults.put(ID, new Fault(BKException.Code.ZKException));

        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> get(copier.delete(ID, "a")));
        assertInstanceOf(BKException.ZKException.class, e.getCause(), "unwrapped: callers read its code");
    }

    @Test
    void theCopierOfPlainClientsReleasesNothing() throws Exception {
        a.addClosed(ID, payloads(2));
        BookKeeperLedgerCopier plain = new BookKeeperLedgerCopier(c -> CompletableFuture.completedFuture(
                clusters.get(c)), Runnable::run);

        assertEquals(Result.COPIED, get(plain.copy(ID, "a", "b", this::pace)).result());
        assertSameEntries(a, b);
    }
}
