package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Plain HTTP calls to a broker's /admin/v2/bookie-clusters API, as curl would make them. */
public final class Rest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String base;
    private final String token;
    /** Sent as {@code X-Original-Principal}, as Pulsar's proxy does for the client it forwards (null: none). */
    private final String originalPrincipal;
    /** Told every call ("METHOD path") and its answer. */
    private final java.util.function.BiConsumer<String, Response> observer;
    /**
     * Whether drain, cleanup and verify say they can follow an operation ({@code Prefer: respond-async}) and a 202
     * they did not ask for is followed to the operation's end, as the admin client does.
     */
    private final boolean followOperations;

    /** A response: status and parsed JSON body. */
    public record Response(int status, JsonNode json, String raw) {
        public String error() {
            return json != null && json.has("error") ? json.get("error").asText() : null;
        }
    }

    public Rest(String webServiceUrl) {
        this(webServiceUrl, null);
    }

    /** Calls sending {@code Authorization: Bearer <token>} (null: no credentials). */
    public Rest(String webServiceUrl, String token) {
        this(webServiceUrl, token, null);
    }

    /** Calls as a proxy makes them: its own {@code token}, and the role of the client it forwards. */
    public Rest(String webServiceUrl, String token, String originalPrincipal) {
        this(webServiceUrl, token, originalPrincipal, (call, r) -> { });
    }

    private Rest(String webServiceUrl, String token, String originalPrincipal,
                 java.util.function.BiConsumer<String, Response> observer) {
        this(webServiceUrl, token, originalPrincipal, observer, false);
    }

    private Rest(String webServiceUrl, String token, String originalPrincipal,
                 java.util.function.BiConsumer<String, Response> observer, boolean followOperations) {
        this.base = webServiceUrl.replaceAll("/$", "") + "/admin/v2/bookie-clusters";
        this.token = token;
        this.originalPrincipal = originalPrincipal;
        this.observer = observer;
        this.followOperations = followOperations;
    }

    /** Calls without credentials whose every answer {@code observer} is told, with the call ("POST /switch"). */
    public static Rest observed(String webServiceUrl, java.util.function.BiConsumer<String, Response> observer) {
        return new Rest(webServiceUrl, null, null, observer);
    }

    /**
     * {@link #observed}, and with {@code followOperations} drain, cleanup and verify sent with
     * {@code Prefer: respond-async}: a 202 they did not ask for (the call became an operation) is followed until the
     * operation ends, and its stored answer is the call's answer.
     */
    public static Rest observed(String webServiceUrl, java.util.function.BiConsumer<String, Response> observer,
                                boolean followOperations) {
        return new Rest(webServiceUrl, null, null, observer, followOperations);
    }

    public Response get(String path) {
        return followed(path, send(preferring(path, HttpRequest.newBuilder(URI.create(base + path)).GET())));
    }

    public Response post(String path, String json) {
        return followed(path, send(preferring(path, HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)))));
    }

    private boolean followed(String path) {
        return followOperations && !path.contains("async=true")
                && (path.startsWith("/verify") || path.startsWith("/cleanup") || path.startsWith("/drain/"));
    }

    private HttpRequest.Builder preferring(String path, HttpRequest.Builder b) {
        return followed(path) ? b.header("Prefer", "respond-async") : b;
    }

    /**
     * {@code r}, or when it is the 202 of a call that became an operation, the operation's answer once it ended
     * (polled every 200 ms, 5 minutes at most). An operation LOST (its broker restarted) fails as the call would
     * have failed when its broker went away.
     */
    private Response followed(String path, Response r) {
        if (!followed(path) || r.status() != 202 || r.json() == null || !r.json().has("id")) {
            return r;
        }
        String id = r.json().get("id").asText();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (System.nanoTime() < deadline) {
            Response op = get("/operations/" + id);
            if (op.status() != 200) {
                return op;
            }
            String state = op.json().get("state").asText();
            if (state.equals("LOST")) {
                throw new IllegalStateException("operation " + id + " (" + path + ") was lost: its broker "
                        + op.json().get("broker").asText() + " stopped before it ended");
            }
            if (!state.equals("RUNNING")) {
                JsonNode result = op.json().get("result");
                Response answer = new Response(op.json().get("httpStatus").asInt(), result, String.valueOf(result));
                observer.accept("(operation " + id + ") " + path, answer);
                return answer;
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("operation " + id + " (" + path + ") still running after 5 minutes");
    }

    public Response request(String method, String path, String contentType, byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return send(b);
    }

    public Response register(String name, String uri) {
        return post("/" + name, "{\"metadataServiceUri\":\"" + uri + "\"}");
    }

    public Response switchTo(String target) {
        return post("/switch", "{\"target\":\"" + target + "\"}");
    }

    /**
     * Registers {@code name} (must succeed), switches to it (must succeed) and waits until every broker
     * has finished its cutover. Returns the switch response.
     */
    public Response registerAndSwitch(String name, String uri) {
        Response reg = register(name, uri);
        org.junit.jupiter.api.Assertions.assertEquals(200, reg.status(), reg.raw());
        awaitEveryBrokerRecorded();
        Response sw = switchTo(name);
        org.junit.jupiter.api.Assertions.assertEquals(200, sw.status(), sw.raw());
        awaitCutoverComplete();
        return sw;
    }

    /**
     * Waits (60 s at most) until every live broker has published its plugin record: a broker that has just
     * (re)started has none for a moment, and a switch is refused (409) while any live broker has none.
     */
    public void awaitEveryBrokerRecorded() {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    JsonNode without = status().get("brokersWithoutRecord");
                    return without != null && without.isEmpty();
                });
    }

    /** Waits (60 s at most) until status reports the latest switch applied by every broker. */
    public void awaitCutoverComplete() {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> status().get("cutoverComplete").asBoolean());
    }

    /**
     * Waits (60 s at most) until every live broker routes with the current relocation epoch: a broker that has just
     * (re)started publishes its record before it has applied the epoch, and verify names that until it has.
     */
    public void awaitRelocationsApplied() {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    JsonNode pending = status().get("relocationPendingBrokers");
                    return pending != null && pending.isEmpty();
                });
    }

    /** Waits (120 s at most) until the latest switch's migration has finished; returns its state. */
    public JsonNode awaitMigrationFinished() {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250))
                .until(() -> {
                    JsonNode m = status().get("migration");
                    return m != null && !m.isNull()
                            && io.bcswitch.registry.Phase.valueOf(m.get("phase").asText()).terminal();
                });
        return status().get("migration");
    }

    /** Whether {@code status} lists {@code broker} as having applied {@code epoch} and finished its cutover. */
    public static boolean brokerDoneAt(JsonNode status, String broker, long epoch) {
        for (JsonNode b : status.get("brokers")) {
            if (b.get("broker").asText().equals(broker)) {
                return b.get("appliedEpoch").asLong() == epoch && b.get("finishedAt").asLong() > 0;
            }
        }
        return false;
    }

    public JsonNode status() {
        Response r = get("/status");
        if (r.status() != 200) {
            throw new IllegalStateException("status: " + r.status() + " " + r.raw());
        }
        return r.json();
    }

    private Response send(HttpRequest.Builder b) {
        try {
            if (originalPrincipal != null) {
                b.header("X-Original-Principal", originalPrincipal);
            }
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            HttpRequest request = b.timeout(Duration.ofSeconds(90)).build();
            HttpResponse<String> resp = http.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            try {
                json = resp.body().isEmpty() ? null : MAPPER.readTree(resp.body());
            } catch (IOException e) {
                // not JSON: keep raw
            }
            Response r = new Response(resp.statusCode(), json, resp.body());
            observer.accept(request.method() + " " + request.uri().getPath().substring(
                    request.uri().getPath().indexOf("/bookie-clusters") + "/bookie-clusters".length())
                    + (request.uri().getQuery() != null ? "?" + request.uri().getQuery() : ""), r);
            return r;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
