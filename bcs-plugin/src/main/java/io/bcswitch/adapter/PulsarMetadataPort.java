package io.bcswitch.adapter;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.StoreFailure;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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

    /**
     * A port over a store someone else owns (the broker's): {@link #close()} leaves it open. Session events come
     * only from a {@link MetadataStoreExtended}.
     */
    public PulsarMetadataPort(MetadataStore store) {
        this(store, false);
    }

    private PulsarMetadataPort(MetadataStore store, boolean owned) {
        this.store = store;
        this.owned = owned;
    }

    /** Opens a store of its own at {@code url} (blocking: call it off any callback thread); closed with the port. */
    public static PulsarMetadataPort open(String url, int sessionTimeoutMillis, String name) {
        try {
            return new PulsarMetadataPort(MetadataStoreExtended.create(url, MetadataStoreConfig.builder()
                    .sessionTimeoutMillis(sessionTimeoutMillis).metadataStoreName(name).build()), true);
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
        return translated(path, store.delete(path, expectedVersion));
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

    private static <T> CompletableFuture<T> translated(String path, CompletableFuture<T> f) {
        return f.exceptionallyCompose(e -> CompletableFuture.failedFuture(translate(path, e)));
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
        if (t instanceof MetadataStoreException && unavailable(t)) {
            return new StoreFailure.Unavailable("the metadata store did not answer for " + path + ": "
                    + t.getMessage(), t);
        }
        if (t instanceof MetadataStoreException) {
            return new StoreFailure(String.valueOf(t.getMessage()), t);
        }
        return t;
    }

    /** Whether the store failed for want of a connection or session (it reconnects by itself), not for the request. */
    private static boolean unavailable(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.apache.zookeeper.KeeperException.SessionExpiredException
                    || c instanceof org.apache.zookeeper.KeeperException.ConnectionLossException
                    || c instanceof org.apache.zookeeper.KeeperException.OperationTimeoutException
                    || c instanceof java.util.concurrent.TimeoutException) {
                return true;
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
