package io.bcswitch.adapter;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.apache.bookkeeper.client.AsyncCallback.CreateCallback;
import org.apache.bookkeeper.client.AsyncCallback.DeleteCallback;
import org.apache.bookkeeper.client.AsyncCallback.OpenCallback;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BcsForwardingBookKeeper;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.CreateAdvBuilder;
import org.apache.bookkeeper.client.api.CreateBuilder;
import org.apache.bookkeeper.client.api.DeleteBuilder;
import org.apache.bookkeeper.client.api.LastConfirmedAndEntry;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.OpenBuilder;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteAdvHandle;
import org.apache.bookkeeper.client.api.WriteFlag;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.versioning.Version;
import org.apache.bookkeeper.versioning.Versioned;

/**
 * One bookie cluster in memory, for the adapter's unit tests: the part of
 * {@link org.apache.bookkeeper.client.BookKeeper}
 * the copier and the routed calls use (metadata look-ups, the open, create-with-id and delete builders, and the
 * classic callback and sync create, open and delete), with failures the tests inject. Every future completes on the
 * calling thread, so each test runs one deterministic order of events.
 *
 * <p>What it answers follows BookKeeper's own behaviour where the code under test relies on it: a missing ledger is
 * {@code NoSuchLedgerExistsOnMetadataServerException}, a create under a taken id {@code LedgerExistException}, a
 * wrong password {@code UnauthorizedAccessException}, and a closed write handle closes its ledger with the last entry
 * written and the sum of the payload lengths.
 */
// The api package's DigestType is written out in full below: BookKeeper's own nested DigestType, inherited here,
// would shadow an import of it.
class InMemoryBookKeeper extends BcsForwardingBookKeeper {

