package io.bcswitch.rest;

import static io.bcswitch.rest.RequestInput.emptyOrEmptyObject;
import static io.bcswitch.rest.RequestInput.flag;
import static io.bcswitch.rest.RequestInput.jsonBody;
import static io.bcswitch.rest.RequestInput.optionalBoolean;
import static io.bcswitch.rest.RequestInput.optionalInt;
import static io.bcswitch.rest.RequestInput.read;
import static io.bcswitch.rest.RequestInput.registration;
import static io.bcswitch.rest.RequestInput.requiredString;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.migration.CleanupService;
import io.bcswitch.migration.MigrationService;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.Json;
import io.bcswitch.rest.ApiErrors.ApiError;
import io.bcswitch.switching.ReadMode;
import io.bcswitch.switching.SwitchService;
import io.bcswitch.topics.TopicLedgerReports;
import io.bcswitch.tuning.TuningService;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;

/**
 * The REST API under {@code /admin/v2/bookie-clusters}, a JAX-RS resource (served by Jersey, which the broker ships;
 * see {@link RestApplication}). Errors are {@code {"reason": "...", "error": "..."}} with 400 (bad input), 404 (no
 * such cluster or endpoint), 405, 409 (conflicts, failed precheck), 413, 415; a refused request changes nothing.
 *
 * <pre>
 * GET  /                 list clusters
 * GET  /status           active cluster, epoch, range table, per-broker cutover progress
 * GET  /precheck/{name}  can {name} become active?
 * POST /switch           {"target": name}
 * GET  /{name}           one cluster
 * POST /{name}           register {name} as STANDBY: {"metadataServiceUri": "..."}
 * DELETE /{name}         unregister {name} (409 while it is active or owns ledgers the brokers reference)
 * POST /rollback          undo the latest switch inside the rollback window
 * POST /migration/retry   run the latest switch's finished migration again
 * GET  /drain/{name}      what still pins {name}, and when retention will have removed its data ledgers
 * GET  /cleanup-targets[/{name}]  ledgers cleanup may delete now
 * POST /cleanup           {"srcCluster": name, "dryRun": true, "maxDeletions": 0, "force": false}
 *                        (cleanup, drain and verify take {@code ?async=true}: 202 and an operation at once)
 * GET  /operations[/{id}]  operations started with async=true: state, and at the end the answer's status and body
 * POST /close-client/{name}  mark a drained cluster DEPRECATED; brokers close its clients
 * GET  /verify[?deep=true]  every violation of the plugin's invariants (read only)
 * GET|POST /tuning        the pacing settings, changed at run time
 * GET  /topics/{tenant}/{namespace}/{topic}
 *                        each ledger of a persistent topic: id, owning cluster, size, entries, and its
 *                        _pulsar.bookieClusterName ledger property
 * </pre>
 *
 * Request bodies are read here, not by Jersey, so that every body error (415, 400, 413) has the same answer whatever
 * the route. A request that does not complete within {@link RouteAnswers#REQUEST_TIMEOUT_SECONDS} is answered 503.
 */
@Path("/")
@Produces(MediaType.APPLICATION_JSON)
public class BookieClustersApi {
    public static final int MAX_BODY_BYTES = 1024 * 1024;
    private static final String CONTENT_TYPE = "Content-Type";

    /** The request being served (a per-request proxy: this resource is one instance for all requests). */
    @javax.ws.rs.core.Context
    private javax.ws.rs.core.Request request;

    private final RouteAnswers routes;
    private final SwitchService service;
    private final TuningService tuning;
    private final TopicLedgerReports topics;
    private final MigrationService migration;

    public BookieClustersApi(SwitchService service) {
        this(service, null, null);
    }

    /**
     * @param tuning     changes the pacing settings at run time; null: {@code /tuning} answers 503
     * @param operations runs long operations asynchronously; null: {@code async=true} and {@code /operations}
     *                   answer 503
     */
    public BookieClustersApi(SwitchService service, TuningService tuning, Operations operations) {
        this(service, tuning, operations, Runnable::run, null, null,
                TimeUnit.SECONDS.toMillis(Long.parseLong(ConfigKey.OPERATION_AFTER_SECONDS.defaultValue())));
    }

    /**
     * @param answers   writes each answer (see {@link RouteAnswers})
     * @param migration the migration endpoints (rollback, drain, cleanup, close-client); null: they answer 503
     * @param topics    {@code GET /topics/...}; null: it answers 503
     * @param operationAfterMillis how long a drain report, cleanup or verify called synchronously may run before
     *                  its call answers 202 with the operation it continues as
     */
    public BookieClustersApi(SwitchService service, TuningService tuning, Operations operations,
                             Executor answers, MigrationService migration, TopicLedgerReports topics,
                             long operationAfterMillis) {
        this.routes = new RouteAnswers(answers, operations, operationAfterMillis);
        this.service = service;
        this.tuning = tuning;
        this.migration = migration;
        this.topics = topics;
    }

