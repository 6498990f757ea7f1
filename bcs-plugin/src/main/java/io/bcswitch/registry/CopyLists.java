package io.bcswitch.registry;

import io.bcswitch.concurrent.Failures;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The copies each migration made ({@code copies/<epoch>/NNNNNN}, {@link IdChunk}s): what a rollback deletes. A list
 * that grows with the number of ledgers never lives in one node.
 */
final class CopyLists {
    private final RegistryStore registry;
    private final MetadataPort store;
    private final RegistryPaths paths;

    CopyLists(RegistryStore registry, MetadataPort store, RegistryPaths paths) {
        this.registry = registry;
        this.store = store;
        this.paths = paths;
    }

    /**
     * Stores {@code ids} (all copies made so far, in the order they were made) from index {@code from} on, as
     * chunks of {@link IdChunk#MAX_IDS}; chunks before {@code from}'s are already stored and unchanged.
     */
    CompletableFuture<Void> write(long epoch, List<Long> ids, int from) {
        List<CompletableFuture<?>> writes = new ArrayList<>();
        for (int chunk = from / IdChunk.MAX_IDS; chunk * IdChunk.MAX_IDS < ids.size(); chunk++) {
            List<Long> part = ids.subList(chunk * IdChunk.MAX_IDS, Math.min(ids.size(), (chunk + 1) * IdChunk.MAX_IDS));
            writes.add(store.put(paths.copiesChunk(epoch, chunk), Json.write(new IdChunk(IdChunk.FORMAT_VERSION,
                    part)), Optional.empty(), false));
        }
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
    }

    /** The copies recorded for switch {@code epoch}, by chunk number. */
    CompletableFuture<java.util.SortedMap<Integer, List<Long>>> read(long epoch) {
        return registry.readChildren(paths.copies(epoch), IdChunk.class, RegistryStore::isNumber).thenApply(m -> {
            java.util.SortedMap<Integer, List<Long>> out = new java.util.TreeMap<>();
            m.forEach((n, chunk) -> out.put(Integer.parseInt(n), chunk.ids()));
            return out;
        });
    }

    /** Replaces chunk {@code chunk} of switch {@code epoch}'s copies with {@code remaining} (deleted when empty). */
    CompletableFuture<Void> replace(long epoch, int chunk, List<Long> remaining) {
        String path = paths.copiesChunk(epoch, chunk);
        if (remaining.isEmpty()) {
            return store.delete(path, Optional.empty()).exceptionally(e -> {
                if (Failures.unwrap(e) instanceof StoreFailure.NotFound) {
                    return null;
                }
                throw new CompletionException(Failures.unwrap(e));
            });
        }
        return store.put(path, Json.write(new IdChunk(IdChunk.FORMAT_VERSION, remaining)), Optional.empty(), false)
                .thenApply(s -> null);
    }

    /** Forgets switch {@code epoch}'s copy list (every chunk, then its node). */
    CompletableFuture<Void> drop(long epoch) {
        return read(epoch).thenCompose(chunks -> {
            List<CompletableFuture<Void>> dels = new ArrayList<>();
            chunks.keySet().forEach(n -> dels.add(replace(epoch, n, List.of())));
            return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new));
        }).thenCompose(v -> store.delete(paths.copies(epoch), Optional.empty()).exceptionally(e -> null));
    }

    /** Switch epochs that have copies recorded. */
    CompletableFuture<List<Long>> epochs() {
        return store.children(paths.copiesRoot()).thenApply(names -> names.stream().filter(RegistryStore::isNumber)
                .map(Long::parseLong).sorted().toList());
    }
}
