package io.bcswitch.registry;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The metadata store as the plugin needs it: versioned nodes in a tree, ephemeral nodes tied to this process's
 * session, change notifications and session events. {@link RegistryStore} builds the typed registry on it; the
 * broker's metadata store is plugged in by the adapter, and {@link InMemoryMetadataPort} stands in for it in tests.
 *
 * <p>Failures are ours, never the store's: a write or delete whose expected version does not match (or a create of
 * a node that exists) fails with {@link StoreFailure.VersionConflict}; a delete of a node that does not exist
 * with {@link StoreFailure.NotFound}; anything else the store reports with {@link StoreFailure}.
 * Futures complete on the store's threads: never block in a continuation.
 */
public interface MetadataPort extends AutoCloseable {

    /** Expected version of a node that must not exist yet. */
    long ABSENT = -1L;

    /**
     * A node as read.
     *
     * @param ephemeral      the node goes with the session that created it
     * @param ownSession     the node was created by this process's current session
     */
    record Node(byte[] value, long version, boolean ephemeral, boolean ownSession) {
    }

    /** Session changes of the connection to the store. */
    enum SessionChange {
        /** disconnected; the session may still be alive */
        CONNECTION_LOST,
        /** connected again within the same session: watches missed nothing the server kept, but re-read anyway */
        RECONNECTED,
        /** the session is (or may be) gone with its ephemeral nodes */
        SESSION_LOST,
        /** a session is established again: ephemeral nodes must be re-created, everything re-read */
        SESSION_REESTABLISHED
    }

    CompletableFuture<Optional<Node>> get(String path);

    /** The names (not paths) of the children of {@code path}; empty when it has none or does not exist. */
    CompletableFuture<List<String>> children(String path);

    /**
     * Writes {@code value} (creating missing parents); completes with the node's new version.
     *
     * @param expectedVersion the version the node must have ({@link #ABSENT}: must not exist); empty: any
     * @param ephemeral       create the node as an ephemeral node of this process's session
     */
    CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expectedVersion, boolean ephemeral);

    /** Deletes the node if it has {@code expectedVersion} (empty: any version). */
    CompletableFuture<Void> delete(String path, Optional<Long> expectedVersion);

    /**
     * Calls {@code listener} with the path of each node created, changed or deleted (children changes included), on
     * the store's notification thread: it must hand off anything slow. Notifications may be lost across a
     * reconnect: re-read on {@link #onSessionChange} as well.
     */
    void onChange(Consumer<String> listener);

    void onSessionChange(Consumer<SessionChange> listener);

    /** Releases what this port opened; a port over the broker's own store leaves that store to the broker. */
    @Override
    void close();
}
