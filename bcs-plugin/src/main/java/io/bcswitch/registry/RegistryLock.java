package io.bcswitch.registry;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * A lock in the metadata store: an ephemeral node whose value names its holder. It is held while the node exists, so
 * it goes with the holder's session; whoever releases it checks the holder first, so a holder whose lock expired and
 * was taken by another never deletes the other's.
 */
public final class RegistryLock {
    private final MetadataPort store;
    private final String path;

    RegistryLock(MetadataPort store, String path) {
        this.store = store;
        this.path = path;
    }

    public String path() {
        return path;
    }

    /** Takes the lock for {@code holder}; completes with false when someone holds it (or the store did not answer). */
    public CompletableFuture<Boolean> tryAcquire(String holder) {
        return store.put(path, holder.getBytes(StandardCharsets.UTF_8), Optional.of(MetadataPort.ABSENT), true)
                .handle((v, e) -> e == null);
    }

    /** Releases the lock if {@code holder} holds it; completes with whether it was released. */
    public CompletableFuture<Boolean> release(String holder) {
        return releaseIf(holder::equals);
    }

    /** Releases the lock if its holder matches; completes with whether it was released. Fails if the store fails. */
    public CompletableFuture<Boolean> releaseIf(Predicate<String> holder) {
        return store.get(path).thenCompose(cur -> cur.isPresent()
                && holder.test(new String(cur.get().value(), StandardCharsets.UTF_8))
                ? store.delete(path, Optional.of(cur.get().version())).thenApply(v -> true)
                : CompletableFuture.completedFuture(false));
    }
}