    // ---- routes: JAX-RS matches a literal path before a {name} template, so GET /status is the status and GET
    // /west a cluster. Each method checks its input first and answers through RouteAnswers.respond(), which turns
    // whatever the service refused into its status and {"reason"} (see ApiErrors.toResponse).

    @GET
    public CompletionStage<Response> list() {
        return routes.respond(() -> service.list().thenApply(RestResponse::ok));
    }

    @GET
    @Path("status")
    public CompletionStage<Response> status() {
        return routes.respond(() -> service.status().thenApply(RestResponse::ok));
    }

    /** A reserved word is refused as a cluster name (400), not as a method: the same answer as for any other. */
    @POST
    @Path("status")
    public CompletionStage<Response> registerReserved(@HeaderParam(CONTENT_TYPE) String contentType,
                                                      InputStream body) {
        return routes.respond(() -> registerCluster("status", contentType, body));
    }

    @GET
    @Path("precheck/{name}")
    public CompletionStage<Response> precheck(@PathParam("name") String name) {
        return routes.respond(() -> service.precheck(name).thenApply(RestResponse::ok));
    }

    @POST
    @Path("switch")
    public CompletionStage<Response> switchTo(@HeaderParam(CONTENT_TYPE) String contentType, InputStream body) {
        return routes.respond(() -> {
            JsonNode json = jsonBody(contentType, read(body), Set.of("target", "allowUnknownSourceIds"));
            String target = requiredString(json, "target");
            boolean allowUnknown = optionalBoolean(json, "allowUnknownSourceIds", false);
            return service.switchTo(target, allowUnknown).thenApply(RestResponse::ok);
        });
    }

    @GET
    @Path("{name}")
    public CompletionStage<Response> get(@PathParam("name") String name) {
        return routes.respond(() -> notAnEndpoint(name)
                .orElseGet(() -> service.get(name).thenApply(RestResponse::ok)));
    }

    @POST
    @Path("{name}")
    public CompletionStage<Response> register(@PathParam("name") String name,
                                              @HeaderParam(CONTENT_TYPE) String contentType, InputStream body) {
        return routes.respond(() -> notAnEndpoint(name).orElseGet(() -> registerCluster(name, contentType, body)));
    }

    /**
     * The body is {@code {"metadataServiceUri": ...}}; PIP-477's {@code name} (the path's) and {@code status} (only
     * STANDBY: a cluster becomes ACTIVE by a switch and DEPRECATED by close-client) are accepted as well.
     */
    private CompletableFuture<RestResponse> registerCluster(String name, String contentType, InputStream body) {
        String uri = registration(jsonBody(contentType, read(body), Set.of("metadataServiceUri", "name", "status")),
                name);
        return service.register(name, uri).thenApply(RestResponse::ok);
    }

    /**
     * PIP-477's read-mode override. Every ledger is always read from the one cluster that holds it ({@code
     * DUAL_READ}): that mode is answered as set (nothing changes); the two others are refused (409) with what to use
     * instead (see {@link ReadMode}).
     */
    @POST
    @Path("read-mode")
    public CompletionStage<Response> setReadMode(@HeaderParam(CONTENT_TYPE) String contentType, InputStream body) {
        return routes.respond(() -> {
            JsonNode json = jsonBody(contentType, read(body), Set.of("mode"));
            ReadMode mode = ReadMode.set(requiredString(json, "mode"));
            return RouteAnswers.done(RestResponse.ok(Map.of("readMode", mode.name())));
        });
    }

    @DELETE
    @Path("{name}")
    public CompletionStage<Response> unregister(@PathParam("name") String name) {
        return routes.respond(() -> notAnEndpoint(name).orElseGet(() -> service.unregister(name)
                .thenApply(RestResponse::ok)));
    }

    /** {@link ApiWords#refusal} for this request's method, answered as the route's refusal. */
    private java.util.Optional<CompletableFuture<RestResponse>> notAnEndpoint(String name) {
        return ApiWords.refusal(name, request.getMethod()).map(RouteAnswers::done);
    }

    @POST
    @Path("rollback")
    public CompletionStage<Response> rollback(@HeaderParam(CONTENT_TYPE) String contentType, InputStream body) {
        return routes.respond(() -> {
            emptyOrEmptyObject(contentType, read(body));
            return migration().rollback().thenApply(RestResponse::ok);
        });
    }

    @POST
    @Path("migration/retry")
    public CompletionStage<Response> retryMigration(@HeaderParam(CONTENT_TYPE) String contentType,
                                                    InputStream body) {
        return routes.respond(() -> {
            emptyOrEmptyObject(contentType, read(body));
            return migration().retryMigration().thenApply(RestResponse::ok);
        });
    }

