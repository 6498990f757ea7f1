package io.bcswitch.rest;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.RegistryException;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** How a refusal becomes an HTTP answer: the status of each kind of refusal, and the JSON answer itself. */
final class ApiErrors {
    private static final Logger log = LoggerFactory.getLogger(BookieClustersApi.class);

    private ApiErrors() {
    }

    /** A request refused at the HTTP layer. */
    static final class ApiError extends RuntimeException {
        final int status;

        ApiError(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /** The answer to a refused or failed request: its status and reason (500 for what nobody refused). */
    static RestResponse toResponse(Throwable e) {
        Throwable t = Failures.unwrap(e);
        if (t instanceof ApiError a) {
            return RestResponse.error(a.status, a.getMessage());
        }
        if (t instanceof RegistryException r) {
            int status = switch (r.kind()) {
                case INVALID -> 400;
                case NOT_FOUND -> 404;
                case CONFLICT -> 409;
                case UNAVAILABLE -> 503;
            };
            if (r.details() != null) {
                return RestResponse.error(status, r.getMessage(), "precheck", r.details());
            }
            return RestResponse.error(status, r.getMessage());
        }
        if (t instanceof io.bcswitch.registry.StoreFailure.Unavailable u) {
            return RestResponse.error(503, "this broker's metadata store did not answer (" + u.getMessage() + "); "
                    + "retry, or ask another broker");
        }
        log.error("Unexpected error serving bookie-clusters request", t);
        return RestResponse.error(500, "internal error: " + t);
    }

    /** The JAX-RS answer: the status, and the {@link RestResponse} itself, written as JSON by {@link JsonWriter}. */
    static Response toHttp(RestResponse r) {
        return Response.status(r.status()).type(MediaType.APPLICATION_JSON_TYPE).entity(r).build();
    }
}
