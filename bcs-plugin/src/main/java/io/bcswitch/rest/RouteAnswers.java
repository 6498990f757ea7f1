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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How every route of {@link BookieClustersApi} is answered: the route's work, or what it refused, becomes the HTTP
 * answer on the answer executor, within {@link #REQUEST_TIMEOUT_SECONDS}; and a long route asked with
 * {@code async=true} is started as an operation of this broker's {@link Operations} instead, or becomes one when it
 * runs longer than the broker's {@code operationAfterSeconds}.
 */
final class RouteAnswers {
    private static final Logger log = LoggerFactory.getLogger(RouteAnswers.class);
    /**
     * Longest a request waits for its answer. The slow routes (cleanup, drain, verify) become operations when they
     * take long, so this only bounds a client kept waiting on a stuck metadata store; a minute is above
     * what register, precheck and switch take with the default probe timeout ({@code probeTimeoutSeconds}, 10 s)
     * on a healthy cluster.
     */
    static final long REQUEST_TIMEOUT_SECONDS = 60;

    private final Executor answers;
    private final Operations operations;
    private final long operationAfterMillis;

    /**
     * @param answers    writes each answer: the work of a route completes on whatever thread its last step ran on
     *                   (a metadata store callback, say), and writing to a slow client must not hold that thread
     * @param operations runs long operations asynchronously; null: {@code async=true} and {@code /operations}
     *                   answer 503
     * @param operationAfterMillis how long a long route called synchronously may run before its call answers 202
     *                   with the operation it continues as (see {@link #maybeAsync})
     */
    RouteAnswers(Executor answers, Operations operations, long operationAfterMillis) {
        this.answers = answers;
        this.operations = operations;
        this.operationAfterMillis = operationAfterMillis;
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
     * A synchronous call that says it can follow one ({@code Prefer: respond-async}, RFC 7240, as the admin client
     * and pulsar-admin send) and whose work has not answered within {@code operationAfterMillis} answers 202 too,
     * with the operation the work continues as: however long a drain report, cleanup or verify takes over a large
     * cluster, its caller gets an answer it can follow, never the 503 of a request that ran out of time. A caller
     * that does not say so (an older client, which would read the 202's body as the report) waits as before.
     */
    CompletableFuture<RestResponse> maybeAsync(String async, String prefer, String operation,
                                               Map<String, Object> parameters, Supplier<CompletableFuture<?>> check,
                                               Supplier<CompletableFuture<RestResponse>> work) {
        if (!flag("async", async)) {
            return operations == null || !respondAsync(prefer) ? work.get()
                    : answerOrAdopt(operation, parameters, check, work.get());
        }
        Operations ops = operations();
        return check.get().thenCompose(ok -> ops.start(operation, parameters, work));
    }

    /**
     * {@code running}'s answer if it comes within {@code operationAfterMillis}, else 202 with the operation it is
     * recorded as. Only a call that passes {@code check} (the cluster it names is registered, ...) is recorded: one
     * refused is answered with its refusal, and the metadata store stays as it was. If the record cannot be written,
     * the call waits for the answer as before (and gets 503 at {@link #REQUEST_TIMEOUT_SECONDS}).
     */
    private CompletableFuture<RestResponse> answerOrAdopt(String operation, Map<String, Object> parameters,
                                                          Supplier<CompletableFuture<?>> check,
                                                          CompletableFuture<RestResponse> running) {
        if (operationAfterMillis == 0) {
            // every such call is an operation: one refused, or whose record cannot be written, is answered as it
            // comes
            return adoptIfAccepted(operation, parameters, check, running).exceptionallyCompose(e -> {
                log.warn("{} is not recorded as an operation; its call waits for it: {}", operation, e.toString());
                return running;
            });
        }
        // the call's own copy of the answer: the 202 completes it, never the work's future
        CompletableFuture<RestResponse> answer = running.thenApply(r -> r);
        CompletableFuture.delayedExecutor(operationAfterMillis, TimeUnit.MILLISECONDS).execute(() -> {
            if (answer.isDone()) {
                return;
            }
            adoptIfAccepted(operation, parameters, check, running).whenComplete((accepted, e) -> {
                if (e != null) {
                    log.warn("{} ran longer than {} ms and is not recorded as an operation; its call waits for it: {}",
                            operation, operationAfterMillis, e.toString());
                } else {
                    answer.complete(accepted); // a no-op when the work answered meanwhile
                }
            });
        });
        return answer;
    }

    /** {@code running} recorded as an operation (202) once {@code check} passed; failed with its refusal else. */
    private CompletableFuture<RestResponse> adoptIfAccepted(String operation, Map<String, Object> parameters,
                                                            Supplier<CompletableFuture<?>> check,
                                                            CompletableFuture<RestResponse> running) {
        return check.get().thenCompose(ok -> operations.adopt(operation, parameters, running));
    }

    /** The request header by which a caller says it can follow an operation (RFC 7240). */
    static final String PREFER = "Prefer";

    /** Whether a {@code Prefer} header asks for {@code respond-async} (among other preferences, in any case). */
    static boolean respondAsync(String prefer) {
        if (prefer == null) {
            return false;
        }
        for (String p : prefer.split(",")) {
            if (p.trim().equalsIgnoreCase("respond-async")) {
                return true;
            }
        }
        return false;
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
