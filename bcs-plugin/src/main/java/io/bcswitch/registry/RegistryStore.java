package io.bcswitch.registry;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.apache.pulsar.metadata.api.MetadataStoreException;
import org.apache.pulsar.metadata.api.extended.CreateOption;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Typed access to the registry in the broker metadata store. Every write is conditional on the
 * version that was read, so concurrent writers never overwrite each other silently.
 */
public class RegistryStore {
    private static final Logger log = LoggerFactory.getLogger(RegistryStore.class);
    private static final int MAX_UPDATE_ATTEMPTS = 20;

    private final MetadataStoreExtended store;
    private final RegistryPaths paths;

    public RegistryStore(MetadataStoreExtended store, RegistryPaths paths) {
        this.store = store;
        this.paths = paths;
    }

    public RegistryPaths paths() {
        return paths;
    }

    public MetadataStoreExtended metadataStore() {
        return store;
    }

    public <T> CompletableFuture<Versioned<T>> read(String path, Class<T> type) {
        return store.get(path).thenApply(r -> r
                .map(g -> new Versioned<>(Json.read(g.getValue(), type), g.getStat().getVersion()))
                .orElseGet(Versioned::absent));
    }

    /** Writes {@code value} if the node still has {@code expectedVersion} (-1: must not exist). */
    public CompletableFuture<Long> write(String path, Object value, long expectedVersion) {
        return store.put(path, Json.write(value), Optional.of(expectedVersion)).thenApply(s -> s.getVersion());
    }

    /** Deletes the node if it still has {@code expectedVersion}. */
    public CompletableFuture<Void> delete(String path, long expectedVersion) {
        return store.delete(path, Optional.of(expectedVersion));
    }

    public CompletableFuture<Void> writeEphemeral(String path, Object value) {
        return store.put(path, Json.write(value), Optional.empty(), EnumSet.of(CreateOption.Ephemeral))
                .thenApply(s -> null);
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
        return update(path, type, update, 1);
    }

    private <T> CompletableFuture<T> update(String path, Class<T> type, Function<Optional<T>, Optional<T>> update,
                                            int attempt) {
        return read(path, type).thenCompose(current -> {
            Optional<T> next = update.apply(Optional.ofNullable(current.value()));
            if (next.isEmpty()) {
                return CompletableFuture.completedFuture(current.value());
            }
            return write(path, next.get(), current.version())
                    .thenApply(v -> next.get())
                    .exceptionallyCompose(e -> {
                        if (isVersionConflict(e) && attempt < MAX_UPDATE_ATTEMPTS) {
                            log.debug("Version conflict on {}, attempt {}", path, attempt);
                            return update(path, type, update, attempt + 1);
                        }
                        return CompletableFuture.failedFuture(e);
                    });
        });
    }

    public static boolean isVersionConflict(Throwable e) {
        Throwable t = unwrap(e);
        return t instanceof MetadataStoreException.BadVersionException
                || t instanceof MetadataStoreException.AlreadyExistsException;
    }

    public static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    // ---- typed accessors ----

    public CompletableFuture<List<BookieClusterRecord>> listClusters() {
        return store.getChildren(paths.clusters()).thenCompose(names -> {
            List<CompletableFuture<Versioned<BookieClusterRecord>>> reads = new ArrayList<>();
            for (String n : names) {
                reads.add(read(paths.cluster(n), BookieClusterRecord.class));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<BookieClusterRecord> out = new ArrayList<>();
                for (var r : reads) {
                    Versioned<BookieClusterRecord> rec = r.join();
                    if (rec.present()) {
                        out.add(rec.value());
                    }
                }
                out.sort(java.util.Comparator.comparing(BookieClusterRecord::name));
                return out;
            });
        });
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

