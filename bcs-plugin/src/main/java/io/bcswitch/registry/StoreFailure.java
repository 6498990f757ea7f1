package io.bcswitch.registry;

/**
 * A metadata store failure, translated at the adapter so that no caller needs the store's own exception types.
 * The subclasses are the outcomes callers act on; every other failure is this class, with the store's message.
 */
public class StoreFailure extends RuntimeException {

    public StoreFailure(String message, Throwable cause) {
        super(message, cause);
    }

    /** The node's version was not the expected one (or a node that must not exist did): re-read and retry. */
    public static class VersionConflict extends StoreFailure {
        public VersionConflict(String path, Throwable cause) {
            super("version conflict on " + path, cause);
        }
    }

    /**
     * The store did not answer: the connection was lost or the session expired (the store reconnects by itself).
     * Nothing is known about a write that failed so; a read can be made again.
     */
    public static class Unavailable extends StoreFailure {
        public Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The node does not exist. */
    public static class NotFound extends StoreFailure {
        public NotFound(String path, Throwable cause) {
            super("no node " + path, cause);
        }
    }
}
