package io.bcswitch.client;

/**
 * A refused or failed call. {@link #status()} is the HTTP status (0 when the broker could not be
 * reached); the message is the API's one-line reason.
 */
public class BookieClustersAdminException extends Exception {
    private final int status;

    public BookieClustersAdminException(int status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
