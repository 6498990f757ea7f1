package io.bcswitch.rest;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.switching.SwitchService;
import io.bcswitch.topics.TopicLedgerReports;
import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST API under {@code /admin/v2/bookie-clusters}, independent of any servlet container: the
 * servlet passes method, path (below the base path), content type and body, and writes back the
 * {@link RestResponse} as JSON. Errors are {@code {"reason": "...", "error": "..."}} with 400 (bad input), 404 (no such
 * cluster or endpoint), 405, 409 (conflicts, failed precheck), 413, 415; a refused request changes
 * nothing.
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
 * GET  /drain/{name}      what still pins {name}, and when retention will have removed its data ledgers
 * GET  /cleanup-targets[/{name}]  ledgers cleanup may delete now
 * POST /cleanup           {"srcCluster": name, "dryRun": true, "maxDeletions": 0, "force": false}
 *                        (cleanup, drain and verify take {@code ?async=true}: 202 and an operation at once)
 * GET  /operations[/{id}]  operations started with async=true: state, and at the end the answer's status and body
 * POST /close-client/{name}  mark a drained cluster DEPRECATED; brokers close its clients
 * GET  /verify[?deep=true]  every violation of the plugin's invariants (read only)
 * GET  /topics/{tenant}/{namespace}/{topic}
 *                        each ledger of a persistent topic: id, owning cluster, size, entries, and its
 *                        _pulsar.bookieClusterName ledger property
 * </pre>
 */
public class BookieClustersApi {
    private static final Logger log = LoggerFactory.getLogger(BookieClustersApi.class);
    public static final int MAX_BODY_BYTES = 1024 * 1024;

    private final SwitchService service;
    private final io.bcswitch.tuning.TuningService tuning;
    private final Operations operations;
    private volatile TopicLedgerReports topics;
    private volatile io.bcswitch.migration.MigrationService migration;

    public BookieClustersApi(SwitchService service) {
        this(service, null, null);
    }

    /**
     * @param tuning     changes the pacing settings at run time; null: {@code /tuning} answers 503
     * @param operations runs long operations asynchronously; null: {@code async=true} and {@code /operations}
     *                   answer 503
     */
    public BookieClustersApi(SwitchService service, io.bcswitch.tuning.TuningService tuning, Operations operations) {
        this.service = service;
        this.tuning = tuning;
        this.operations = operations;
    }

    /** Enables the migration endpoints (rollback, drain, cleanup, close-client); without it they answer 503. */
    public void setMigration(io.bcswitch.migration.MigrationService migration) {
        this.migration = migration;
    }

    /** Enables {@code GET /topics/...}; without it that endpoint answers 503. */
    public void setTopicLedgers(TopicLedgerReports topics) {
        this.topics = topics;
    }

    /**
     * Handles one request.
     *
     * @param method      HTTP method
     * @param path        path below the API's base path ("" or "/" for the root), already URL-decoded
     * @param contentType request content type, or null
     * @param body        request body (null or empty when none); callers cap it at {@link #MAX_BODY_BYTES} + 1
     */
    public CompletableFuture<RestResponse> handle(String method, String path, String contentType, byte[] body) {
        return handle(method, path, null, contentType, body);
    }

    /**
     * As above, with the request's query string ({@code deep=true} of {@code GET /verify}; null when none).
     */
    public CompletableFuture<RestResponse> handle(String method, String path, String query, String contentType,
                                                  byte[] body) {
        try {
            return route(method.toUpperCase(Locale.ROOT), path == null ? "" : path, query, contentType, body)
                    .exceptionally(BookieClustersApi::toResponse);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(toResponse(e));
        }
    }

    /** A true/false query parameter ({@code name} alone means true); false when absent. */
    private static boolean queryFlag(String q, String name) {
        if (q == null || q.isEmpty()) {
            return false;
        }
        for (String kv : q.split("&")) {
            String[] p = kv.split("=", 2);
            if (p[0].equals(name)) {
                String v = p.length > 1 ? p[1] : "true";
                if (!v.equals("true") && !v.equals("false")) {
                    throw new ApiError(400, "query parameter '" + name + "' must be true or false");
                }
                return v.equals("true");
            }
        }
        return false;
    }

