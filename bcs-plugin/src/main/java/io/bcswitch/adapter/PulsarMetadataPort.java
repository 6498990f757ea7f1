package io.bcswitch.adapter;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.StoreFailure;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.MetadataStoreException;
import org.apache.pulsar.metadata.api.extended.CreateOption;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link MetadataPort} over a Pulsar metadata store (ZooKeeper, etcd, Oxia, memory): the one place that knows the
 * store's API and translates its failures into {@link StoreFailure}s.
 */
public final class PulsarMetadataPort implements MetadataPort {
    private static final Logger log = LoggerFactory.getLogger(PulsarMetadataPort.class);

    private final MetadataStore store;
    private final boolean owned;
    private final long deadlineMillis;

    /** {@link #PulsarMetadataPort(MetadataStore, long)} with Pulsar's default metadata operation timeout (30 s). */
    public PulsarMetadataPort(MetadataStore store) {
        this(store, DEFAULT_DEADLINE_MILLIS);
    }

    /** Pulsar's default {@code metadataStoreOperationTimeoutSeconds}. */
    static final long DEFAULT_DEADLINE_MILLIS = 30_000;

    /**
     * A port over a store someone else owns (the broker's): {@link #close()} leaves it open. Session events come
     * only from a {@link MetadataStoreExtended}.
     *
     * @param deadlineMillis how long an operation may take before it fails as {@link StoreFailure.Unavailable}: a
     *                       ZooKeeper operation fails by itself once its connection is lost, but Pulsar's etcd store
     *                       queues it for as long as etcd is gone, and a registry call that never ends wedges
     *                       whatever waits on it (the broker's metadata operation timeout; 0: no deadline). Like a
     *                       ZooKeeper connection loss, such a failure does not say the operation was not applied:
     *                       etcd's client may still send it once etcd is back. A failure at the deadline completes
     *                       on the JDK's timer thread, as every {@code orTimeout} does
     */
    public PulsarMetadataPort(MetadataStore store, long deadlineMillis) {
        this(store, false, deadlineMillis);
    }

    private PulsarMetadataPort(MetadataStore store, boolean owned, long deadlineMillis) {
        this.store = store;
        this.owned = owned;
        this.deadlineMillis = deadlineMillis;
    }

    /** Opens a store of its own at {@code url} (blocking: call it off any callback thread); closed with the port. */
    public static PulsarMetadataPort open(String url, int sessionTimeoutMillis, String name) {
        try {
            return new PulsarMetadataPort(MetadataStoreExtended.create(url, MetadataStoreConfig.builder()
                    .sessionTimeoutMillis(sessionTimeoutMillis).metadataStoreName(name).build()), true,
                    sessionTimeoutMillis);
        } catch (MetadataStoreException e) {
            throw new StoreFailure("cannot open metadata store " + url + ": " + e.getMessage(), e);
        }
    }

    /** Opens a store to inspect a bookie cluster's metadata (the precheck's, closed with it). */
    public static PulsarMetadataPort probe(String url, int sessionTimeoutMillis) {
        return open(url, sessionTimeoutMillis, "bcs-probe");
    }

    @Override
    public CompletableFuture<Optional<Node>> get(String path) {
        return translated(path, store.get(path).thenApply(r -> r.map(g -> new Node(g.getValue(),
                g.getStat().getVersion(), g.getStat().isEphemeral(), g.getStat().isCreatedBySelf()))));
    }

    @Override
    public CompletableFuture<List<String>> children(String path) {
        return translated(path, store.getChildren(path));
    }

