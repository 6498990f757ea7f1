package io.bcswitch.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@link BookieClustersApi} serves, as data: every route with its parameters, request body and success status.
 * The OpenAPI document shipped in the distribution ({@code docs/openapi.json}) is generated from it; {@link #served()}
 * reads the same routes and parameters off the resource's JAX-RS annotations, and a test checks that the two are the
 * same, so the document cannot drift from what the resource serves.
 */
public final class ApiDescription {
    /** The API's version in the document; raised when a route or a body changes incompatibly. */
    static final String API_VERSION = "1";

    /** A path or query parameter. */
    public record Param(String name, String in, String type, String description) {
        static Param path(String name, String description) {
            return new Param(name, "path", "string", description);
        }

        static Param flag(String name, String description) {
            return new Param(name, "query", "boolean", description);
        }
    }

    /** One route below the base path; {@code body} names a request schema or is null. */
    public record Route(String method, String path, String summary, List<Param> params, String body, int success,
                        String response) {
    }

    private static final Param NAME = Param.path("name", "bookie cluster name");
    private static final Param ASYNC = Param.flag("async", "start it as an operation: 202 and the operation at once, "
            + "followed with GET /operations/{id}");

    public static final List<Route> ROUTES = List.of(
            new Route("GET", "/", "List the registered bookie clusters", List.of(), null, 200, "BookieClusters"),
            new Route("GET", "/status", "Active cluster, switch epoch, ledger-id ranges, each broker's cutover "
                    + "progress, the migration", List.of(), null, 200, "object"),
            new Route("GET", "/precheck/{name}", "Can the cluster become active?", List.of(NAME), null, 200,
                    "object"),
            new Route("POST", "/switch", "Make a registered cluster the active one", List.of(), "SwitchRequest", 200,
                    "object"),
            new Route("GET", "/{name}", "One registered bookie cluster", List.of(NAME), null, 200, "BookieCluster"),
            new Route("POST", "/{name}", "Register a bookie cluster as STANDBY", List.of(NAME), "RegisterRequest",
                    200, "BookieCluster"),
            new Route("DELETE", "/{name}", "Unregister a bookie cluster (refused while it is active or owns "
                    + "referenced ledgers)", List.of(NAME), null, 200, "BookieCluster"),
            new Route("POST", "/rollback", "Undo the latest switch inside the rollback window", List.of(), null, 200,
                    "object"),
            new Route("POST", "/read-mode", "PIP-477's read mode: DUAL_READ is what the system always does (each "
                    + "ledger is read from the cluster that holds it); the others are refused (409) with what to use "
                    + "instead", List.of(), "ReadModeRequest", 200, "object"),
            new Route("POST", "/migration/retry", "Run the latest switch's finished migration again", List.of(), null,
                    200, "object"),
            new Route("GET", "/drain/{name}", "What still pins a cluster, and when it can be switched off",
                    List.of(NAME, ASYNC), null, 200, "object"),
            new Route("GET", "/cleanup-targets", "Ledgers cleanup may delete now, on every cluster that is not "
                    + "active", List.of(), null, 200, "array"),
            new Route("GET", "/cleanup-targets/{name}", "Ledgers cleanup may delete now from one cluster",
                    List.of(NAME), null, 200, "array"),
            new Route("POST", "/cleanup", "Delete from an old cluster the ledgers nothing needs any more (dry run "
                    + "unless dryRun is false)", List.of(ASYNC), "CleanupRequest", 200, "object"),
            new Route("POST", "/close-client/{name}", "Retire a drained cluster: DEPRECATED, brokers close their "
                    + "clients", List.of(NAME), null, 200, "BookieCluster"),
            new Route("GET", "/verify", "Every violation of the plugin's invariants (read only)",
                    List.of(Param.flag("deep", "also compare every copy entry by entry"), ASYNC), null, 200,
                    "object"),
            new Route("GET", "/tuning", "The pacing settings: in use, broker.conf's, changed at run time", List.of(),
                    null, 200, "object"),
            new Route("POST", "/tuning", "Change the pacing settings while the system runs (null: back to "
                    + "broker.conf's)", List.of(), "TuningRequest", 200, "object"),
            new Route("GET", "/operations", "Operations started with async=true, newest first", List.of(), null, 200,
                    "Operations"),
            new Route("GET", "/operations/{id}", "One operation; once it ended, the synchronous call's status and "
                    + "body", List.of(Param.path("id", "operation id")), null, 200, "Operation"),
            new Route("GET", "/topics/{tenant}/{namespace}/{topic}", "Each ledger of a persistent topic with its "
                    + "owning cluster", List.of(Param.path("tenant", "tenant"), Param.path("namespace", "namespace"),
                    Param.path("topic", "topic")), null, 200, "object"));

    private ApiDescription() {
    }

    /**
     * Routes that exist only to give a word of the API the answer it would get as a cluster name (POST /status is a
     * registration refused because the name is reserved); they are not part of the API.
     */
    static final java.util.Set<String> NOT_DESCRIBED = java.util.Set.of("POST /status");

    /**
     * Each route the resource serves, read off its JAX-RS annotations, as "METHOD /path [parameters]" in the form
     * {@link #described()} gives.
     */
    public static java.util.SortedSet<String> served() {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        for (java.lang.reflect.Method m : BookieClustersApi.class.getMethods()) {
            String http = null;
            for (java.lang.annotation.Annotation a : m.getAnnotations()) {
                javax.ws.rs.HttpMethod h = a.annotationType().getAnnotation(javax.ws.rs.HttpMethod.class);
                if (h != null) {
                    http = h.value();
                }
            }
            if (http == null) {
                continue;
            }
            javax.ws.rs.Path path = m.getAnnotation(javax.ws.rs.Path.class);
            // the topic route takes the rest of the path as one parameter, to answer a malformed one itself
            String p = "/" + (path == null ? "" : path.value().replace("topics{rest: (/.*)?}",
                    "topics/{tenant}/{namespace}/{topic}"));
            java.util.List<String> params = new java.util.ArrayList<>();
            for (java.lang.reflect.Parameter param : m.getParameters()) {
                javax.ws.rs.PathParam pp = param.getAnnotation(javax.ws.rs.PathParam.class);
                javax.ws.rs.QueryParam qp = param.getAnnotation(javax.ws.rs.QueryParam.class);
                if (pp != null && !pp.value().equals("rest")) {
                    params.add(pp.value());
                } else if (qp != null) {
                    params.add(qp.value());
                }
            }
            if (p.contains("{tenant}")) {
                params.addAll(List.of("tenant", "namespace", "topic"));
            }
            String route = http + " " + p;
            if (!NOT_DESCRIBED.contains(route)) {
                out.add(route + " " + new java.util.TreeSet<>(params));
            }
        }
        return out;
    }

    /** Each described route as "METHOD /path [parameters]". */
    public static java.util.SortedSet<String> described() {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        for (Route r : ROUTES) {
            out.add(r.method() + " " + r.path() + " "
                    + new java.util.TreeSet<>(r.params().stream().map(Param::name).toList()));
        }
        return out;
    }

    /** The OpenAPI 3.0 document of the API under {@code basePath}. */
    public static ObjectNode openApi(String basePath) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode doc = f.objectNode();
        doc.put("openapi", "3.0.3");
        ObjectNode info = doc.putObject("info");
        info.put("title", "Bookie cluster switch");
        info.put("description", "Switch a Pulsar cluster to another BookKeeper cluster, migrate its metadata ledgers, "
                + "roll back, drain and retire the old cluster. Every endpoint requires a super-user when the broker "
                + "has authorization on. Errors answer {\"reason\": ...}.");
        info.put("version", API_VERSION);
        doc.putArray("servers").addObject().put("url", basePath);
        Map<String, ObjectNode> paths = new TreeMap<>();
        for (Route r : ROUTES) {
            ObjectNode item = paths.computeIfAbsent(r.path(), p -> f.objectNode());
            ObjectNode op = item.putObject(r.method().toLowerCase(java.util.Locale.ROOT));
            op.put("summary", r.summary());
            op.put("operationId", operationId(r));
            if (!r.params().isEmpty()) {
                ArrayNode params = op.putArray("parameters");
                for (Param p : r.params()) {
                    ObjectNode n = params.addObject();
                    n.put("name", p.name());
                    n.put("in", p.in());
                    n.put("required", p.in().equals("path"));
                    n.put("description", p.description());
                    n.putObject("schema").put("type", p.type());
                }
            }
            if (r.body() != null) {
                ObjectNode body = op.putObject("requestBody");
                body.put("required", true);
                body.putObject("content").putObject("application/json").putObject("schema")
                        .put("$ref", "#/components/schemas/" + r.body());
            }
            ObjectNode responses = op.putObject("responses");
            responses.set(Integer.toString(r.success()), response(f, "success", r.response()));
            if (r.params().contains(ASYNC)) {
                responses.set("202", response(f, "started as an operation (async=true), or, asked with the header "
                        + "Prefer: respond-async, still running after the broker's operationAfterSeconds: follow it "
                        + "with GET /operations/{id}", "Operation"));
            }
            responses.set("default", response(f, "an error: 400 bad input, 401/403 not a super-user, 404 unknown, 405, "
                    + "409 refused, 413/415 body, 503 unavailable", "Error"));
        }
        ObjectNode p = doc.putObject("paths");
        paths.forEach(p::set);
        doc.putObject("components").set("schemas", schemas(f));
        return doc;
    }

    private static String operationId(Route r) {
        StringBuilder id = new StringBuilder(r.method().toLowerCase(java.util.Locale.ROOT));
        for (String part : r.path().split("[/{}-]")) {
            if (!part.isEmpty()) {
                id.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
            }
        }
        return id.length() == r.method().length() ? id + "List" : id.toString();
    }

    private static ObjectNode response(JsonNodeFactory f, String description, String schema) {
        ObjectNode n = f.objectNode();
        n.put("description", description);
        ObjectNode s = n.putObject("content").putObject("application/json").putObject("schema");
        if (schema.equals("object") || schema.equals("array")) {
            s.put("type", schema);
        } else {
            s.put("$ref", "#/components/schemas/" + schema);
        }
        return n;
    }

    private static ObjectNode schemas(JsonNodeFactory f) {
        ObjectNode s = f.objectNode();
        object(s.putObject("Error"), Map.of("reason", "string", "error", "string"), List.of("reason"));
        object(s.putObject("BookieCluster"), Map.of("name", "string", "metadataServiceUri", "string", "status",
                "string", "registeredAt", "integer"), List.of("name", "metadataServiceUri", "status"));
        s.putObject("BookieClusters").put("type", "array").putObject("items")
                .put("$ref", "#/components/schemas/BookieCluster");
        object(s.putObject("RegisterRequest"), Map.of("metadataServiceUri", "string", "name", "string", "status",
                "string"), List.of("metadataServiceUri"));
        object(s.putObject("ReadModeRequest"), Map.of("mode", "string"), List.of("mode"));
        object(s.putObject("SwitchRequest"), Map.of("target", "string", "allowUnknownSourceIds", "boolean"),
                List.of("target"));
        object(s.putObject("CleanupRequest"), Map.of("srcCluster", "string", "dryRun", "boolean", "maxDeletions",
                "integer", "force", "boolean"), List.of("srcCluster"));
        object(s.putObject("TuningRequest"), Map.of("migrationBytesPerSecond", "integer", "migrationConcurrency",
                "integer", "cutoverTopicsPerSecond", "number"), List.of());
        object(s.putObject("Operation"), Map.of("id", "string", "operation", "string", "parameters", "object",
                "broker", "string", "state", "string", "startedAt", "integer", "finishedAt", "integer", "httpStatus",
                "integer", "result", "object"), List.of("id", "operation", "state"));
        s.putObject("Operations").put("type", "array").putObject("items")
                .put("$ref", "#/components/schemas/Operation");
        return s;
    }

    private static void object(ObjectNode schema, Map<String, String> fields, List<String> required) {
        schema.put("type", "object");
        ObjectNode props = schema.putObject("properties");
        new TreeMap<>(fields).forEach((name, type) -> props.putObject(name).put("type", type));
        if (!required.isEmpty()) {
            ArrayNode r = schema.putArray("required");
            required.forEach(r::add);
        }
    }
}
