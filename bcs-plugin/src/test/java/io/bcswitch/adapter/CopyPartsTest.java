package io.bcswitch.adapter;

import static io.bcswitch.concurrent.TestWaits.get;
import static io.bcswitch.adapter.InMemoryBookKeeper.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.InMemoryBookKeeper.Fault;
import io.bcswitch.adapter.InMemoryBookKeeper.Meta;
import io.bcswitch.concurrent.TestWaits;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.zip.CRC32C;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.junit.jupiter.api.Test;

/** The pieces the copier is built of: entry checksums and payloads, ledger look-ups, telling a copy's creation. */
class CopyPartsTest {
    private final InMemoryBookKeeper cluster = new InMemoryBookKeeper();
    private final List<Long> paced = new ArrayList<>();

    private CompletableFuture<Void> pace(long bytes) {
        paced.add(bytes);
        return CompletableFuture.completedFuture(null);
    }


    private static long crc32c(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return c.getValue();
    }

    // ---- EntryChecksums ----

    @Test
    void checksumsAreTheCrc32cOfEachPayloadWithoutTheReadHeader() throws Exception {
        cluster.readHeaderBytes = 36;
        byte[][] p = new byte[66][];
        long[] expected = new long[66];
        for (int i = 0; i < p.length; i++) {
            p[i] = bytes("payload " + i);
            expected[i] = crc32c(p[i]);
        }
        Meta m = cluster.addClosed(1, p);

        assertArrayEquals(expected, get(EntryChecksums.checksums(cluster, 1, m, 65, this::pace)));
        assertEquals(List.of("open 1 recovery=false", "read 1 0..63", "read 1 64..65", "close 1"),
                cluster.calls);
        long firstBatch = 0;
        for (int i = 0; i < 64; i++) {
            firstBatch += p[i].length;
        }
        assertEquals(List.of(firstBatch, (long) (p[64].length + p[65].length)), paced);
    }

    @Test
    void checksumsOfAPrefixReadOnlyThePrefix() throws Exception {
        Meta m = cluster.addClosed(1, bytes("a"), bytes("bb"), bytes("ccc"));

        assertArrayEquals(new long[] {crc32c(bytes("a")), crc32c(bytes("bb"))},
                get(EntryChecksums.checksums(cluster, 1, m, 1, this::pace)));
        assertEquals(List.of(3L), paced);
    }

    @Test
    void checksumsOfNoEntriesOpenNothing() throws Exception {
        Meta m = cluster.addClosed(1);

        assertArrayEquals(new long[0], get(EntryChecksums.checksums(cluster, 1, m, -1, this::pace)));
        assertEquals(List.of(), cluster.calls);
    }

