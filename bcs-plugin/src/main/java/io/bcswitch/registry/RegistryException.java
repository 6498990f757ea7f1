package io.bcswitch.registry;

/** A registry request that cannot be done as asked. {@link #kind} maps onto an HTTP status at the REST edge. */
public class RegistryException extends RuntimeException {

    /** Why a request was refused. */
    public enum Kind { INVALID, NOT_FOUND, CONFLICT, UNAVAILABLE }

    private final Kind kind;
    private final transient Object details;

    public RegistryException(Kind kind, String message) {
        this(kind, message, null);
    }

    public RegistryException(Kind kind, String message, Object details) {
        super(message);
        this.kind = kind;
        this.details = details;
    }

    public Kind kind() {
        return kind;
    }

    /** Optional structured detail (for example a precheck report) returned with the error. */
    public Object details() {
        return details;
    }

    public static RegistryException invalid(String message) {
        return new RegistryException(Kind.INVALID, message);
    }

    public static RegistryException notFound(String message) {
        return new RegistryException(Kind.NOT_FOUND, message);
    }

    public static RegistryException unavailable(String message) {
        return new RegistryException(Kind.UNAVAILABLE, message);
    }

    public static RegistryException conflict(String message) {
        return new RegistryException(Kind.CONFLICT, message);
    }
}
