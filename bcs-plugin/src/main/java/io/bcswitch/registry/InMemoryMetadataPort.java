package io.bcswitch.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A {@link MetadataPort} in memory, for tests and tools: one process, one session. Answers and notifications come
 * from one thread of its own, as a real store's do, so callers that would block a store thread are caught here
 * too. {@link #expireSession()} plays a session loss: this session's ephemeral nodes vanish and listeners hear
 * {@code SESSION_LOST} then {@code SESSION_REESTABLISHED}.
 */
public final class InMemoryMetadataPort implements MetadataPort {

    private record Entry(byte[] value, long version, boolean ephemeral) {
    }

    /** Guarded by itself; only the port's thread touches it. */
    private final Map<String, Entry> nodes = new TreeMap<>();
    private final List<Consumer<String>> changeListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<SessionChange>> sessionListeners = new CopyOnWriteArrayList<>();
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "bcs-in-memory-metadata");
        t.setDaemon(true);
        return t;
    });

    @Override
    public CompletableFuture<Optional<Node>> get(String path) {
        return on(() -> Optional.ofNullable(nodes.get(path))
                .map(e -> new Node(e.value().clone(), e.version(), e.ephemeral(), e.ephemeral())));
    }

    @Override
    public CompletableFuture<List<String>> children(String path) {
        return on(() -> childrenOf(path));
    }

    private List<String> childrenOf(String path) {
        String prefix = path.endsWith("/") ? path : path + "/";
        List<String> out = new ArrayList<>();
        for (String p : nodes.keySet()) {
            if (p.startsWith(prefix) && p.length() > prefix.length() && p.indexOf('/', prefix.length()) < 0) {
                out.add(p.substring(prefix.length()));
            }
        }
        return out;
    }

    @Override
    public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expectedVersion, boolean ephemeral) {
        return on(() -> {
            Entry cur = nodes.get(path);
            if (expectedVersion.isPresent() && !expectedVersion.get().equals(cur == null ? ABSENT : cur.version())) {
                throw new StoreFailure.VersionConflict(path, null);
            }
            List<String> created = createParents(path);
            Entry next = cur == null ? new Entry(value.clone(), 0, ephemeral)
                    : new Entry(value.clone(), cur.version() + 1, cur.ephemeral());
            nodes.put(path, next);
            if (cur == null) {
                created.add(path);
            }
            notifyLater(path, created);
            return next.version();
        });
    }

    /** Creates the missing ancestors of {@code path} (empty, persistent); returns the paths created. */
    private List<String> createParents(String path) {
        List<String> created = new ArrayList<>();
        for (int i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) {
            String parent = path.substring(0, i);
            if (!nodes.containsKey(parent)) {
                nodes.put(parent, new Entry(new byte[0], 0, false));
                created.add(parent);
            }
        }
        return created;
    }

    @Override
    public CompletableFuture<Void> delete(String path, Optional<Long> expectedVersion) {
        return on(() -> {
            Entry cur = nodes.get(path);
            if (cur == null) {
                throw new StoreFailure.NotFound(path, null);
            }
            if (expectedVersion.isPresent() && expectedVersion.get() != cur.version()) {
                throw new StoreFailure.VersionConflict(path, null);
            }
            if (!childrenOf(path).isEmpty()) {
                throw new StoreFailure("cannot delete " + path + ": it has children", null);
            }
            nodes.remove(path);
            notifyLater(path, List.of(path));
            return null;
        });
    }

    @Override
    public void onChange(Consumer<String> listener) {
        changeListeners.add(listener);
    }

    @Override
    public void onSessionChange(Consumer<SessionChange> listener) {
        sessionListeners.add(listener);
    }

    /** Drops this session's ephemeral nodes and tells the session listeners, as a store whose session expired. */
    public CompletableFuture<Void> expireSession() {
        return on(() -> {
            sessionListeners.forEach(l -> l.accept(SessionChange.CONNECTION_LOST));
            sessionListeners.forEach(l -> l.accept(SessionChange.SESSION_LOST));
            List<String> gone = nodes.entrySet().stream().filter(e -> e.getValue().ephemeral())
                    .map(Map.Entry::getKey).toList();
            gone.forEach(nodes::remove);
            gone.forEach(p -> notifyLater(p, List.of(p)));
            thread.execute(() -> sessionListeners.forEach(l -> l.accept(SessionChange.SESSION_REESTABLISHED)));
            return null;
        });
    }

    /** Tells the change listeners about {@code path} and, for nodes created or deleted, their parents. */
    private void notifyLater(String path, List<String> createdOrDeleted) {
        List<String> changed = new ArrayList<>();
        changed.add(path);
        for (String p : createdOrDeleted) {
            int slash = p.lastIndexOf('/');
            if (slash > 0) {
                changed.add(p.substring(0, slash));
            }
        }
        thread.execute(() -> changed.stream().distinct().forEach(p -> changeListeners.forEach(l -> l.accept(p))));
    }

    private <T> CompletableFuture<T> on(Supplier<T> op) {
        try {
            return CompletableFuture.supplyAsync(op, thread);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new StoreFailure("the in-memory store is closed", e));
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