    @GET
    @Path("drain/{name}")
    public CompletionStage<Response> drain(@PathParam("name") String name, @QueryParam("async") String async,
                                           @HeaderParam(RouteAnswers.PREFER) String prefer) {
        return routes.respond(() -> routes.maybeAsync(async, prefer, "drain", Map.of("cluster", name),
                () -> service.get(name),
                () -> migration().drainReport(name).thenApply(RestResponse::ok)));
    }

    @GET
    @Path("cleanup-targets")
    public CompletionStage<Response> cleanupTargets() {
        return routes.respond(() -> migration().cleanupTargets(null).thenApply(RestResponse::ok));
    }

    @GET
    @Path("cleanup-targets/{name}")
    public CompletionStage<Response> cleanupTargets(@PathParam("name") String name) {
        return routes.respond(() -> migration().cleanupTargets(name).thenApply(RestResponse::ok));
    }

    @POST
    @Path("cleanup")
    public CompletionStage<Response> cleanup(@QueryParam("async") String async,
                                             @HeaderParam(RouteAnswers.PREFER) String prefer,
                                             @HeaderParam(CONTENT_TYPE) String contentType, InputStream body) {
        return routes.respond(() -> {
            JsonNode json = jsonBody(contentType, read(body), Set.of("srcCluster", "dryRun", "maxDeletions", "force"));
            String src = requiredString(json, "srcCluster");
            boolean dryRun = optionalBoolean(json, "dryRun", true);
            boolean force = optionalBoolean(json, "force", false);
            int max = optionalInt(json, "maxDeletions", 0);
            Map<String, Object> parameters = Map.of("srcCluster", src, "dryRun", dryRun, "maxDeletions", max,
                    "force", force);
            return routes.maybeAsync(async, prefer, "cleanup", parameters, () -> service.get(src).thenAccept(c -> {
                        if (c.status() == ClusterStatus.ACTIVE) {
                            throw CleanupService.activeCluster(src);
                        }
                    }),
                    () -> migration().cleanup(src, dryRun, max, force).thenApply(RestResponse::ok));
        });
    }

    @POST
    @Path("close-client/{name}")
    public CompletionStage<Response> closeClient(@PathParam("name") String name) {
        return routes.respond(() -> migration().closeClient(name).thenApply(RestResponse::ok));
    }

    @GET
    @Path("verify")
    public CompletionStage<Response> verify(@QueryParam("deep") String deep, @QueryParam("async") String async,
                                            @HeaderParam(RouteAnswers.PREFER) String prefer) {
        return routes.respond(() -> {
            boolean isDeep = flag("deep", deep);
            return routes.maybeAsync(async, prefer, "verify", Map.of("deep", isDeep),
                    () -> CompletableFuture.completedFuture(null),
                    () -> migration().verify(isDeep).thenApply(RestResponse::ok));
        });
    }

    @GET
    @Path("operations")
    public CompletionStage<Response> operations() {
        return routes.respond(() -> routes.operations().list());
    }

    @GET
    @Path("operations/{id}")
    public CompletionStage<Response> operation(@PathParam("id") String id) {
        return routes.respond(() -> routes.operations().get(id));
    }

    /**
     * {@code GET /topics/{tenant}/{namespace}/{topic}}: a v2 topic's local name cannot contain '/' (it arrives
     * URL-encoded), so exactly three non-empty segments follow "topics"; any other shape is a malformed path (400).
     */
    @GET
    @Path("topics{rest: (/.*)?}")
    public CompletionStage<Response> topic(@PathParam("rest") String rest) {
        return routes.respond(() -> {
            List<String> seg = RequestInput.topicPath(rest);
            TopicLedgerReports t = topics;
            if (t == null) {
                return RouteAnswers.done(RestResponse.error(503,
                        "topic ledgers are not available on this broker"));
            }
            return t.report(seg.get(0), seg.get(1), seg.get(2)).thenApply(RestResponse::ok);
        });
    }

    @GET
    @Path("tuning")
    public CompletionStage<Response> tuning() {
        return routes.respond(() -> tuningOrRefuse().get().thenApply(RestResponse::ok));
    }

    /**
     * Each field given is set (a number) or goes back to broker.conf's value ({@code null}); the others stay.
     */
    @POST
    @Path("tuning")
    public CompletionStage<Response> setTuning(@HeaderParam(CONTENT_TYPE) String contentType, InputStream body) {
        return routes.respond(() -> {
            TuningService t = tuningOrRefuse();
            return t.set(RequestInput.tuningChange(contentType, read(body))).thenApply(RestResponse::ok);
        });
    }

    private MigrationService migration() {
        MigrationService m = migration;
        if (m == null) {
            throw new ApiError(503, "migration endpoints are not available on this broker");
        }
        return m;
    }

    private TuningService tuningOrRefuse() {
        if (tuning == null) {
            throw new ApiError(503, "run-time tuning is not available on this broker");
        }
        return tuning;
    }

    /** Serialises a response body. */
    public static byte[] toJson(RestResponse r) {
        return Json.write(r.body());
    }

}
