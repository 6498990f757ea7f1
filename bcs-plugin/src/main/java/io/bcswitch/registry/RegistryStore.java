package io.bcswitch.registry;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import io.bcswitch.concurrent.Failures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Typed access to the registry in the broker metadata store (through a {@link MetadataPort}). Every write is
 * conditional on the version that was read, so concurrent writers never overwrite each other silently; a lost race
 * fails with {@link StoreFailure.VersionConflict} ({@link #isVersionConflict}). The only writes that expect no version
 * are of a broker's own ephemeral records ({@link #writeEphemeral}), which no other process writes.
 */
public class RegistryStore {
    private static final Logger log = LoggerFactory.getLogger(RegistryStore.class);
    static final int MAX_UPDATE_ATTEMPTS = 20;

    private final MetadataPort store;
    private final RegistryPaths paths;
    private final RelocationTable relocations;
    private final CopyLists copyLists;
    private final ChangeWaiters changeWaiters;

    public RegistryStore(MetadataPort store, RegistryPaths paths) {
        this(store, paths, FIRST_READ_RETRY_MILLIS);
    }

    /** A read the store does not answer is made again after a pause (doubling each time) starting at this. */
    private static final long FIRST_READ_RETRY_MILLIS = 100;

    /** @param firstReadRetryMillis the first pause before a read is made again (see {@link PatientReads}) */
    RegistryStore(MetadataPort store, RegistryPaths paths, long firstReadRetryMillis) {
        this.store = new PatientReads(store, firstReadRetryMillis);
        this.paths = paths;
        this.relocations = new RelocationTable(this, paths);
        this.copyLists = new CopyLists(this, this.store, paths);
        this.changeWaiters = new ChangeWaiters(this.store);
    }

    public RegistryPaths paths() {
        return paths;
    }

    /** The names of {@code path}'s children (see {@link MetadataPort#children}), read again while the store is away. */
    public CompletableFuture<List<String>> children(String path) {
        return store.children(path);
    }

    public <T> CompletableFuture<Versioned<T>> read(String path, Class<T> type) {
        return store.get(path).thenApply(r -> r
                .map(n -> new Versioned<>(Json.read(n.value(), type), n.version()))
                .orElseGet(Versioned::absent));
    }

    /** Writes {@code value} if the node still has {@code expectedVersion} (-1: must not exist). */
    public CompletableFuture<Long> write(String path, Object value, long expectedVersion) {
        return store.put(path, Json.write(value), Optional.of(expectedVersion), false);
    }

    /** Deletes the node if it still has {@code expectedVersion}. */
    public CompletableFuture<Void> delete(String path, long expectedVersion) {
        return store.delete(path, Optional.of(expectedVersion));
    }

    /** Writes this broker's own ephemeral record {@code path} whatever its version: no other process writes it. */
    public CompletableFuture<Void> writeEphemeral(String path, Object value) {
        return store.put(path, Json.write(value), Optional.empty(), true).thenApply(s -> null);
    }

    /**
     * Version-checked update loop:
     * <ol>
     *   <li>read the value and its version (absent: version -1);</li>
     *   <li>apply {@code update}, a pure function; an empty result means nothing to write;</li>
     *   <li>write the result expecting the version read in step 1;</li>
     *   <li>on a version conflict go back to step 1, at most {@value #MAX_UPDATE_ATTEMPTS} times.</li>
     * </ol>
     * Completes with the value that is stored when the loop ends.
     */
    public <T> CompletableFuture<T> update(String path, Class<T> type, Function<Optional<T>, Optional<T>> update) {
        return updateReading(path, type, cur -> CompletableFuture.completedFuture(update.apply(cur)), 1);
    }

    /**
     * {@link #update} whose step 2 may read other nodes before it decides (it completes with the result): those reads
     * come after step 1's read of this node, so a writer that changed one of them before it changed this node, as
     * {@link ConfirmedChange} does, is seen by them whenever the write of step 3 succeeds.
     */
    public <T> CompletableFuture<T> updateReading(String path, Class<T> type,
                                                  Function<Optional<T>, CompletableFuture<Optional<T>>> update) {
        return updateReading(path, type, update, 1);
    }

    private <T> CompletableFuture<T> updateReading(String path, Class<T> type,
            Function<Optional<T>, CompletableFuture<Optional<T>>> update, int attempt) {
        return read(path, type).thenCompose(current -> update.apply(Optional.ofNullable(current.value()))
                .thenCompose(next -> {
                    if (next.isEmpty()) {
                        return CompletableFuture.completedFuture(current.value());
                    }
                    return write(path, next.get(), current.version())
                            .thenApply(v -> next.get())
                            .exceptionallyCompose(e -> {
                                if (isVersionConflict(e) && attempt < MAX_UPDATE_ATTEMPTS) {
                                    log.debug("path={} attempt={} version conflict", path, attempt);
                                    return updateReading(path, type, update, attempt + 1);
                                }
                                return CompletableFuture.failedFuture(e);
                            });
                }));
    }

    /**
     * Confirms that node {@code path} still has {@code version}, in a write: the node is rewritten with its own bytes
     * expecting that version, so that a writer who read it before (and writes it expecting what it read) loses, and
     * one who reads it after reads after this call. Fails with {@link StoreFailure.VersionConflict} when the node
     * changed. {@link MetadataPort#ABSENT}: the node must still be absent, which is only read (nothing can be
     * rewritten).
     */
    public CompletableFuture<Void> confirm(String path, long version) {
        return store.get(path).thenCompose(node -> {
            long now = node.map(MetadataPort.Node::version).orElse(MetadataPort.ABSENT);
            if (now != version) {
                return CompletableFuture.failedFuture(new StoreFailure.VersionConflict(path, null));
            }
            return node.isEmpty() ? CompletableFuture.completedFuture(null)
                    : store.put(path, node.get().value(), Optional.of(version), false).thenApply(v -> null);
        });
    }

    /** Whether {@code e} is a lost race: the node's version was not the one expected. */
    public static boolean isVersionConflict(Throwable e) {
        return Failures.unwrap(e) instanceof StoreFailure.VersionConflict;
    }

    /** A conditional update or delete that lost to another writer: the node changed, or was deleted, meanwhile. */
    static boolean isLostRace(Throwable e) {
        Throwable t = Failures.unwrap(e);
        return t instanceof StoreFailure.VersionConflict || t instanceof StoreFailure.NotFound;
    }

    // ---- typed accessors ----

    /**
     * The records stored directly under {@code root}, by node name (sorted); a node that vanishes between the listing
     * and its read is left out. One listing and one read per node, all at once.
     */
    private <T> CompletableFuture<java.util.SortedMap<String, T>> readChildren(String root, Class<T> type) {
        return readChildren(root, type, n -> true);
    }

    /** {@link #readChildren(String, Class)} of the nodes whose names {@code names} accepts (no others are read). */
    <T> CompletableFuture<java.util.SortedMap<String, T>> readChildren(String root, Class<T> type,
                                                                              Predicate<String> names) {
        return children(root).thenCompose(listed -> {
            Map<String, CompletableFuture<Versioned<T>>> reads = new java.util.TreeMap<>();
            listed.stream().filter(names).forEach(n -> reads.put(n, read(root + "/" + n, type)));
            return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
                java.util.SortedMap<String, T> out = new java.util.TreeMap<>();
                reads.forEach((n, f) -> {
                    if (f.join().present()) {
                        out.put(n, f.join().value());
                    }
                });
                return out;
            });
        });
    }

    public CompletableFuture<List<BookieClusterRecord>> listClusters() {
        return readChildren(paths.clusters(), BookieClusterRecord.class).thenApply(m -> m.values().stream()
                .sorted(java.util.Comparator.comparing(BookieClusterRecord::name)).toList());
    }

    public CompletableFuture<Optional<BookieClusterRecord>> getCluster(String name) {
        return read(paths.cluster(name), BookieClusterRecord.class).thenApply(v -> Optional.ofNullable(v.value()));
    }

    public CompletableFuture<Versioned<SwitchDirective>> readDirective() {
        return read(paths.switchTarget(), SwitchDirective.class);
    }

    public CompletableFuture<Optional<RangeTable>> readRanges() {
        return read(paths.ranges(), RangeTable.class).thenApply(v -> Optional.ofNullable(v.value()));
    }

    public CompletableFuture<Optional<BootstrapRecord>> readBootstrap() {
        return read(paths.bootstrap(), BootstrapRecord.class).thenApply(v -> Optional.ofNullable(v.value()));
    }

    /** The ids of the brokers that have a record (names only: nothing else is read). */
    public CompletableFuture<java.util.Set<String>> listBrokerIds() {
        return children(paths.brokers()).thenApply(java.util.TreeSet::new);
    }

    /** The ids of the stored operations (names only). */
    public CompletableFuture<List<String>> listOperationIds() {
        return children(paths.operations());
    }

    public CompletableFuture<Versioned<OperationRecord>> readOperation(String id) {
        return read(paths.operation(id), OperationRecord.class);
    }

    /**
     * Stores an operation's result, {@code bytes}, as chunks of at most {@code chunkBytes} (each created, never
     * overwritten); completes with the number of chunks.
     */
    public CompletableFuture<Integer> writeOperationResult(String id, byte[] bytes, int chunkBytes) {
        int chunks = Math.max(1, (bytes.length + chunkBytes - 1) / chunkBytes);
        List<CompletableFuture<Long>> writes = new java.util.ArrayList<>(chunks);
        for (int i = 0; i < chunks; i++) {
            byte[] part = java.util.Arrays.copyOfRange(bytes, i * chunkBytes, Math.min(bytes.length,
                    (i + 1) * chunkBytes));
            writes.add(store.put(paths.operationResult(id) + "/" + i, part, Optional.of(-1L), false));
        }
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).thenApply(v -> chunks);
    }

    /**
     * An operation's result stored by {@link #writeOperationResult}, its {@code chunks} put together again; empty
     * when a chunk is gone (the operation was removed meanwhile).
     */
    public CompletableFuture<Optional<byte[]>> readOperationResult(String id, int chunks) {
        List<CompletableFuture<Optional<byte[]>>> reads = new java.util.ArrayList<>(chunks);
        for (int i = 0; i < chunks; i++) {
            reads.add(store.get(paths.operationResult(id) + "/" + i).thenApply(node -> node.map(n -> n.value())));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
            java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
            for (CompletableFuture<Optional<byte[]>> r : reads) {
                if (r.join().isEmpty()) {
                    return Optional.empty();
                }
                all.writeBytes(r.join().get());
            }
            return Optional.of(all.toByteArray());
        });
    }

    /** Removes an operation's stored result chunks, if any (each at the version read). */
    public CompletableFuture<Void> deleteOperationResult(String id) {
        String root = paths.operationResult(id);
        return children(root).thenCompose(names -> {
            List<CompletableFuture<Void>> dels = new java.util.ArrayList<>();
            names.forEach(n -> dels.add(deleteAsRead(root + "/" + n)));
            return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new));
        }).thenCompose(v -> deleteAsRead(root));
    }

    /** The operations that have result chunks stored (names only). */
    public CompletableFuture<List<String>> listOperationResultIds() {
        return children(paths.operationResults());
    }

    private CompletableFuture<Void> deleteAsRead(String path) {
        return store.get(path).thenCompose(node -> node.isEmpty() ? CompletableFuture.completedFuture(null)
                : delete(path, node.get().version()));
    }

    public CompletableFuture<List<BrokerCutoverRecord>> listBrokerProgress() {
        return readChildren(paths.brokers(), BrokerCutoverRecord.class).thenApply(m -> m.values().stream()
                .sorted(java.util.Comparator.comparing(BrokerCutoverRecord::broker)).toList());
    }

    // ---- the relocation table: one node per ledger, in shard directories (see RelocationTable) ----

    /** Every relocation, by ledger id (see {@link RelocationTable#list}). */
    public CompletableFuture<Map<Long, Relocation>> listRelocations() {
        return relocations.list();
    }

    /** The relocations of {@code ids} as stored now (absent ids: no relocation). */
    public CompletableFuture<Map<Long, Optional<Relocation>>> readRelocations(Collection<Long> ids) {
        return relocations.read(ids);
    }

    /** Changes the relocations of several ledgers (see {@link RelocationTable#update}). */
    public CompletableFuture<Map<Long, Optional<Relocation>>> updateRelocations(Collection<Long> ids,
            BiFunction<Long, Optional<Relocation>, Optional<Relocation>> change) {
        return relocations.update(ids, change);
    }

    static boolean isNumber(String s) {
        return !s.isEmpty() && s.length() <= 19 && s.chars().allMatch(Character::isDigit);
    }

    /** The lock at {@code path} (an ephemeral node naming its holder). */
    public RegistryLock lock(String path) {
        return new RegistryLock(store, path);
    }

    /** The migration state of every switch that has one. */
    public CompletableFuture<List<MigrationState>> listMigrationStates() {
        return readChildren(paths.orchestrators(), MigrationState.class).thenApply(m -> List.copyOf(m.values()));
    }

    /** The relocation epoch (0 when nothing was ever relocated). */
    public CompletableFuture<Long> readRelocationEpoch() {
        return relocations.readEpoch().thenApply(RelocationEpoch::epoch);
    }

    /** See {@link RelocationTable#readEpoch}. */
    public CompletableFuture<RelocationEpoch> readRelocationEpochRecord() {
        return relocations.readEpoch();
    }

    /** See {@link RelocationTable#markChange}. */
    public CompletableFuture<Boolean> markRelocationChange(long nowMillis) {
        return relocations.markChange(nowMillis);
    }

    /** Announces the relocation table as it is now (see {@link RelocationTable#bumpEpoch}). */
    public CompletableFuture<Long> bumpRelocationEpoch(long nowMillis, Collection<Long> changed) {
        return relocations.bumpEpoch(nowMillis, changed, true);
    }

    /** A new relocation epoch that announces no change: see {@link RelocationTable#bumpEpoch}. */
    public CompletableFuture<Long> bumpRelocationEpochWithoutChange(long nowMillis) {
        return relocations.bumpEpoch(nowMillis, List.of(), false);
    }

    // ---- bounded lists: the copies a migration made, in chunks (see CopyLists) ----

    /** See {@link CopyLists#append}. */
    public CompletableFuture<Void> appendCopies(long epoch, long runToken, List<Long> ids) {
        return copyLists.append(epoch, runToken, ids);
    }

    /** The copies recorded for switch {@code epoch}, by chunk number. */
    public CompletableFuture<java.util.SortedMap<Integer, List<Long>>> readCopies(long epoch) {
        return copyLists.read(epoch);
    }

    /** See {@link CopyLists#remove}. */
    public CompletableFuture<Integer> removeCopies(long epoch, int chunk, Collection<Long> ids) {
        return copyLists.remove(epoch, chunk, ids);
    }

    /** Forgets switch {@code epoch}'s copy list (every chunk, then its node). */
    public CompletableFuture<Void> dropCopies(long epoch) {
        return copyLists.drop(epoch);
    }

    /** Switch epochs that have copies recorded. */
    public CompletableFuture<List<Long>> copyEpochs() {
        return copyLists.epochs();
    }

    // ---- id watermarks ----

    public CompletableFuture<Optional<IdWatermark>> readWatermark(String cluster) {
        return read(paths.idWatermark(cluster), IdWatermark.class).thenApply(v -> Optional.ofNullable(v.value()));
    }

    /** Every cluster's id watermark, by cluster (clusters no longer registered included: their ranges remain). */
    public CompletableFuture<Map<String, IdWatermark>> listWatermarks() {
        return readChildren(paths.idWatermark("x").substring(0, paths.idWatermark("x").length() - 2),
                IdWatermark.class).thenApply(m -> m);
    }

    /** Raises {@code cluster}'s watermark to at least the observed values (never lowers it). */
    public CompletableFuture<IdWatermark> raiseWatermark(String cluster, long highOrderBits, long maxLedgerId,
                                                         long now, String source) {
        return update(paths.idWatermark(cluster), IdWatermark.class, cur -> Optional.ofNullable(
                cur.orElseGet(() -> new IdWatermark(IdWatermark.FORMAT_VERSION, cluster, -1, -1, 0, null))
                        .raisedBy(highOrderBits, maxLedgerId, now, source)));
    }

    // ---- liveness and sessions ----

    /**
     * Brokers Pulsar itself knows to be live: every running broker registers an ephemeral node named by its broker
     * id under {@value #PULSAR_BROKER_REGISTRY} (both load managers, once the broker has started). Empty when the
     * node does not exist.
     */
    public CompletableFuture<java.util.Set<String>> pulsarLiveBrokers() {
        return children(PULSAR_BROKER_REGISTRY).thenApply(java.util.TreeSet::new);
    }

    public static final String PULSAR_BROKER_REGISTRY = "/loadbalance/brokers";

    /** Whether {@code path} exists as an ephemeral node of this process's current metadata session. */
    public CompletableFuture<Boolean> ownsEphemeral(String path) {
        return store.get(path).thenApply(r -> r.isPresent() && r.get().ephemeral() && r.get().ownSession());
    }

    /**
     * Writes an ephemeral node of this process's current session: a node left by an earlier session of ours (it
     * would vanish when that session is reaped, whatever we write into it) is deleted and created anew.
     */
    public CompletableFuture<Void> putOwnEphemeral(String path, Object value) {
        return store.get(path).thenCompose(r -> {
            if (r.isPresent() && !r.get().ownSession()) {
                return store.delete(path, Optional.of(r.get().version())).exceptionally(e -> null);
            }
            return CompletableFuture.completedFuture(null);
        }).thenCompose(v -> writeEphemeral(path, value));
    }

    public void onSessionChange(java.util.function.Consumer<MetadataPort.SessionChange> listener) {
        store.onSessionChange(listener);
    }

    /**
     * Calls {@code listener} (on the metadata store's notification thread: it must hand off anything slow) on each
     * change notification of exactly {@code path}. Notifications may be lost across a reconnect: re-read on
     * {@link #onSessionChange} too.
     */
    public void onChange(String path, Runnable listener) {
        store.onChange(changed -> {
            if (changed.equals(path)) {
                listener.run();
            }
        });
    }

    /**
     * Calls {@code listener} with the path of every changed node (on the store's notification thread: hand off
     * anything slow), for a component that follows several nodes.
     */
    public void onAnyChange(java.util.function.Consumer<String> listener) {
        store.onChange(listener);
    }

    /** The pacing settings changed at run time; {@link TuningOverrides#NONE} when none were. */
    public CompletableFuture<Versioned<TuningOverrides>> readTuning() {
        return read(paths.tuning(), TuningOverrides.class);
    }

    /**
     * Completes at the next change notification of a node at or below {@code path}. A hint only: the store may send
     * none (a notification lost across a reconnect), so a caller always waits with a timeout as well, and cancels
     * this future when it stops waiting (a cancelled waiter is dropped). It completes on the metadata store's
     * notification thread: continue on an executor of your own.
     */
    public CompletableFuture<Void> nextChangeAtOrBelow(String path) {
        return changeWaiters.next(path);
    }

    /** Relocation epoch applied by each live broker, by broker id. */
    public CompletableFuture<Map<String, Long>> listRelocationApplied() {
        return readChildren(paths.relocationApplied(), RelocationEpoch.class).thenApply(m -> {
            Map<String, Long> out = new java.util.TreeMap<>();
            m.forEach((id, e) -> out.put(id, e.epoch()));
            return out;
        });
    }
}
