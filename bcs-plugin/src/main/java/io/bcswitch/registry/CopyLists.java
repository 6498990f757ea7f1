package io.bcswitch.registry;

import io.bcswitch.concurrent.Failures;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * The copies each migration made ({@code copies/<epoch>/NNNNNN}, {@link IdChunk}s): what a rollback deletes. A list
 * that grows with the number of ledgers never lives in one node. Several writers share a list: the run that owns the
 * migration appends, a rollback folds in what an earlier version kept in the state, the deletion of rolled-back copies
 * and a promotion of them again take ids out, and a run that lost the migration (its broker paused past its session)
 * may still try to append. So every write is a version-checked update of one chunk that merges into what is stored:
 * an append adds only ids not there yet, in order; a removal takes out only the ids it names; nothing is ever
 * overwritten. An append carries its run's token and is refused ({@link StaleRunException}) where a newer run wrote.
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
     * Appends {@code ids} to switch {@code epoch}'s list for the run holding {@code token}, in order:
     * <ol>
     *   <li>list the chunks and read the last one (none: chunk 0, absent);</li>
     *   <li>refuse when it carries a higher token than {@code token} (a newer run owns the migration);</li>
     *   <li>the ids it does not hold yet fill it up to {@link IdChunk#MAX_IDS}, with its token raised to
     *       {@code token}, written expecting the version read (absent: created); what does not fit goes into a new
     *       chunk after it, in the next round;</li>
     *   <li>on a lost race (version conflict, or the chunk deleted meanwhile) go back to 1, at most
     *       {@link RegistryStore#MAX_UPDATE_ATTEMPTS} times in a row.</li>
     * </ol>
     * An id already in an earlier chunk is not looked for: the run appends only what it copied after what it read.
     */
    CompletableFuture<Void> append(long epoch, long token, List<Long> ids) {
        return append(epoch, token, List.copyOf(new LinkedHashSet<>(ids)), 0, 1);
    }

    /** @param known a chunk known to exist (its directory's listing may lag behind a chunk just created) */
    private CompletableFuture<Void> append(long epoch, long token, List<Long> ids, int known, int attempt) {
        if (ids.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return chunkNumbers(epoch).thenCompose(numbers -> {
            int last = Math.max(known, numbers.isEmpty() ? 0 : numbers.get(numbers.size() - 1));
            return registry.read(paths.copiesChunk(epoch, last), IdChunk.class).thenCompose(cur -> {
                IdChunk chunk = cur.present() ? cur.value() : new IdChunk(IdChunk.FORMAT_VERSION, List.of());
                if (chunk.token() > token) {
                    throw new StaleRunException(epoch, token, chunk.token());
                }
                Set<Long> held = Set.copyOf(chunk.ids());
                List<Long> fresh = ids.stream().filter(id -> !held.contains(id)).toList();
                if (fresh.isEmpty()) {
                    return CompletableFuture.completedFuture(null);
                }
                boolean full = chunk.ids().size() >= IdChunk.MAX_IDS;
                // full: the rest starts the next chunk, which must not exist yet
                int into = full ? last + 1 : last;
                List<Long> next = new ArrayList<>(full ? List.of() : chunk.ids());
                int n = Math.min(fresh.size(), IdChunk.MAX_IDS - next.size());
                next.addAll(fresh.subList(0, n));
                List<Long> rest = List.copyOf(fresh.subList(n, fresh.size()));
                // the chunk's token is at most ours (checked above): ours is the highest that wrote it now
                // only this write's lost race starts this round again; the next round's failure is its own (retrying
                // it from here would write again what this round put in, and multiply the attempts)
                return registry.write(paths.copiesChunk(epoch, into), new IdChunk(IdChunk.FORMAT_VERSION, next,
                                token), full ? MetadataPort.ABSENT : cur.version())
                        .handle((v, e) -> e == null ? append(epoch, token, rest, into, 1)
                                : RegistryStore.isLostRace(e) && attempt < RegistryStore.MAX_UPDATE_ATTEMPTS
                                ? append(epoch, token, ids, into, attempt + 1)
                                : CompletableFuture.<Void>failedFuture(Failures.unwrap(e)))
                        .thenCompose(f -> f);
            });
        });
    }

    /** The copies recorded for switch {@code epoch}, by chunk number. */
    CompletableFuture<SortedMap<Integer, List<Long>>> read(long epoch) {
        return registry.readChildren(paths.copies(epoch), IdChunk.class, RegistryStore::isNumber).thenApply(m -> {
            SortedMap<Integer, List<Long>> out = new TreeMap<>();
            m.forEach((n, chunk) -> out.put(Integer.parseInt(n), chunk.ids()));
            return out;
        });
    }

    /**
     * Takes {@code ids} out of chunk {@code chunk} of switch {@code epoch}'s list (a version-checked update: ids
     * appended meanwhile stay); the chunk is deleted once empty. Completes with how many of them it held.
     */
    CompletableFuture<Integer> remove(long epoch, int chunk, Collection<Long> ids) {
        return remove(paths.copiesChunk(epoch, chunk), Set.copyOf(ids), 1);
    }

    private CompletableFuture<Integer> remove(String path, Set<Long> ids, int attempt) {
        return registry.read(path, IdChunk.class).thenCompose(cur -> {
            if (!cur.present()) {
                return CompletableFuture.completedFuture(0);
            }
            List<Long> rest = cur.value().ids().stream().filter(id -> !ids.contains(id)).toList();
            int removed = cur.value().ids().size() - rest.size();
            if (removed == 0) {
                return CompletableFuture.completedFuture(0);
            }
            CompletableFuture<?> write = rest.isEmpty() ? registry.delete(path, cur.version())
                    : registry.write(path, new IdChunk(IdChunk.FORMAT_VERSION, rest, cur.value().token()),
                            cur.version());
            return write.thenApply(v -> removed).exceptionallyCompose(e -> RegistryStore.isLostRace(e)
                    && attempt < RegistryStore.MAX_UPDATE_ATTEMPTS ? remove(path, ids, attempt + 1)
                    : CompletableFuture.failedFuture(Failures.unwrap(e)));
        });
    }

    /** Forgets switch {@code epoch}'s copy list: every chunk as it is now (version-checked), then its node. */
    CompletableFuture<Void> drop(long epoch) {
        return chunkNumbers(epoch).thenCompose(numbers -> {
            List<CompletableFuture<Void>> dels = new ArrayList<>();
            numbers.forEach(n -> dels.add(dropChunk(paths.copiesChunk(epoch, n), 1)));
            return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new));
        }).thenCompose(v -> store.get(paths.copies(epoch))).thenCompose(node -> node.isEmpty()
                ? CompletableFuture.completedFuture(null)
                // a chunk appended meanwhile keeps it (not empty): it goes with the next drop
                : registry.delete(paths.copies(epoch), node.get().version()).exceptionally(e -> null));
    }

    private CompletableFuture<Void> dropChunk(String path, int attempt) {
        return store.get(path).thenCompose(node -> node.isEmpty() ? CompletableFuture.completedFuture(null)
                : registry.delete(path, node.get().version()).exceptionallyCompose(e -> RegistryStore.isLostRace(e)
                        && attempt < RegistryStore.MAX_UPDATE_ATTEMPTS ? dropChunk(path, attempt + 1)
                        : CompletableFuture.failedFuture(Failures.unwrap(e))));
    }

    /** Switch epochs that have copies recorded. */
    CompletableFuture<List<Long>> epochs() {
        return store.children(paths.copiesRoot()).thenApply(names -> names.stream().filter(RegistryStore::isNumber)
                .map(Long::parseLong).sorted().toList());
    }

    private CompletableFuture<List<Integer>> chunkNumbers(long epoch) {
        return store.children(paths.copies(epoch)).thenApply(names -> names.stream().filter(RegistryStore::isNumber)
                .map(Integer::parseInt).sorted().toList());
    }
}
