package io.bcswitch.rest;

import static io.bcswitch.rest.RequestInput.flag;

import io.bcswitch.rest.ApiErrors.ApiError;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.ws.rs.core.Response;

/**
 * How every route of {@link BookieClustersApi} is answered: the route's work, or what it refused, becomes the HTTP
 * answer on the answer executor, within {@link #REQUEST_TIMEOUT_SECONDS}; and a long route asked with
 * {@code async=true} is started as an operation of this broker's {@link Operations} instead.
 */
final class RouteAnswers {
    /**
     * Longest a request waits for its answer. The slow routes (cleanup, drain, verify) can be started with
     * {@code ?async=true}, so this only bounds a client kept waiting on a stuck metadata store; a minute is above
     * what register, precheck and switch take with the default probe timeout ({@code probeTimeoutSeconds}, 10 s)
     * on a healthy cluster.
     */
    static final long REQUEST_TIMEOUT_SECONDS = 60;

    private final Executor answers;
    private final Operations operations;

    /**
     * @param answers    writes each answer: the work of a route completes on whatever thread its last step ran on
     *                   (a metadata store callback, say), and writing to a slow client must not hold that thread
     * @param operations runs long operations asynchronously; null: {@code async=true} and {@code /operations}
     *                   answer 503
     */
    RouteAnswers(Executor answers, Operations operations) {
        this.answers = answers;
        this.operations = operations;
    }

    /**
     * Runs a route's work and turns its outcome, or its refusal, into the HTTP answer. A request not answered within
     * {@link #REQUEST_TIMEOUT_SECONDS} gets 503 (it may still be running); the long ones can be started with
     * {@code ?async=true} instead.
     */
    CompletionStage<Response> respond(Supplier<CompletableFuture<RestResponse>> work) {
        CompletableFuture<RestResponse> answer;
        try {
            answer = work.get().exceptionally(ApiErrors::toResponse);
        } catch (RuntimeException e) {
            answer = done(ApiErrors.toResponse(e));
        }
        return answer.thenApply(r -> r).completeOnTimeout(RestResponse.stillRunning(REQUEST_TIMEOUT_SECONDS),
                REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS).thenApplyAsync(ApiErrors::toHttp, answers);
    }

    /**
     * {@code work} answered now, or, with {@code async=true}, started as an operation: 202 with its id at once (see
     * {@link Operations}). The request's input is checked before either; an asynchronous one first also passes
     * {@code check} (the cluster it names is registered), so that it is refused, and nothing recorded, as the
     * synchronous call would be. What the work itself refuses ends the operation FAILED with that answer.
     */
    CompletableFuture<RestResponse> maybeAsync(String async, String operation, Map<String, Object> parameters,
                                               Supplier<CompletableFuture<?>> check,
                                               Supplier<CompletableFuture<RestResponse>> work) {
        if (!flag("async", async)) {
            return work.get();
        }
        Operations ops = operations();
        return check.get().thenCompose(ok -> ops.start(operation, parameters, work));
    }

    /** The operations of this broker, or a 503 refusal when it runs none. */
    Operations operations() {
        if (operations == null) {
            throw new ApiError(503, "asynchronous operations are not available on this broker");
        }
        return operations;
    }

    static CompletableFuture<RestResponse> done(RestResponse r) {
        return CompletableFuture.completedFuture(r);
    }
}