    public CompletableFuture<List<BrokerCutoverRecord>> listBrokerProgress() {
        return store.getChildren(paths.brokers()).thenCompose(ids -> {
            List<CompletableFuture<Versioned<BrokerCutoverRecord>>> reads = new ArrayList<>();
            for (String id : ids) {
                reads.add(read(paths.broker(id), BrokerCutoverRecord.class));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<BrokerCutoverRecord> out = new ArrayList<>();
                for (var r : reads) {
                    if (r.join().present()) {
                        out.add(r.join().value());
                    }
                }
                out.sort(java.util.Comparator.comparing(BrokerCutoverRecord::broker));
                return out;
            });
        });
    }

    /** Every relocation, by ledger id. */
    public CompletableFuture<java.util.Map<Long, Relocation>> listRelocations() {
        // getChildren, not exists: a parent created implicitly may not "exist" in every store implementation
        return store.getChildren(paths.relocations()).thenCompose(ids -> {
                    List<CompletableFuture<Versioned<Relocation>>> reads = new ArrayList<>();
                    for (String id : ids) {
                        reads.add(read(paths.relocations() + "/" + id, Relocation.class));
                    }
                    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                        java.util.Map<Long, Relocation> out = new java.util.TreeMap<>();
                        for (var r : reads) {
                            if (r.join().present()) {
                                out.put(r.join().value().ledgerId(), r.join().value());
                            }
                        }
                        return out;
                    });
                });
    }

    /** The relocation epoch (0 when nothing was ever relocated). */
    public CompletableFuture<Long> readRelocationEpoch() {
        return readRelocationEpochRecord().thenApply(RelocationEpoch::epoch);
    }

    /** The relocation epoch with the ledger ids its last change touched (epoch 0, none listed, when absent). */
    public CompletableFuture<RelocationEpoch> readRelocationEpochRecord() {
        return read(paths.relocationEpoch(), RelocationEpoch.class)
                .thenApply(v -> v.present() ? v.value() : new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, 0, 0));
    }

    /**
     * Increments the relocation epoch (version-checked loop); completes with the new value.
     *
     * @param changed the ledger ids whose relocation was just created or removed (empty: none; null: not
     *                listed, every broker re-reads the whole table)
     */
    public CompletableFuture<Long> bumpRelocationEpoch(long nowMillis, java.util.Collection<Long> changed) {
        List<Long> ids = changed == null ? null : List.copyOf(changed);
        return update(paths.relocationEpoch(), RelocationEpoch.class, cur -> Optional.of(new RelocationEpoch(
                RelocationEpoch.FORMAT_VERSION, cur.map(RelocationEpoch::epoch).orElse(0L) + 1, nowMillis, ids)))
                .thenApply(RelocationEpoch::epoch);
    }

    /** The relocations of {@code ids} as stored now (absent ids: no relocation). */
    public CompletableFuture<java.util.Map<Long, Optional<Relocation>>> readRelocations(java.util.Collection<Long> ids) {
        java.util.Map<Long, CompletableFuture<Versioned<Relocation>>> reads = new java.util.TreeMap<>();
        for (long id : ids) {
            reads.put(id, read(paths.relocation(id), Relocation.class));
        }
        return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            java.util.Map<Long, Optional<Relocation>> out = new java.util.TreeMap<>();
            reads.forEach((id, f) -> out.put(id, Optional.ofNullable(f.join().value())));
            return out;
        });
    }

    /** Relocation epoch applied by each live broker, by broker id. */
    public CompletableFuture<java.util.Map<String, Long>> listRelocationApplied() {
        return store.getChildren(paths.relocationApplied()).thenCompose(ids -> {
                    java.util.Map<String, CompletableFuture<Versioned<RelocationEpoch>>> reads =
                            new java.util.TreeMap<>();
                    for (String id : ids) {
                        reads.put(id, read(paths.relocationApplied(id), RelocationEpoch.class));
                    }
                    return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
                        java.util.Map<String, Long> out = new java.util.TreeMap<>();
                        reads.forEach((id, f) -> {
                            if (f.join().present()) {
                                out.put(id, f.join().value().epoch());
                            }
                        });
                        return out;
                    });
                });
    }
}
