package io.bcswitch.rest;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An HTTP answer: status and a JSON-serialisable body. An error's body is {@code {"reason": "...", "error": "..."}}
 * (the same message twice): {@code reason} is what every Pulsar admin endpoint answers and what Pulsar's admin
 * client and generic tooling parse; {@code error} is kept for clients written against earlier versions.
 */
public record RestResponse(int status, Object body) {

    public static RestResponse ok(Object body) {
        return new RestResponse(200, body);
    }

    public static RestResponse error(int status, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("reason", message);
        body.put("error", message);
        return new RestResponse(status, body);
    }

    /**
     * The answer for a request the servlet stopped waiting for after {@code timeoutSeconds}: 503, and it may still
     * be running, so the caller should look at the status before retrying.
     */
    public static RestResponse stillRunning(long timeoutSeconds) {
        return error(503, "request did not complete within " + timeoutSeconds + "s; it may still be running: "
                + "check status before retrying (cleanup, drain and verify can be started with ?async=true and "
                + "followed with GET /operations/{id})");
    }

    /**
     * The answer for a request whose handling failed with an error the API did not map to an answer: 500 with that
     * error (a timeout inside the handling too: it is over, not still running).
     */
    public static RestResponse failed(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof java.util.concurrent.ExecutionException
                || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return error(500, "request failed: " + (t.getMessage() != null ? t.getMessage() : t.toString()));
    }

    public static RestResponse error(int status, String message, String detailName, Object detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("reason", message);
        body.put("error", message);
        body.put(detailName, detail);
        return new RestResponse(status, body);
    }
}
