package io.bcswitch.registry;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/** Callers waiting for the next change notification at or below a path ({@link RegistryStore#nextChangeAtOrBelow}). */
final class ChangeWaiters {
    /** A caller waiting for the next change at or below a path. */
    private record Waiter(String path, CompletableFuture<Void> changed) {
        boolean matches(String changedPath) {
            return changedPath.equals(path) || changedPath.startsWith(path + "/");
        }
    }

    private final MetadataPort store;
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    private final AtomicBoolean listening = new AtomicBoolean();

    ChangeWaiters(MetadataPort store) {
        this.store = store;
    }

    /** See {@link RegistryStore#nextChangeAtOrBelow}. */
    CompletableFuture<Void> next(String path) {
        if (listening.compareAndSet(false, true)) {
            store.onChange(changed -> {
                for (Waiter w : waiters) {
                    if (w.changed().isDone() || w.matches(changed) && w.changed().complete(null)) {
                        waiters.remove(w);
                    }
                }
            });
        }
        waiters.removeIf(w -> w.changed().isDone());
        Waiter w = new Waiter(path, new CompletableFuture<>());
        waiters.add(w);
        return w.changed();
    }
}
