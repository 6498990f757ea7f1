package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

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
        this.base = webServiceUrl.replaceAll("/$", "") + "/admin/v2/bookie-clusters";
        this.token = token;
        this.originalPrincipal = originalPrincipal;
        this.observer = observer;
    }

    /** Calls without credentials whose every answer {@code observer} is told, with the call ("POST /switch"). */
    public static Rest observed(String webServiceUrl, java.util.function.BiConsumer<String, Response> observer) {
        return new Rest(webServiceUrl, null, null, observer);
    }

    public Response get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    public Response post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
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
