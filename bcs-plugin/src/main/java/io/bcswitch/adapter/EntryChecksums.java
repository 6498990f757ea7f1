package io.bcswitch.adapter;

import static io.bcswitch.adapter.LedgerCalls.open;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import java.util.zip.CRC32C;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ReadHandle;

/**
 * The entry payloads {@link BookKeeperLedgerCopier} compares a ledger and its copy by: the CRC32C of each, read in
 * paced batches of the size the copy writes in.
 */
final class EntryChecksums {
    /**
     * Entries per read when a ledger is checksummed here or copied by {@link CopyWriter}: each batch is one read,
     * paced by its bytes, so it is the unit of pacing and what one step of a copy holds in memory.
     */
    static final int BATCH_ENTRIES = 64;

    private EntryChecksums() {
    }

    /** True when entries 0..{@code last} of both ledgers have the same payloads (CRC32C each). */
    static CompletableFuture<Boolean> compare(BookKeeper src, BookKeeper dst, long id, LedgerMetadata m, long last,
                                              LongFunction<CompletableFuture<Void>> pace) {
        return checksums(src, id, m, last, pace).thenCombine(checksums(dst, id, m, last, pace), Arrays::equals);
    }

    /**
     * CRC32C of the payload of entries 0..{@code last}, read in batches paced like the copy (a read-back
     * of a copy hits the bookies that serve the brokers' writes).
     */
    static CompletableFuture<long[]> checksums(BookKeeper client, long id, LedgerMetadata m, long last,
                                               LongFunction<CompletableFuture<Void>> pace) {
        long[] crcs = new long[Math.toIntExact(last + 1)];
        if (crcs.length == 0) {
            return CompletableFuture.completedFuture(crcs);
        }
        return open(client, id, m, false).thenCompose(h -> checksumsFrom(h, 0, crcs, pace)
                .whenComplete((v, e) -> h.closeAsync())).thenApply(v -> crcs);
    }

    private static CompletableFuture<Void> checksumsFrom(ReadHandle h, long first, long[] crcs,
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

    static long crc(LedgerEntry e) {
        ByteBuf b = e.getEntryBuffer();
        CRC32C crc = new CRC32C();
        crc.update(b.nioBuffer(b.readerIndex(), b.readableBytes()));
        return crc.getValue();
    }

    /**
     * The entry's payload as a buffer of its own (a reference the caller owns), for a write of the copy.
     *
     * <p>By explicit indexes on purpose: what BookKeeper reads with the v2 wire protocol (a broker's default) from a
     * pooled allocator (a broker's default) is a derived slice of the response whose header is skipped by moving
     * its reader index, and Netty's no-argument {@code retainedSlice()} of such a slice starts at its index 0, not
     * at the reader index: the copy then carried each entry's 36-byte header in its payload (the verification
     * caught it: every copy failed). The suites' unpooled heap buffers behave either way, which hid it.
     */
    static ByteBuf payload(LedgerEntry e) {
        ByteBuf b = e.getEntryBuffer();
        return b.retainedSlice(b.readerIndex(), b.readableBytes());
    }
}