    @Test
    void aReadFailureFailsTheChecksumsAndClosesTheHandle() {
        Meta m = cluster.addClosed(1, bytes("a"), bytes("b"));
        cluster.readFaults.put(1L, new Fault(BKException.Code.ReadException));

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> get(EntryChecksums.checksums(cluster, 1, m, 1, this::pace)));
        assertInstanceOf(BKException.BKReadException.class, io.bcswitch.concurrent.Failures.unwrap(e));
        assertTrue(cluster.calls.contains("close 1"));
    }

    @Test
    void compareTellsEqualFromDifferentPayloads() throws Exception {
        InMemoryBookKeeper other = new InMemoryBookKeeper();
        Meta m = cluster.addClosed(1, bytes("a"), bytes("b"));
        other.addClosed(1, bytes("a"), bytes("b"));

        assertTrue(get(EntryChecksums.compare(cluster, other, 1, m, 1, this::pace)));
        other.ledger(1).orElseThrow().entries.put(1L, bytes("c"));
        assertFalse(get(EntryChecksums.compare(cluster, other, 1, m, 1, this::pace)));
        assertTrue(get(EntryChecksums.compare(cluster, other, 1, m, 0, this::pace)), "the prefix is the same");
    }

    @Test
    void aPayloadIsItsOwnBufferOfTheBytesAfterTheReaderIndex() throws Exception {
        cluster.readHeaderBytes = 36;
        Meta m = cluster.addClosed(1, bytes("hello"));
        ReadHandle h = get(LedgerCalls.open(cluster, 1, m, false));
        try (LedgerEntries es = get(h.readAsync(0, 0))) {
            LedgerEntry e = es.getEntry(0);
            ByteBuf b = EntryChecksums.payload(e);
            assertEquals(2, e.getEntryBuffer().refCnt(), "a reference of its own");
            byte[] out = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), out);
            assertArrayEquals(bytes("hello"), out, "no header in it");
            assertEquals(crc32c(bytes("hello")), EntryChecksums.crc(e));
            b.release();
        }
    }

    // ---- LedgerCalls ----

    @Test
    void openPassesTheLedgersDigestPasswordAndRecoveryFlag() throws Exception {
        Meta m = cluster.addClosed(1, bytes("a"));

        assertEquals(1, get(LedgerCalls.open(cluster, 1, m, false)).getId());
        assertEquals(1, get(LedgerCalls.open(cluster, 1, m, true)).getId());
        assertEquals(List.of("open 1 recovery=false", "open 1 recovery=true"), cluster.calls);

        Meta wrongPassword = new Meta(1, 3, 2, 2, DigestType.CRC32C, bytes("x"), Map.of(), true, 0, 1, 1, 1);
        assertThrows(ExecutionException.class, () -> get(LedgerCalls.open(cluster, 1, wrongPassword, false)));
        Meta wrongDigest = new Meta(1, 3, 2, 2, DigestType.MAC, bytes("secret"), Map.of(), true, 0, 1, 1, 1);
        assertThrows(ExecutionException.class, () -> get(LedgerCalls.open(cluster, 1, wrongDigest, false)));
    }

    @Test
    void metadataOfAMissingLedgerIsEmptyAndOfAFailedCallAFailure() throws Exception {
        Meta m = cluster.addClosed(1, bytes("a"));

        assertEquals(Optional.of(m), get(LedgerCalls.metadata(cluster, 1)));
        assertEquals(Optional.empty(), get(LedgerCalls.metadata(cluster, 2)));
        cluster.metadataFaults.put(3L, new Fault(BKException.Code.NoSuchLedgerExistsException));
        assertEquals(Optional.empty(), get(LedgerCalls.metadata(cluster, 3)));
        cluster.metadataFaults.put(4L, new Fault(BKException.Code.ZKException));
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(LedgerCalls.metadata(cluster, 4)));
        assertInstanceOf(BKException.ZKException.class, e.getCause(), "unwrapped once: its code is what callers read");
    }

    @Test
    void noSuchLedgerIsEitherOfBookKeepersTwoCodesHoweverWrapped() {
        assertTrue(LedgerCalls.noSuchLedger(BKException.create(BKException.Code.NoSuchLedgerExistsException)));
        assertTrue(LedgerCalls.noSuchLedger(new CompletionException(
                BKException.create(BKException.Code.NoSuchLedgerExistsOnMetadataServerException))));
        assertFalse(LedgerCalls.noSuchLedger(BKException.create(BKException.Code.NoSuchEntryException)));
        assertFalse(LedgerCalls.noSuchLedger(new IllegalStateException("no such ledger")));
    }

    // ---- CopyWriter ----

    private static Meta created(long ctime, long ctoken) {
        return new Meta(1, 1, 1, 1, DigestType.CRC32C, new byte[0], Map.of(), false, -1, 0, ctime, ctoken);
    }

    @Test
    void aCopysCreationIsToldByItsTokenWhileBothHaveOne() {
        assertTrue(CopyWriter.sameCreation(created(5, 10), created(5, 10)));
        assertTrue(CopyWriter.sameCreation(created(5, 10), created(6, 10)), "the token decides");
        assertFalse(CopyWriter.sameCreation(created(5, 10), created(5, 11)), "the token decides");
    }

    @Test
    void withoutATokenOnEitherTheCreationTimeTells() {
        assertTrue(CopyWriter.sameCreation(created(5, 0), created(5, 11)));
        assertTrue(CopyWriter.sameCreation(created(5, 10), created(5, 0)));
        assertFalse(CopyWriter.sameCreation(created(5, 10), created(6, 0)));
        assertFalse(CopyWriter.sameCreation(created(5, 0), created(6, 11)));
        assertFalse(CopyWriter.sameCreation(created(0, 0), created(0, 0)), "neither known: not provably ours");
        assertTrue(CopyWriter.sameCreation(created(1, 0), created(1, 0)));
    }
}
