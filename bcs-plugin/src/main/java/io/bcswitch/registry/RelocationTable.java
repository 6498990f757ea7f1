package io.bcswitch.registry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * The relocation table: where a ledger lives when it is not where its id range says (a promoted copy). One node per
 * ledger in {@link RegistryPaths#RELOCATION_SHARDS} shard directories, so no listing grows without bound; relocations
 * an earlier version kept directly under the table are still read, and moved into their shard when changed.
 */
final class RelocationTable {
    private final RegistryStore registry;
    private final RegistryPaths paths;

    RelocationTable(RegistryStore registry, RegistryPaths paths) {
        this.registry = registry;
        this.paths = paths;
    }

    /**
     * Every relocation, by ledger id: one listing per shard directory (each bounded: ids are spread over
     * {@link RegistryPaths#RELOCATION_SHARDS} of them) and one read per relocation; relocations an earlier version
     * kept directly under the table are read too. The shard directories are listed by their known names, not found
     * by listing the table: a directory created implicitly with its first node would not show in a cached listing
     * of its parent until the change notification arrives.
     */
    CompletableFuture<Map<Long, Relocation>> list() {
        List<CompletableFuture<List<String>>> listings = new ArrayList<>();
        // getChildren, not exists: a parent created implicitly may not "exist" in every store implementation
        listings.add(registry.children(paths.relocations()).thenApply(names -> names.stream()
                .filter(RegistryStore::isNumber).map(n -> paths.relocations() + "/" + n).toList()));
        for (int shard = 0; shard < RegistryPaths.RELOCATION_SHARDS; shard++) {
            String dir = paths.relocations() + "/" + RegistryPaths.shardName(shard);
            listings.add(registry.children(dir).thenApply(ids -> ids.stream().filter(RegistryStore::isNumber)
                    .map(id -> dir + "/" + id).toList()));
        }
        return CompletableFuture.allOf(listings.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            List<CompletableFuture<Versioned<Relocation>>> reads = new ArrayList<>();
            listings.forEach(f -> f.join().forEach(p -> reads.add(registry.read(p, Relocation.class))));
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(x -> {
                // legacy nodes come first in the listing: a shard node of the same ledger replaces one
                Map<Long, Relocation> out = new TreeMap<>();
                for (var r : reads) {
                    if (r.join().present()) {
                        out.put(r.join().value().ledgerId(), r.join().value());
                    }
                }
                return out;
            });
        });
    }


    /** A ledger's relocation as stored now: its shard node, else an earlier version's node. */
    private CompletableFuture<Optional<Relocation>> readRelocation(long id) {
        return registry.read(paths.relocation(id), Relocation.class).thenCompose(v -> v.present()
                ? CompletableFuture.completedFuture(Optional.of(v.value()))
                : registry.read(paths.legacyRelocation(id), Relocation.class)
                        .thenApply(l -> Optional.ofNullable(l.value())));
    }

    /** The relocations of {@code ids} as stored now (absent ids: no relocation). */
    CompletableFuture<Map<Long, Optional<Relocation>>> read(Collection<Long> ids) {
        Map<Long, CompletableFuture<Optional<Relocation>>> reads = new TreeMap<>();
        for (long id : ids) {
            reads.put(id, readRelocation(id));
        }
        return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<Long, Optional<Relocation>> out = new TreeMap<>();
            reads.forEach((id, f) -> out.put(id, f.join()));
            return out;
        });
    }

    /**
     * Changes the relocations of several ledgers: {@code change} gets each one's current relocation (empty: none)
     * and returns the one to store (empty: none). A version-checked update loop per ledger, so concurrent writers
     * never lose each other's changes and a ledger relocated before can be relocated again. An earlier version's
     * node of a changed ledger is removed (the relocation now lives in its shard). Completes with what is stored
     * for each id afterwards.
     */
    CompletableFuture<Map<Long, Optional<Relocation>>> update(
            Collection<Long> ids, BiFunction<Long, Optional<Relocation>,
            Optional<Relocation>> change) {
        Map<Long, CompletableFuture<Optional<Relocation>>> each = new TreeMap<>();
        for (long id : new TreeSet<>(ids)) {
            each.put(id, updateRelocation(id, change, 1));
        }
        return CompletableFuture.allOf(each.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<Long, Optional<Relocation>> out = new TreeMap<>();
            each.forEach((id, f) -> out.put(id, f.join()));
            return out;
        });
    }

    private CompletableFuture<Optional<Relocation>> updateRelocation(long id, BiFunction<Long,
            Optional<Relocation>, Optional<Relocation>> change, int attempt) {
        String path = paths.relocation(id);
        return registry.read(path, Relocation.class).thenCompose(sharded -> (sharded.present()
                ? CompletableFuture.completedFuture(Versioned.<Relocation>absent())
                : registry.read(paths.legacyRelocation(id), Relocation.class))
                .thenCompose(legacyNode -> {
                    Optional<Relocation> legacy = Optional.ofNullable(legacyNode.value());
                    Optional<Relocation> current = sharded.present() ? Optional.of(sharded.value()) : legacy;
                    Optional<Relocation> next = change.apply(id, current);
                    CompletableFuture<Void> write;
                    if (next.equals(current) && legacy.isEmpty()) {
                        return CompletableFuture.completedFuture(current);
                    } else if (next.isPresent()) {
                        write = registry.write(path, next.get(), sharded.version()).thenApply(x -> null);
                    } else if (sharded.present()) {
                        write = registry.delete(path, sharded.version());
                    } else {
                        write = CompletableFuture.completedFuture(null);
                    }
                    // the earlier version's node goes once its value is in the shard node (one that changed
                    // meanwhile is read again next time: the shard node wins over it)
                    return write.thenCompose(x -> legacy.isEmpty() ? CompletableFuture.completedFuture(null)
                            : registry.delete(paths.legacyRelocation(id), legacyNode.version())
                                    .exceptionally(e -> null))
                            .thenApply(x -> next)
                            .exceptionallyCompose(e -> RegistryStore.isVersionConflict(e)
                                    && attempt < RegistryStore.MAX_UPDATE_ATTEMPTS
                                    ? updateRelocation(id, change, attempt + 1) : CompletableFuture.failedFuture(e));
                }));
    }

    // ---- its announcement, the relocation epoch ----

    /** The relocation epoch with the ledger ids its last change touched (epoch 0, none listed, when absent). */
    CompletableFuture<RelocationEpoch> readEpoch() {
        return registry.read(paths.relocationEpoch(), RelocationEpoch.class)
                .thenApply(v -> v.present() ? v.value() : new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, 0, 0));
    }

    /**
     * Marks the relocation epoch {@link RelocationEpoch#unannounced} before the table is changed, so that until the
     * bump that announces the change nobody counts on an epoch the brokers applied before it (version-checked loop).
     * Completes with whether it was marked already: a change before was never announced, so the next bump must make
     * every broker re-read the whole table.
     */
    CompletableFuture<Boolean> markChange(long nowMillis) {
        boolean[] before = {false};
        return registry.update(paths.relocationEpoch(), RelocationEpoch.class, cur -> {
            before[0] = cur.map(RelocationEpoch::unannounced).orElse(false);
            return before[0] ? Optional.empty() : Optional.of(new RelocationEpoch(RelocationEpoch.FORMAT_VERSION,
                    cur.map(RelocationEpoch::epoch).orElse(0L), nowMillis, cur.map(RelocationEpoch::changed)
                    .orElse(null), true));
        }).thenApply(x -> before[0]);
    }

    /**
     * Increments the relocation epoch (version-checked loop); completes with the new value.
     *
     * @param changed   the ledger ids whose relocation was just created or removed (empty: none; null: not listed,
     *                  every broker re-reads the whole table). More than {@link RelocationEpoch#MAX_LISTED} are not
     *                  listed: the node stays bounded, brokers re-read the table.
     * @param announces whether it announces the table as it is now, which clears the mark of {@link #markChange};
     *                  false for an epoch that only makes the brokers look at the registry again (a change marked
     *                  and not announced yet stays marked)
     */
    CompletableFuture<Long> bumpEpoch(long nowMillis, Collection<Long> changed, boolean announces) {
        List<Long> ids = changed == null || changed.size() > RelocationEpoch.MAX_LISTED ? null : List.copyOf(changed);
        return registry.update(paths.relocationEpoch(), RelocationEpoch.class, cur -> Optional.of(new RelocationEpoch(
                RelocationEpoch.FORMAT_VERSION, cur.map(RelocationEpoch::epoch).orElse(0L) + 1, nowMillis, ids,
                !announces && cur.map(RelocationEpoch::unannounced).orElse(false))))
                .thenApply(RelocationEpoch::epoch);
    }
}