    @Override
    public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expectedVersion, boolean ephemeral) {
        if (!ephemeral) {
            return translated(path, store.put(path, value, expectedVersion).thenApply(s -> s.getVersion()));
        }
        if (!(store instanceof MetadataStoreExtended extended)) {
            return CompletableFuture.failedFuture(new StoreFailure("this metadata store has no ephemeral nodes", null));
        }
        return translated(path, extended.put(path, value, expectedVersion, EnumSet.of(CreateOption.Ephemeral))
                .thenApply(s -> s.getVersion()));
    }

    @Override
    public CompletableFuture<Void> delete(String path, Optional<Long> expectedVersion) {
        CompletableFuture<Void> deleted = translated(path, store.delete(path, expectedVersion));
        if (expectedVersion.isEmpty()) {
            return deleted;
        }
        // MetadataPort says "not found" for a delete of a node that is not there, at any version; ZooKeeper does ("no
        // node"), Pulsar's etcd store says "bad version" (its version check fails first): such a conflict over a node
        // that is not there now is said as the port promises
        return deleted.exceptionallyCompose(e -> Failures.unwrap(e) instanceof StoreFailure.VersionConflict
                ? get(path).handle((now, readFailed) -> {
                    if (readFailed == null && now.isEmpty()) {
                        throw new java.util.concurrent.CompletionException(
                                new StoreFailure.NotFound(path, Failures.unwrap(e)));
                    }
                    throw new java.util.concurrent.CompletionException(Failures.unwrap(e));
                })
                : CompletableFuture.failedFuture(e));
    }

    @Override
    public void onChange(Consumer<String> listener) {
        store.registerListener(n -> listener.accept(n.getPath()));
    }

    @Override
    public void onSessionChange(Consumer<SessionChange> listener) {
        if (!(store instanceof MetadataStoreExtended extended)) {
            return;
        }
        extended.registerSessionListener(e -> {
            switch (e) {
                case ConnectionLost -> listener.accept(SessionChange.CONNECTION_LOST);
                case Reconnected -> listener.accept(SessionChange.RECONNECTED);
                case SessionLost -> listener.accept(SessionChange.SESSION_LOST);
                case SessionReestablished -> listener.accept(SessionChange.SESSION_REESTABLISHED);
                default -> { }
            }
        });
    }

    private <T> CompletableFuture<T> translated(String path, CompletableFuture<T> f) {
        if (deadlineMillis <= 0) {
            return f.exceptionallyCompose(e -> CompletableFuture.failedFuture(translate(path, e)));
        }
        // the deadline's own TimeoutException arrives bare; whatever the store's future fails with arrives wrapped
        // in a CompletionException by copy(): so a bare one is the deadline, whatever f did meanwhile
        CompletableFuture<T> bounded = f.copy().orTimeout(deadlineMillis, TimeUnit.MILLISECONDS);
        return bounded.exceptionallyCompose(e -> CompletableFuture.failedFuture(e instanceof TimeoutException
                ? new StoreFailure.Unavailable("the metadata store did not answer for " + path + " in "
                        + deadlineMillis + " ms", e)
                : translate(path, e)));
    }

    /** The store's failure as ours; failures that are not the store's (a timeout of the caller's) pass unchanged. */
    static Throwable translate(String path, Throwable e) {
        Throwable t = Failures.unwrap(e);
        if (t instanceof MetadataStoreException.BadVersionException
                || t instanceof MetadataStoreException.AlreadyExistsException) {
            return new StoreFailure.VersionConflict(path, t);
        }
        if (t instanceof MetadataStoreException.NotFoundException) {
            return new StoreFailure.NotFound(path, t);
        }
        if ((t instanceof MetadataStoreException || etcdUnavailable(t)) && unavailable(t)) {
            return new StoreFailure.Unavailable("the metadata store did not answer for " + path + ": "
                    + t.getMessage(), t);
        }
        if (t instanceof MetadataStoreException || etcdClientFailure(t)) {
            return new StoreFailure(String.valueOf(t.getMessage()), t);
        }
        return t;
    }

    /** Whether {@code t} is a failure of etcd's client (Pulsar's etcd store passes them on unwrapped). */
    private static boolean etcdClientFailure(Throwable t) {
        String type = t.getClass().getName();
        return type.equals("io.grpc.StatusRuntimeException") || type.equals("io.grpc.StatusException")
                || type.startsWith("io.etcd.jetcd.common.exception.");
    }

    /** Whether the store failed for want of a connection or session (it reconnects by itself), not for the request. */
    private static boolean unavailable(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.apache.zookeeper.KeeperException.SessionExpiredException
                    || c instanceof org.apache.zookeeper.KeeperException.ConnectionLossException
                    || c instanceof org.apache.zookeeper.KeeperException.OperationTimeoutException
                    || c instanceof java.util.concurrent.TimeoutException
                    || etcdUnavailable(c)) {
                return true;
            }
        }
        return false;
    }

    /** gRPC's codes (etcd's client) that mean the server is away or slow, not that the request was wrong. */
    private static final java.util.Set<String> GRPC_AWAY = java.util.Set.of("UNAVAILABLE", "DEADLINE_EXCEEDED");

    /**
     * Whether {@code c} is etcd's client saying the server is away: a gRPC status exception, or jetcd's own exception
     * with such a code. Told by class name, so a broker without etcd's client on its class path loads this class too.
     */
    static boolean etcdUnavailable(Throwable c) {
        String type = c.getClass().getName();
        if (type.equals("io.grpc.StatusRuntimeException") || type.equals("io.grpc.StatusException")) {
            String m = String.valueOf(c.getMessage());
            return GRPC_AWAY.stream().anyMatch(code -> m.startsWith(code));
        }
        if (type.equals("io.etcd.jetcd.common.exception.EtcdException")) {
            try {
                return GRPC_AWAY.contains(String.valueOf(c.getClass().getMethod("getErrorCode").invoke(c)));
            } catch (ReflectiveOperationException e) {
                return false;
            }
        }
        return false;
    }

    @Override
    public void close() {
        if (owned) {
            try {
                store.close();
            } catch (Exception e) {
                log.warn("Error closing metadata store", e);
            }
        }
    }
}
