package io.bcswitch.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bcswitch.concurrent.TestWaits;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class RestResponseTest {

    private static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(TestWaits.SECONDS, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure");
        } catch (ExecutionException | TimeoutException e) {
            return e;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRequestThatFailedIsNeverReportedAsATimeout() {
        RestResponse r = RestResponse.failed(failureOf(CompletableFuture.failedFuture(
                new IllegalStateException("the broker record cannot be read"))));
        assertEquals(500, r.status());
        assertEquals(errorBody("request failed: the broker record cannot be read"), r.body());
    }

    @Test
    void aRequestStillRunningSaysSoAndPointsAtStatus() {
        RestResponse r = RestResponse.stillRunning(60);
        assertEquals(503, r.status());
        assertEquals(errorBody("request did not complete within 60s; it may still be running: check status "
                + "before retrying (cleanup, drain and verify can be started with ?async=true and followed with "
                + "GET /operations/{id})"), r.body());
        // a timeout the handling itself ran into (a probe's, say) ended the request: not "still running"
        RestResponse inner = RestResponse.failed(failureOf(CompletableFuture.failedFuture(
                new TimeoutException("no probe ledger within 10000 ms"))));
        assertEquals(500, inner.status());
        assertEquals(errorBody("request failed: no probe ledger within 10000 ms"), inner.body());
    }

    @Test
    void aMetadataStoreThatDoesNotAnswerIsUnavailableNotAServerError() {
        RestResponse r = ApiErrors.toResponse(new java.util.concurrent.CompletionException(
                new io.bcswitch.registry.StoreFailure.Unavailable("the metadata store did not answer for /x: session "
                        + "expired", null)));
        assertEquals(503, r.status());
        assertEquals(errorBody("this broker's metadata store did not answer (the metadata store did not answer for "
                + "/x: session expired); retry, or ask another broker"), r.body());
        assertEquals(500, ApiErrors.toResponse(new io.bcswitch.registry.StoreFailure("corrupt", null)).status());
    }

    /** An error's body: the message as Pulsar's {@code reason} and as the earlier {@code error}. */
    private static Map<String, Object> errorBody(String message) {
        return Map.of("reason", message, "error", message);
    }
}