    private CompletableFuture<RestResponse> route(String method, String path, String query, String contentType,
                                                  byte[] body) {
        String p = path.startsWith("/") ? path.substring(1) : path;
        if (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        List<String> seg = p.isEmpty() ? List.of() : List.of(p.split("/", -1));
        if (seg.isEmpty()) {
            return allow(method, "GET").orElse(() -> service.list().thenApply(RestResponse::ok));
        }
        String first = seg.get(0);
        if (first.equals("topics")) {
            return allow(method, "GET").orElse(() -> topic(seg));
        }
        if (first.equals("operations")) {
            return operationsRoute(method, seg);
        }
        if (seg.size() == 1 && first.equals("tuning")) {
            return tuningRoute(method, contentType, body);
        }
        if (MIGRATION_ENDPOINTS.contains(first)) {
            return migrationRoute(method, first, seg, query, contentType, body);
        }
        if (seg.size() == 1 && method.equals("POST") && !first.equals("switch")) {
            // register; a reserved word (e.g. "status") is refused as a name, not as a method
            JsonNode json = jsonBody(contentType, body, Set.of("metadataServiceUri"));
            String uri = requiredString(json, "metadataServiceUri");
            return service.register(first, uri).thenApply(RestResponse::ok);
        }
        if (seg.size() == 1 && first.equals("status")) {
            return allow(method, "GET").orElse(() -> service.status().thenApply(RestResponse::ok));
        }
        if (seg.size() == 1 && first.equals("switch")) {
            return allow(method, "POST").orElse(() -> {
                JsonNode json = jsonBody(contentType, body, Set.of("target", "allowUnknownSourceIds"));
                String target = requiredString(json, "target");
                boolean allowUnknown = optionalBoolean(json, "allowUnknownSourceIds", false);
                return service.switchTo(target, allowUnknown).thenApply(RestResponse::ok);
            });
        }
        if (seg.size() == 2 && first.equals("precheck")) {
            return allow(method, "GET").orElse(() -> service.precheck(seg.get(1)).thenApply(RestResponse::ok));
        }
        if (seg.size() == 1 && !first.equals("precheck")) {
            if (method.equals("GET")) {
                return service.get(first).thenApply(RestResponse::ok);
            }
            if (method.equals("DELETE")) {
                return service.unregister(first).thenApply(RestResponse::ok);
            }
            return done(RestResponse.error(405, "method " + method + " is not allowed on /" + first
                    + " (allowed: GET, POST, DELETE)"));
        }
        return done(RestResponse.error(404, "no such endpoint: /" + p));
    }

    /**
     * {@code GET /tuning}: this broker's pacing now, its broker.conf's, and what is stored. {@code POST /tuning}:
     * each field given is set (a number) or goes back to broker.conf's value ({@code null}); the others stay.
     */
    private CompletableFuture<RestResponse> tuningRoute(String method, String contentType, byte[] body) {
        io.bcswitch.tuning.TuningService t = tuning;
        RestResponse unavailable = RestResponse.error(503, "run-time tuning is not available on this broker");
        if (method.equals("GET")) {
            return t == null ? done(unavailable) : t.get().thenApply(RestResponse::ok);
        }
        return allow(method, "POST").orElse(() -> {
            if (t == null) {
                return done(unavailable);
            }
            JsonNode json = jsonBody(contentType, body, new java.util.TreeSet<>(io.bcswitch.tuning.TuningService.KEYS));
            Set<String> reset = new java.util.TreeSet<>();
            json.fieldNames().forEachRemaining(f -> {
                if (json.get(f).isNull()) {
                    reset.add(f);
                }
            });
            Long bytes = wholeOrNull(json, io.bcswitch.tuning.TuningService.MIGRATION_BYTES_PER_SECOND);
            Long concurrency = wholeOrNull(json, io.bcswitch.tuning.TuningService.MIGRATION_CONCURRENCY);
            if (concurrency != null && (concurrency < Integer.MIN_VALUE || concurrency > Integer.MAX_VALUE)) {
                throw new ApiError(400, "field 'migrationConcurrency' must be between 1 and 1024");
            }
            Double rate = numberOrNull(json, io.bcswitch.tuning.TuningService.CUTOVER_TOPICS_PER_SECOND);
            return t.set(new io.bcswitch.tuning.TuningService.Change(bytes, concurrency == null ? null
                    : concurrency.intValue(), rate, reset)).thenApply(RestResponse::ok);
        });
    }

    private static Long wholeOrNull(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new ApiError(400, "field '" + field + "' must be a whole number (or null for broker.conf's value)");
        }
        return v.asLong();
    }