    /** A ledger's metadata as one immutable value. */
    record Meta(long ledgerId, int ensembleSize, int writeQuorumSize, int ackQuorumSize,
                org.apache.bookkeeper.client.api.DigestType digestType,
                byte[] password, Map<String, byte[]> customMetadata, boolean closed, long lastEntryId, long length,
                long ctime, long ctoken) implements LedgerMetadata {
        @Override
        public long getLedgerId() {
            return ledgerId;
        }

        @Override
        public int getEnsembleSize() {
            return ensembleSize;
        }

        @Override
        public int getWriteQuorumSize() {
            return writeQuorumSize;
        }

        @Override
        public int getAckQuorumSize() {
            return ackQuorumSize;
        }

        @Override
        public long getLastEntryId() {
            return lastEntryId;
        }

        @Override
        public long getLength() {
            return length;
        }

        @Override
        public boolean hasPassword() {
            return password != null;
        }

        @Override
        public byte[] getPassword() {
            return password.clone();
        }

        @Override
        public org.apache.bookkeeper.client.api.DigestType getDigestType() {
            return digestType;
        }

        @Override
        public long getCtime() {
            return ctime;
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public Map<String, byte[]> getCustomMetadata() {
            return customMetadata;
        }

        @Override
        public List<BookieId> getEnsembleAt(long entryId) {
            return List.of();
        }

        @Override
        public NavigableMap<Long, ? extends List<BookieId>> getAllEnsembles() {
            return Collections.emptyNavigableMap();
        }

        @Override
        public State getState() {
            return closed ? State.CLOSED : State.OPEN;
        }

        @Override
        public String toSafeString() {
            return "ledger " + ledgerId;
        }

        @Override
        public int getMetadataFormatVersion() {
            return 3;
        }

        @Override
        public long getCToken() {
            return ctoken;
        }

        Meta closedAt(long last, long len) {
            return new Meta(ledgerId, ensembleSize, writeQuorumSize, ackQuorumSize, digestType, password,
                    customMetadata, true, last, len, ctime, ctoken);
        }

        Meta withLength(long len) {
            return new Meta(ledgerId, ensembleSize, writeQuorumSize, ackQuorumSize, digestType, password,
                    customMetadata, closed, lastEntryId, len, ctime, ctoken);
        }

        Meta withCreation(long newCtime, long newCtoken) {
            return new Meta(ledgerId, ensembleSize, writeQuorumSize, ackQuorumSize, digestType, password,
                    customMetadata, closed, lastEntryId, length, newCtime, newCtoken);
        }
    }

    /** A ledger: its metadata (replaced as a whole) and its entries. */
    static final class Ledger {
        volatile Meta meta;
        final NavigableMap<Long, byte[]> entries = new java.util.concurrent.ConcurrentSkipListMap<>();

        Ledger(Meta meta) {
            this.meta = meta;
        }
    }

    /** A failure to inject: the BookKeeper error code a call fails with. */
    record Fault(int code) {
        BKException exception() {
            return BKException.create(code);
        }
    }

    private final Map<Long, Ledger> ledgers = new ConcurrentHashMap<>();
    /** What was asked of this cluster, in order ("open 5 recovery=false", "create 5", "delete 5", ...). */
    final List<String> calls = new CopyOnWriteArrayList<>();
    private final AtomicLong clock = new AtomicLong(1_000);
    private final AtomicLong nextId = new AtomicLong(100);

    // injected failures and events, each for one ledger id or entry id
    final Map<Long, Fault> metadataFaults = new ConcurrentHashMap<>();
    final Map<Long, Fault> openFaults = new ConcurrentHashMap<>();
    /** a read whose range holds this entry fails */
    final Map<Long, Fault> readFaults = new ConcurrentHashMap<>();
    /** a write of this entry fails */
    final Map<Long, Fault> writeFaults = new ConcurrentHashMap<>();
    final Map<Long, Fault> deleteFaults = new ConcurrentHashMap<>();
    /** a write of this entry is acknowledged but stored nowhere */
    final java.util.Set<Long> droppedWrites = ConcurrentHashMap.newKeySet();
    /** a write of this entry is stored with its first byte changed */
    final java.util.Set<Long> corruptedWrites = ConcurrentHashMap.newKeySet();
    volatile Fault createFault;
    volatile Fault closeFault;
    /** a write handle's close succeeds without closing its ledger */
    volatile boolean closeLeavesOpen;
    /** readers see each payload behind a header of this many bytes, skipped by the reader index (v2 protocol) */
    volatile int readHeaderBytes;
    /** run once a write handle closed its ledger, with the ledger id */
    volatile LongConsumer afterWriteClose = id -> { };
    /** run before each read of a batch, with the batch's first entry id */
    volatile LongConsumer beforeRead = first -> { };
    /** reads never answer (bookies that no longer respond) */
    volatile boolean pendingReads;
    /** a metadata look-up throws instead of returning a future */
    volatile RuntimeException metadataThrows;
    /** ledgers created get no creator token (as after BookKeeper rewrote the metadata) */
    volatile boolean noCTokens;

    /** A closed ledger with these payloads and a typical shape (ensemble 3, quorums 2, CRC32C, custom metadata). */
    Meta addClosed(long id, byte[]... payloads) {
        return add(id, true, payloads);
    }

    Meta add(long id, boolean closed, byte[]... payloads) {
        Map<String, byte[]> custom = new HashMap<>();
        custom.put("application", bytes("pulsar"));
        custom.put("component", bytes("managed-ledger"));
        Meta m = new Meta(id, 3, 2, 2, org.apache.bookkeeper.client.api.DigestType.CRC32C, bytes("secret"), custom,
                false, -1, 0,
                clock.incrementAndGet(), clock.incrementAndGet());
        return put(m, closed, payloads);
    }

    /** A ledger of metadata {@code shape} (its close state, last entry and length are set from the payloads). */
    Meta put(Meta shape, boolean closed, byte[]... payloads) {
        Ledger l = new Ledger(shape);
        long length = 0;
        for (int i = 0; i < payloads.length; i++) {
            l.entries.put((long) i, payloads[i].clone());
            length += payloads[i].length;
        }
        Meta m = new Meta(shape.ledgerId, shape.ensembleSize, shape.writeQuorumSize, shape.ackQuorumSize,
                shape.digestType, shape.password, Map.copyOf(shape.customMetadata), closed, closed
                ? payloads.length - 1 : -1, closed ? length : 0, shape.ctime, shape.ctoken);
        l.meta = m;
        ledgers.put(m.ledgerId, l);
        return m;
    }

    Optional<Ledger> ledger(long id) {
        return Optional.ofNullable(ledgers.get(id));
    }

    /** The ledger's payloads by entry id (copies). */
    List<byte[]> payloads(long id) {
        List<byte[]> out = new ArrayList<>();
        ledgers.get(id).entries.values().forEach(b -> out.add(b.clone()));
        return out;
    }

    void remove(long id) {
        ledgers.remove(id);
    }

    static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static <T> CompletableFuture<T> failed(Fault f) {
        return CompletableFuture.failedFuture(f.exception());
    }

    private static <T> CompletableFuture<T> failed(int code) {
        return CompletableFuture.failedFuture(BKException.create(code));
    }

    // ---- builder API ----

    @Override
    public CompletableFuture<LedgerMetadata> getLedgerMetadata(long id) {
        calls.add("metadata " + id);
        if (metadataThrows != null) {
            throw metadataThrows;
        }
        Fault f = metadataFaults.get(id);
        if (f != null) {
            return failed(f);
        }
        Ledger l = ledgers.get(id);
        return l == null ? failed(BKException.Code.NoSuchLedgerExistsOnMetadataServerException)
                : CompletableFuture.completedFuture(l.meta);
    }

    @Override
    public OpenBuilder newOpenLedgerOp() {
        return new OpenBuilder() {
            long id = -1;
            boolean recovery;
            byte[] password = new byte[0];
            org.apache.bookkeeper.client.api.DigestType digest = org.apache.bookkeeper.client.api.DigestType.CRC32;

            @Override
            public OpenBuilder withLedgerId(long ledgerId) {
                id = ledgerId;
                return this;
            }

            @Override
            public OpenBuilder withRecovery(boolean r) {
                recovery = r;
                return this;
            }

            @Override
            public OpenBuilder withPassword(byte[] p) {
                password = p;
                return this;
            }

            @Override
            public OpenBuilder withDigestType(org.apache.bookkeeper.client.api.DigestType d) {
                digest = d;
                return this;
            }

            @Override
            public CompletableFuture<ReadHandle> execute() {
                calls.add("open " + id + " recovery=" + recovery);
                return openReader(id, password, digest).thenApply(l -> new Reader(id, l));
            }
        };
    }

    private CompletableFuture<Ledger> openReader(long id, byte[] password,
                                                 org.apache.bookkeeper.client.api.DigestType digest) {
        Fault f = openFaults.get(id);
        if (f != null) {
            return failed(f);
        }
        Ledger l = ledgers.get(id);
        if (l == null) {
            return failed(BKException.Code.NoSuchLedgerExistsOnMetadataServerException);
        }
        if (!Arrays.equals(password, l.meta.password)) {
            return failed(BKException.Code.UnauthorizedAccessException);
        }
        if (digest != l.meta.digestType) {
            return failed(BKException.Code.DigestMatchException);
        }
        return CompletableFuture.completedFuture(l);
    }

    @Override
    public CreateBuilder newCreateLedgerOp() {
        return new Create();
    }

    /** The create builder; only the create with an id (the copy's) is made. */
    private final class Create implements CreateBuilder {
        int ensemble = 3;
        int writeQuorum = 2;
        int ackQuorum = 2;
        byte[] password = new byte[0];
        Map<String, byte[]> custom = Map.of();
        org.apache.bookkeeper.client.api.DigestType digest = org.apache.bookkeeper.client.api.DigestType.CRC32C;
        @Override
        public CreateBuilder withEnsembleSize(int n) {
            ensemble = n;
            return this;
        }

        @Override
        public CreateBuilder withWriteQuorumSize(int n) {
            writeQuorum = n;
            return this;
        }

        @Override
        public CreateBuilder withAckQuorumSize(int n) {
            ackQuorum = n;
            return this;
        }

        @Override
        public CreateBuilder withPassword(byte[] p) {
            password = p.clone();
            return this;
        }

        @Override
        public CreateBuilder withWriteFlags(java.util.EnumSet<WriteFlag> flags) {
            return this;
        }

        @Override
        public CreateBuilder withCustomMetadata(Map<String, byte[]> m) {
            custom = Map.copyOf(m);
            return this;
        }

        @Override
        public CreateBuilder withDigestType(org.apache.bookkeeper.client.api.DigestType d) {
            digest = d;
            return this;
        }

        @Override
        public CompletableFuture<WriteHandle> execute() {
            throw new UnsupportedOperationException("only creates with an id are in memory here");
        }

        @Override
        public CreateAdvBuilder makeAdv() {
            return new CreateAdvBuilder() {
                long id = -1;

                @Override
                public CreateAdvBuilder withLedgerId(long ledgerId) {
                    id = ledgerId;
                    return this;
                }

                @Override
                public CompletableFuture<WriteAdvHandle> execute() {
                    return createWithId(id, Create.this);
                }
            };
        }
    }

    private CompletableFuture<WriteAdvHandle> createWithId(long id, Create c) {
        calls.add("create " + id);
        if (createFault != null) {
            return failed(createFault);
        }
        Meta m = new Meta(id, c.ensemble, c.writeQuorum, c.ackQuorum, c.digest, c.password, c.custom, false, -1, 0,
                clock.incrementAndGet(), noCTokens ? 0 : clock.incrementAndGet());
        Ledger l = new Ledger(m);
        if (ledgers.putIfAbsent(id, l) != null) {
            return failed(BKException.Code.LedgerExistException);
        }
        return CompletableFuture.completedFuture(new Writer(id, l));
    }

    @Override
    public DeleteBuilder newDeleteLedgerOp() {
        return new DeleteBuilder() {
            long id = -1;

            @Override
            public DeleteBuilder withLedgerId(long ledgerId) {
                id = ledgerId;
                return this;
            }

            @Override
            public CompletableFuture<Void> execute() {
                return delete(id);
            }
        };
    }

    /** deletes complete only when the test completes them (a delete in flight) */
    volatile boolean deferDeletes;
    final List<CompletableFuture<Void>> deferredDeletes = new CopyOnWriteArrayList<>();

    private CompletableFuture<Void> delete(long id) {
        calls.add("delete " + id);
        Fault f = deleteFaults.get(id);
        if (f != null) {
            return failed(f);
        }
        if (deferDeletes) {
            CompletableFuture<Void> later = new CompletableFuture<>();
            deferredDeletes.add(later);
            return later.thenRun(() -> ledgers.remove(id));
        }
        return ledgers.remove(id) == null ? failed(BKException.Code.NoSuchLedgerExistsOnMetadataServerException)
                : CompletableFuture.completedFuture(null);
    }

    /** A read handle on a ledger of this cluster. */
    private class Reader implements ReadHandle {
        final long id;
        final Ledger ledger;

        Reader(long id, Ledger ledger) {
            this.id = id;
            this.ledger = ledger;
        }

        @Override
        public long getId() {
            return id;
        }

        @Override
        public CompletableFuture<Void> closeAsync() {
            calls.add("close " + id);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public LedgerMetadata getLedgerMetadata() {
            return ledger.meta;
        }

        @Override
        public CompletableFuture<LedgerEntries> readAsync(long first, long last) {
            calls.add("read " + id + " " + first + ".." + last);
            beforeRead.accept(first);
            if (pendingReads) {
                return new CompletableFuture<>();
            }
            for (long e = first; e <= last; e++) {
                Fault f = readFaults.get(e);
                if (f != null) {
                    return failed(f);
                }
            }
            if (ledgers.get(id) != ledger) {
                return failed(BKException.Code.NoSuchLedgerExistsException);
            }
            List<LedgerEntry> es = new ArrayList<>();
            for (long e = first; e <= last; e++) {
                byte[] b = ledger.entries.get(e);
                if (b == null) {
                    // BookKeeper fails a read of an entry no bookie has
                    es.forEach(LedgerEntry::close);
                    return failed(BKException.Code.NoSuchEntryException);
                }
                es.add(new Entry(id, e, b, readHeaderBytes));
            }
            return CompletableFuture.completedFuture(new Entries(es));
        }

        @Override
        public CompletableFuture<LedgerEntries> readUnconfirmedAsync(long first, long last) {
            return readAsync(first, last);
        }

        @Override
        public CompletableFuture<Long> readLastAddConfirmedAsync() {
            return CompletableFuture.completedFuture(getLastAddConfirmed());
        }

        @Override
        public CompletableFuture<Long> tryReadLastAddConfirmedAsync() {
            return readLastAddConfirmedAsync();
        }

        @Override
        public long getLastAddConfirmed() {
            return ledger.meta.closed ? ledger.meta.lastEntryId
                    : ledger.entries.isEmpty() ? -1 : ledger.entries.lastKey();
        }

        @Override
        public long getLength() {
            return ledger.meta.length;
        }

        @Override
        public boolean isClosed() {
            return ledger.meta.closed;
        }

        @Override
        public CompletableFuture<LastConfirmedAndEntry> readLastAddConfirmedAndEntryAsync(long entryId,
                                                                                          long timeOutInMillis,
                                                                                          boolean parallel) {
            throw new UnsupportedOperationException();
        }
    }

    /**
     * The handle a create with an id returns: writes by entry id, closes the ledger. A {@link WriteHandle} too, as
     * BookKeeper's own (a {@code LedgerHandleAdv}) is, though it refuses appends like that one.
     */
    private final class Writer extends Reader implements WriteAdvHandle, WriteHandle {
        final Meta createdAs;

        Writer(long id, Ledger ledger) {
            super(id, ledger);
            this.createdAs = ledger.meta;
        }

        @Override
        public CompletableFuture<Long> writeAsync(long entryId, ByteBuf data) {
            try {
                calls.add("write " + id + " " + entryId);
                Fault f = writeFaults.get(entryId);
                if (f != null) {
                    return failed(f);
                }
                byte[] b = new byte[data.readableBytes()];
                data.getBytes(data.readerIndex(), b);
                if (corruptedWrites.contains(entryId) && b.length > 0) {
                    b[0] ^= 1;
                }
                if (!droppedWrites.contains(entryId)) {
                    ledger.entries.put(entryId, b);
                }
                return CompletableFuture.completedFuture(entryId);
            } finally {
                // BookKeeper's write takes over the caller's reference
                data.release();
            }
        }

        @Override
        public LedgerMetadata getLedgerMetadata() {
            return createdAs;
        }

        @Override
        public CompletableFuture<Long> appendAsync(ByteBuf data) {
            data.release();
            return failed(BKException.Code.IllegalOpException);
        }

        @Override
        public long getLastAddPushed() {
            return getLastAddConfirmed();
        }

        @Override
        public CompletableFuture<Void> force() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> closeAsync() {
            calls.add("close-write " + id);
            if (closeFault != null) {
                return failed(closeFault);
            }
            if (!closeLeavesOpen && !ledger.meta.closed) {
                long length = 0;
                for (byte[] b : ledger.entries.values()) {
                    length += b.length;
                }
                ledger.meta = ledger.meta.closedAt(ledger.entries.isEmpty() ? -1 : ledger.entries.lastKey(), length);
            }
            afterWriteClose.accept(id);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** An entry as BookKeeper reads it: a buffer the caller releases by closing the entry. */
    private record Entry(long ledgerId, long entryId, ByteBuf buffer) implements LedgerEntry {
        Entry(long ledgerId, long entryId, byte[] payload, int header) {
            this(ledgerId, entryId, framed(payload, header));
        }

        private static ByteBuf framed(byte[] payload, int header) {
            ByteBuf b = Unpooled.buffer(header + payload.length);
            for (int i = 0; i < header; i++) {
                b.writeByte(0x5A);
            }
            b.writeBytes(payload);
            b.readerIndex(header);
            return b;
        }

        @Override
        public long getLedgerId() {
            return ledgerId;
        }

        @Override
        public long getEntryId() {
            return entryId;
        }

        @Override
        public long getLength() {
            return buffer.readableBytes();
        }

        @Override
        public byte[] getEntryBytes() {
            byte[] b = new byte[buffer.readableBytes()];
            buffer.getBytes(buffer.readerIndex(), b);
            return b;
        }

        @Override
        public java.nio.ByteBuffer getEntryNioBuffer() {
            return buffer.nioBuffer();
        }

        @Override
        public ByteBuf getEntryBuffer() {
            return buffer;
        }

        @Override
        public LedgerEntry duplicate() {
            return new Entry(ledgerId, entryId, buffer.retainedSlice());
        }

        @Override
        public void close() {
            buffer.release();
        }
    }

    private record Entries(List<LedgerEntry> list) implements LedgerEntries {
        @Override
        public LedgerEntry getEntry(long entryId) {
            return list.stream().filter(e -> e.getEntryId() == entryId).findFirst().orElseThrow();
        }

        @Override
        public Iterator<LedgerEntry> iterator() {
            return list.iterator();
        }

        @Override
        public void close() {
            list.forEach(LedgerEntry::close);
        }
    }

    /** the ledger listing fails with this (an I/O failure of the metadata store) */
    volatile java.io.IOException listFault;

    /**
     * The ledger manager's listing only, which is what {@link org.apache.bookkeeper.client.BookKeeperAdmin} lists
     * ledger ids through: every ledger id of this cluster, in one range.
     */
    @Override
    public org.apache.bookkeeper.meta.LedgerManager getLedgerManager() {
        return (org.apache.bookkeeper.meta.LedgerManager) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {org.apache.bookkeeper.meta.LedgerManager.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getLedgerRanges" -> ranges();
                    case "close" -> null;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "in-memory ledger manager";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private org.apache.bookkeeper.meta.LedgerManager.LedgerRangeIterator ranges() {
        java.util.Set<Long> ids = new java.util.TreeSet<>(ledgers.keySet());
        return new org.apache.bookkeeper.meta.LedgerManager.LedgerRangeIterator() {
            boolean done;

            @Override
            public boolean hasNext() throws java.io.IOException {
                if (listFault != null) {
                    throw listFault;
                }
                return !done;
            }

            @Override
            public org.apache.bookkeeper.meta.LedgerManager.LedgerRange next() {
                done = true;
                return new org.apache.bookkeeper.meta.LedgerManager.LedgerRange(ids);
            }
        };
    }

    // ---- classic API (the routed calls) ----

    /** Handles the classic calls return, by ledger id: the tests compare them by identity. */
    final Map<Long, LedgerHandle> handles = new ConcurrentHashMap<>();

    /**
     * A {@link LedgerHandle} that only knows its id and metadata. BookKeeper's constructor needs a connected client,
     * so the handle is allocated without one; the routed calls and the handle tracker only read its id and whether
     * it is closed.
     */
    LedgerHandle handle(long id) {
        return handles.computeIfAbsent(id, i -> {
            try {
                Field unsafeField = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
                unsafeField.setAccessible(true);
                Object unsafe = unsafeField.get(null);
                LedgerHandle lh = (LedgerHandle) unsafe.getClass().getMethod("allocateInstance", Class.class)
                        .invoke(unsafe, LedgerHandle.class);
                Field idField = LedgerHandle.class.getDeclaredField("ledgerId");
                idField.setAccessible(true);
                idField.setLong(lh, i);
                Ledger l = ledgers.get(i);
                Field metaField = LedgerHandle.class.getDeclaredField("versionedMetadata");
                metaField.setAccessible(true);
                metaField.set(lh, new Versioned<LedgerMetadata>(l == null
                        ? new Meta(i, 1, 1, 1, org.apache.bookkeeper.client.api.DigestType.CRC32, new byte[0], Map.of(),
                                false, -1, 0, 0, 0)
                        : l.meta, Version.NEW));
                return lh;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** The code a classic create, open or delete of {@code id} answers with (OK unless injected). */
    private int classicRc(Map<Long, Fault> faults, long id) {
        Fault f = faults.get(id);
        return f == null ? BKException.Code.OK : f.code();
    }

    @Override
    public void asyncCreateLedger(int ens, int wq, int aq, BookKeeper.DigestType digestType, byte[] passwd,
                                  CreateCallback cb, Object ctx, Map<String, byte[]> customMetadata) {
        createClassic(nextId.getAndIncrement(), "create", ens, wq, aq, passwd, customMetadata, cb, ctx);
    }

    @Override
    public void asyncCreateLedgerAdv(int ens, int wq, int aq, BookKeeper.DigestType digestType, byte[] passwd,
                                     CreateCallback cb, Object ctx, Map<String, byte[]> customMetadata) {
        createClassic(nextId.getAndIncrement(), "create-adv", ens, wq, aq, passwd, customMetadata, cb, ctx);
    }

    @Override
    public void asyncCreateLedgerAdv(long ledgerId, int ens, int wq, int aq, BookKeeper.DigestType digestType,
                                     byte[] passwd, CreateCallback cb, Object ctx,
                                     Map<String, byte[]> customMetadata) {
        createClassic(ledgerId, "create-adv-id", ens, wq, aq, passwd, customMetadata, cb, ctx);
    }

    /** classic creates answer only when the test runs {@link #deferredCreates} (a create in flight) */
    volatile boolean deferCreates;
    final List<Runnable> deferredCreates = new CopyOnWriteArrayList<>();

    private void createClassic(long id, String op, int ens, int wq, int aq, byte[] passwd, Map<String, byte[]> custom,
                               CreateCallback cb, Object ctx) {
        calls.add(op + " " + id);
        if (deferCreates) {
            deferredCreates.add(() -> createNow(id, ens, wq, aq, passwd, custom, cb, ctx));
            return;
        }
        createNow(id, ens, wq, aq, passwd, custom, cb, ctx);
    }

    private void createNow(long id, int ens, int wq, int aq, byte[] passwd, Map<String, byte[]> custom,
                           CreateCallback cb, Object ctx) {
        if (createFault != null) {
            cb.createComplete(createFault.code(), null, ctx);
            return;
        }
        Meta m = new Meta(id, ens, wq, aq, org.apache.bookkeeper.client.api.DigestType.CRC32C, passwd,
                custom == null ? Map.of() : Map.copyOf(custom), false, -1, 0, clock.incrementAndGet(),
                clock.incrementAndGet());
        if (ledgers.putIfAbsent(id, new Ledger(m)) != null) {
            cb.createComplete(BKException.Code.LedgerExistException, null, ctx);
            return;
        }
        cb.createComplete(BKException.Code.OK, handle(id), ctx);
    }

    /** A sync create, answered as the callback creates are. */
    private LedgerHandle createSync(long id, String op, int ens, int wq, int aq, byte[] passwd,
                                    Map<String, byte[]> custom) throws BKException {
        int[] rc = new int[1];
        LedgerHandle[] lh = new LedgerHandle[1];
        createClassic(id, op, ens, wq, aq, passwd, custom, (code, h, ctx) -> {
            rc[0] = code;
            lh[0] = h;
        }, null);
        if (rc[0] != BKException.Code.OK) {
            throw BKException.create(rc[0]);
        }
        return lh[0];
    }

    @Override
    public LedgerHandle createLedger(BookKeeper.DigestType digestType, byte[] passwd) throws BKException {
        return createSync(nextId.getAndIncrement(), "create-sync", 3, 2, 2, passwd, null);
    }

    @Override
    public LedgerHandle createLedger(int ens, int q, BookKeeper.DigestType digestType, byte[] passwd)
            throws BKException {
        return createSync(nextId.getAndIncrement(), "create-sync", ens, q, q, passwd, null);
    }

    @Override
    public LedgerHandle createLedger(int ens, int wq, int aq, BookKeeper.DigestType digestType, byte[] passwd)
            throws BKException {
        return createSync(nextId.getAndIncrement(), "create-sync", ens, wq, aq, passwd, null);
    }

    @Override
    public LedgerHandle createLedger(int ens, int wq, int aq, BookKeeper.DigestType digestType, byte[] passwd,
                                     Map<String, byte[]> customMetadata) throws BKException {
        return createSync(nextId.getAndIncrement(), "create-sync", ens, wq, aq, passwd, customMetadata);
    }

    @Override
    public LedgerHandle createLedgerAdv(int ens, int wq, int aq, BookKeeper.DigestType digestType, byte[] passwd)
            throws BKException {
        return createSync(nextId.getAndIncrement(), "create-adv-sync", ens, wq, aq, passwd, null);
    }

    @Override
    public LedgerHandle createLedgerAdv(int ens, int wq, int aq, BookKeeper.DigestType digestType, byte[] passwd,
                                        Map<String, byte[]> customMetadata) throws BKException {
        return createSync(nextId.getAndIncrement(), "create-adv-sync", ens, wq, aq, passwd, customMetadata);
    }

    @Override
    public LedgerHandle createLedgerAdv(long ledgerId, int ens, int wq, int aq, BookKeeper.DigestType digestType,
                                        byte[] passwd, Map<String, byte[]> customMetadata) throws BKException {
        return createSync(ledgerId, "create-adv-id-sync", ens, wq, aq, passwd, customMetadata);
    }

    @Override
    public void asyncIsClosed(long lId, org.apache.bookkeeper.client.AsyncCallback.IsClosedCallback cb, Object ctx) {
        calls.add("is-closed " + lId);
        Ledger l = ledgers.get(lId);
        cb.isClosedComplete(l == null ? BKException.Code.NoSuchLedgerExistsOnMetadataServerException
                : BKException.Code.OK, l != null && l.meta.closed, ctx);
    }

    @Override
    public boolean isClosed(long lId) throws BKException {
        calls.add("is-closed-sync " + lId);
        Ledger l = ledgers.get(lId);
        if (l == null) {
            throw BKException.create(BKException.Code.NoSuchLedgerExistsOnMetadataServerException);
        }
        return l.meta.closed;
    }

    @Override
    public void asyncOpenLedger(long lId, BookKeeper.DigestType digestType, byte[] passwd, OpenCallback cb,
                                Object ctx) {
        openClassic(lId, "open-classic", cb, ctx);
    }

    @Override
    public void asyncOpenLedgerNoRecovery(long lId, BookKeeper.DigestType digestType, byte[] passwd,
                                          OpenCallback cb, Object ctx) {
        openClassic(lId, "open-classic-norecovery", cb, ctx);
    }

    private void openClassic(long id, String op, OpenCallback cb, Object ctx) {
        calls.add(op + " " + id);
        int rc = classicRc(openFaults, id);
        if (rc == BKException.Code.OK && !ledgers.containsKey(id)) {
            rc = BKException.Code.NoSuchLedgerExistsOnMetadataServerException;
        }
        cb.openComplete(rc, rc == BKException.Code.OK ? handle(id) : null, ctx);
    }

    @Override
    public LedgerHandle openLedger(long lId, BookKeeper.DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        return openSync(lId, "open-sync");
    }

    @Override
    public LedgerHandle openLedgerNoRecovery(long lId, BookKeeper.DigestType digestType, byte[] passwd)
            throws BKException, InterruptedException {
        return openSync(lId, "open-sync-norecovery");
    }

    private LedgerHandle openSync(long id, String op) throws BKException {
        calls.add(op + " " + id);
        int rc = classicRc(openFaults, id);
        if (rc == BKException.Code.OK && !ledgers.containsKey(id)) {
            rc = BKException.Code.NoSuchLedgerExistsOnMetadataServerException;
        }
        if (rc != BKException.Code.OK) {
            throw BKException.create(rc);
        }
        return handle(id);
    }

    @Override
    public void asyncDeleteLedger(long lId, DeleteCallback cb, Object ctx) {
        delete(lId).whenComplete((v, e) -> cb.deleteComplete(e == null ? BKException.Code.OK
                : ((BKException) e).getCode(), ctx));
    }

    @Override
    public void deleteLedger(long lId) throws InterruptedException, BKException {
        try {
            delete(lId).join();
        } catch (java.util.concurrent.CompletionException e) {
            throw (BKException) e.getCause();
        }
    }

}