    private static Double numberOrNull(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber()) {
            throw new ApiError(400, "field '" + field + "' must be a number (or null for broker.conf's value)");
        }
        return v.asDouble();
    }

    private static final Set<String> MIGRATION_ENDPOINTS = Set.of("rollback", "migration", "drain", "cleanup-targets",
            "cleanup", "close-client", "verify");

    private CompletableFuture<RestResponse> migrationRoute(String method, String first, List<String> seg,
                                                           String query, String contentType, byte[] body) {
        // the route's shape and method are checked first, so that a broker without the migration service still
        // answers 404/405 for what is not an endpoint, and 503 only for what is
        Supplier<io.bcswitch.migration.MigrationService> m = () -> {
            io.bcswitch.migration.MigrationService service = migration;
            if (service == null) {
                throw new ApiError(503, "migration endpoints are not available on this broker");
            }
            return service;
        };
        switch (first) {
            case "rollback":
                if (seg.size() != 1) {
                    break;
                }
                return allow(method, "POST").orElse(() -> {
                    if (body != null && body.length > 0) {
                        jsonBody(contentType, body, Set.of());
                    }
                    return m.get().rollback().thenApply(RestResponse::ok);
                });
            case "migration":
                if (seg.size() != 2 || !seg.get(1).equals("retry")) {
                    break;
                }
                return allow(method, "POST").orElse(() -> {
                    if (body != null && body.length > 0) {
                        jsonBody(contentType, body, Set.of());
                    }
                    return m.get().retryMigration().thenApply(RestResponse::ok);
                });
            case "drain":
                if (seg.size() != 2) {
                    break;
                }
                return allow(method, "GET").orElse(() -> maybeAsync(query, "drain", Map.of("cluster", seg.get(1)),
                        () -> service.get(seg.get(1)),
                        () -> m.get().drainReport(seg.get(1)).thenApply(RestResponse::ok)));
            case "cleanup-targets":
                if (seg.size() > 2) {
                    break;
                }
                return allow(method, "GET").orElse(() -> m.get().cleanupTargets(seg.size() == 2 ? seg.get(1) : null)
                        .thenApply(RestResponse::ok));
            case "cleanup":
                if (seg.size() != 1) {
                    break;
                }
                return allow(method, "POST").orElse(() -> {
                    JsonNode json = jsonBody(contentType, body, Set.of("srcCluster", "dryRun", "maxDeletions", "force"));
                    String src = requiredString(json, "srcCluster");
                    boolean dryRun = optionalBoolean(json, "dryRun", true);
                    boolean force = optionalBoolean(json, "force", false);
                    int max = optionalInt(json, "maxDeletions", 0);
                    return maybeAsync(query, "cleanup", Map.of("srcCluster", src, "dryRun", dryRun, "maxDeletions",
                            max, "force", force), () -> service.get(src).thenAccept(c -> {
                                if (c.status() == io.bcswitch.registry.ClusterStatus.ACTIVE) {
                                    throw io.bcswitch.migration.CleanupService.activeCluster(src);
                                }
                            }),
                            () -> m.get().cleanup(src, dryRun, max, force).thenApply(RestResponse::ok));
                });
            case "close-client":
                if (seg.size() != 2) {
                    break;
                }
                return allow(method, "POST").orElse(() -> m.get().closeClient(seg.get(1)).thenApply(RestResponse::ok));
            case "verify":
                if (seg.size() != 1) {
                    break;
                }
                return allow(method, "GET").orElse(() -> {
                    boolean deep = queryFlag(query, "deep");
                    return maybeAsync(query, "verify", Map.of("deep", deep),
                            () -> CompletableFuture.completedFuture(null),
                            () -> m.get().verify(deep).thenApply(RestResponse::ok));
                });
            default:
                break;
        }
        return done(RestResponse.error(404, "no such endpoint: /" + String.join("/", seg)));
    }

    /**
     * {@code work} answered now, or, with {@code async=true} in the query, started as an operation: 202 with its id at
     * once (see {@link Operations}). The request's input is checked before either; an asynchronous one first also
     * passes {@code check} (the cluster it names is registered), so that it is refused, and nothing recorded, as the
     * synchronous call would be. What the work itself refuses ends the operation FAILED with that answer.
     */
    private CompletableFuture<RestResponse> maybeAsync(String query, String operation, Map<String, Object> parameters,
                                                       Supplier<CompletableFuture<?>> check,
                                                       Supplier<CompletableFuture<RestResponse>> work) {
        if (!queryFlag(query, "async")) {
            return work.get();
        }
        if (operations == null) {
            return done(RestResponse.error(503, "asynchronous operations are not available on this broker"));
        }
        return check.get().thenCompose(ok -> operations.start(operation, parameters, work));
    }

    private CompletableFuture<RestResponse> operationsRoute(String method, List<String> seg) {
        if (seg.size() > 2) {
            return done(RestResponse.error(404, "no such endpoint: /" + String.join("/", seg)));
        }
        return allow(method, "GET").orElse(() -> {
            if (operations == null) {
                return done(RestResponse.error(503, "asynchronous operations are not available on this broker"));
            }
            return seg.size() == 1 ? operations.list() : operations.get(seg.get(1));
        });
    }

    private static boolean optionalBoolean(JsonNode json, String field, boolean dflt) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw new ApiError(400, "field '" + field + "' must be true or false");
        }
        return v.asBoolean();
    }

    private static int optionalInt(JsonNode json, String field, int dflt) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 0) {
            throw new ApiError(400, "field '" + field + "' must be a whole number >= 0");
        }
        return v.asInt();
    }

    /**
     * {@code GET /topics/{tenant}/{namespace}/{topic}}. The path arrives URL-decoded; a v2 topic's local
     * name cannot contain '/', so exactly three non-empty segments follow "topics".
     */
    private CompletableFuture<RestResponse> topic(List<String> seg) {
        if (seg.size() != 4 || seg.stream().anyMatch(String::isEmpty)) {
            return done(RestResponse.error(400, "malformed path: expected /topics/{tenant}/{namespace}/{topic} "
                    + "(a persistent topic, its local name URL-encoded)"));
        }
        TopicLedgerReports t = topics;
        if (t == null) {
            return done(RestResponse.error(503, "topic ledgers are not available on this broker"));
        }
        return t.report(seg.get(1), seg.get(2), seg.get(3)).thenApply(RestResponse::ok);
    }

    private interface Handler {
        CompletableFuture<RestResponse> run();
    }

    private record Allowed(String method, String allowed) {
        CompletableFuture<RestResponse> orElse(Handler h) {
            if (!method.equals(allowed)) {
                return done(RestResponse.error(405, "method " + method + " is not allowed here (allowed: "
                        + allowed + ")"));
            }
            return h.run();
        }
    }

    private static Allowed allow(String method, String allowed) {
        return new Allowed(method, allowed);
    }

    private static CompletableFuture<RestResponse> done(RestResponse r) {
        return CompletableFuture.completedFuture(r);
    }

    private static JsonNode jsonBody(String contentType, byte[] body, Set<String> fields) {
        if (body != null && body.length > MAX_BODY_BYTES) {
            throw new ApiError(413, "request body is larger than " + MAX_BODY_BYTES + " bytes");
        }
        if (contentType == null || !contentType.toLowerCase(Locale.ROOT).split(";")[0].trim()
                .equals("application/json")) {
            throw new ApiError(415, "request body must be application/json");
        }
        if (body == null || body.length == 0) {
            throw new ApiError(400, "request body is empty; expected a JSON object");
        }
        JsonNode node;
        try {
            node = Json.mapper().reader().with(
                    com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(body);
        } catch (IOException e) {
            throw new ApiError(400, "request body is not valid JSON: " + firstLine(e.getMessage()));
        }
        if (node == null || !node.isObject()) {
            throw new ApiError(400, "request body must be a JSON object");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!fields.contains(f)) {
                throw new ApiError(400, "unknown field '" + f + "' (expected: " + String.join(", ", fields) + ")");
            }
        }
        return node;
    }

    private static String requiredString(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            throw new ApiError(400, "field '" + field + "' is required");
        }
        if (!v.isTextual()) {
            throw new ApiError(400, "field '" + field + "' must be a string");
        }
        return v.asText();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** A request refused at the HTTP layer. */
    static final class ApiError extends RuntimeException {
        final int status;

        ApiError(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    static RestResponse toResponse(Throwable e) {
        Throwable t = RegistryStore.unwrap(e);
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
        log.error("Unexpected error serving bookie-clusters request", t);
        return RestResponse.error(500, "internal error: " + t);
    }

    /** Serialises a response body. */
    public static byte[] toJson(RestResponse r) {
        return Json.write(r.body());
    }

}
