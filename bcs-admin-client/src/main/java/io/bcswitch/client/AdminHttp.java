package io.bcswitch.client;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * The HTTP side of {@link BookieClustersAdmin}: builds each request (JSON body, credentials), sends it, decodes the
 * answer, and turns every failure into a {@link BookieClustersAdminException} with the HTTP status and the API's
 * reason, so that the typed calls of the public class stay one line each.
 */
final class AdminHttp implements AutoCloseable {
    // unknown fields are ignored: a newer broker may answer with fields this client does not know yet
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final URI base;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final Duration operationTimeout;
    private final Supplier<Map<String, String>> headers;
    private final PulsarAuthentication pulsarAuth;

    AdminHttp(URI base, HttpClient http, Duration requestTimeout, Duration operationTimeout,
              Supplier<Map<String, String>> headers, PulsarAuthentication pulsarAuth) {
        this.base = base;
        this.http = http;
        this.requestTimeout = requestTimeout;
        this.operationTimeout = operationTimeout;
        this.headers = headers;
        this.pulsarAuth = pulsarAuth;
    }

    /** The connection {@code b} describes: its URL, TLS, timeouts and credentials. */
    static AdminHttp connect(BookieClustersAdmin.Builder b) {
        String url = b.serviceUrl.endsWith("/") ? b.serviceUrl.substring(0, b.serviceUrl.length() - 1) : b.serviceUrl;
        URI base = URI.create(url + BookieClustersAdmin.BASE_PATH);
        PulsarAuthentication pulsarAuth = b.pulsarAuth;
        Supplier<Map<String, String>> given = b.headers;
        if (pulsarAuth != null) {
            String host = base.getHost();
            // before the HTTP client is built: the plugin's client certificate is part of its TLS context
            pulsarAuth.applyTls(b.tls, host);
            given = () -> {
                Map<String, String> all = pulsarAuth.headers(host);
                all.putAll(b.headers.get());
                return all;
            };
        }
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(b.connectTimeout);
        if (b.tls.configured()) {
            http.sslContext(b.tls.context());
        }
        return new AdminHttp(base, http.build(), b.requestTimeout, b.operationTimeout, given, pulsarAuth);
    }

    /** {@code s} as one path segment (a name may hold any character, a space included). */
    static String segment(String s) {
        Objects.requireNonNull(s, "name");
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Plain JSON view of any value the client returns. */
    static String toJson(Object value) {
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    <T> CompletableFuture<T> call(String method, String path, Map<String, ?> body, TypeReference<T> type) {
        // respond-async: a long call (drain, cleanup, verify) may answer 202 with the operation it continues as,
        // which this client follows (follow below); without it the broker keeps the call waiting
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + path)).timeout(requestTimeout)
                .header("Accept", "application/json").header("Prefer", "respond-async");
        try {
            headers.get().forEach(req::header);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new BookieClustersAdminException(0,
                    "cannot build authentication headers: " + e.getMessage(), e));
        }
        if (body != null) {
            byte[] json;
            try {
                json = MAPPER.writeValueAsBytes(body);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
            req.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofByteArray(json));
        } else {
            req.method(method, HttpRequest.BodyPublishers.noBody());
        }
        JavaType javaType = MAPPER.getTypeFactory().constructType(type);
        return http.sendAsync(req.build(), HttpResponse.BodyHandlers.ofByteArray())
                .handle((resp, e) -> {
                    if (e != null) {
                        Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                        throw new CompletionException(new BookieClustersAdminException(0, "cannot reach " + base
                                + ": " + (c.getMessage() != null ? c.getMessage() : c.toString()), c));
                    }
                    return resp;
                }).thenCompose(resp -> resp.statusCode() == 202 && !javaType.hasRawClass(Operation.class)
                        ? follow(AdminHttp.<Operation>decode(resp, MAPPER.constructType(Operation.class)), javaType)
                        : CompletableFuture.completedFuture(decode(resp, javaType)));
    }

    /** How often an operation a call became is asked whether it has ended. */
    static final Duration OPERATION_POLL = Duration.ofSeconds(1);
    /** Polls in a row that may fail (a broker restarting behind a proxy, say) before the call fails. */
    static final int POLL_FAILURES = 5;

    /**
     * The answer of a call that became an operation (202: the broker answers that way when a drain report, cleanup or
     * verify runs longer than its {@code operationAfterSeconds}): the operation is polled until it ends, and its
     * stored answer is what the call returns or fails with, as if it had been answered directly. Gives up, naming
     * the operation, after the client's operation timeout.
     */
    private <T> CompletableFuture<T> follow(Operation op, JavaType type) {
        return follow(op, type, System.nanoTime() + operationTimeout.toNanos(), 0);
    }

    private <T> CompletableFuture<T> follow(Operation op, JavaType type, long deadline, int failures) {
        if (op.running()) {
            if (System.nanoTime() > deadline) {
                return CompletableFuture.failedFuture(new BookieClustersAdminException(504, "operation " + op.id()
                        + " (what this call became when it ran long) is still running after " + operationTimeout
                        + "; follow it with GET /operations/" + op.id() + " (pulsar-admin bookie-clusters operation "
                        + op.id() + ")", null));
            }
            return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(
                    OPERATION_POLL.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).thenCompose(x ->
                    call("GET", "/operations/" + segment(op.id()), null, new TypeReference<Operation>() { }))
                    .handle((now, e) -> {
                        if (e == null) {
                            return this.<T>follow(now, type, deadline, 0);
                        }
                        Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                        int failed = c instanceof BookieClustersAdminException a ? a.status() : 0;
                        // 404 too: through a proxy the poll may reach a broker whose store has not seen the record yet
                        if ((failed == 0 || failed == 404 || failed >= 500) && failures + 1 < POLL_FAILURES) {
                            return this.<T>follow(op, type, deadline, failures + 1);
                        }
                        return CompletableFuture.<T>failedFuture(new BookieClustersAdminException(failed,
                                "following operation " + op.id() + " (what this call became when it ran long): "
                                + c.getMessage(), c));
                    }).thenCompose(f -> f);
        }
        int status = op.httpStatus() == null ? 0 : op.httpStatus();
        if ("LOST".equals(op.state())) {
            return CompletableFuture.failedFuture(new BookieClustersAdminException(503, "operation " + op.id()
                    + " (what this call became when it ran long) is LOST: the broker running it (" + op.broker()
                    + ") stopped before it ended; call again", null));
        }
        if (op.result() == null || op.result().isNull()) {
            return CompletableFuture.failedFuture(new BookieClustersAdminException(status == 0 ? 502 : status,
                    "operation " + op.id() + " ended " + op.state() + " (HTTP " + status + "), but the broker that "
                    + "answered gave no result (an older plugin version?): read GET /operations/" + op.id()
                    + " through another broker", null));
        }
        if (status / 100 != 2) {
            return CompletableFuture.failedFuture(new BookieClustersAdminException(status, op.result()
                    .hasNonNull("reason") ? op.result().get("reason").asText() : "HTTP " + status, null));
        }
        try {
            return CompletableFuture.completedFuture(MAPPER.readerFor(type).readValue(op.result()));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(new BookieClustersAdminException(status, "unexpected result of "
                    + "operation " + op.id() + ": " + e.getMessage(), e));
        }
    }

    private static <T> T decode(HttpResponse<byte[]> resp, JavaType type) {
        int status = resp.statusCode();
        if (status / 100 != 2) {
            throw new CompletionException(new BookieClustersAdminException(status, reason(status, resp.body()), null));
        }
        try {
            return MAPPER.readValue(resp.body(), type);
        } catch (IOException e) {
            throw new CompletionException(new BookieClustersAdminException(status,
                    "unexpected response body: " + e.getMessage(), e));
        }
    }

    /**
     * The API's {@code {"reason": "..."}} (from earlier versions {@code {"error": "..."}}), or for non-JSON answers
     * (e.g. the broker's own 401) the status.
     */
    private static String reason(int status, byte[] body) {
        try {
            JsonNode n = MAPPER.readTree(body);
            if (n != null && n.hasNonNull("reason")) {
                return n.get("reason").asText();
            }
            if (n != null && n.hasNonNull("error")) {
                return n.get("error").asText();
            }
        } catch (IOException e) {
            // not JSON
        }
        return switch (status) {
            case 401 -> "authentication required (HTTP 401): configure a token or other credentials";
            case 403 -> "not authorized (HTTP 403): the bookie-clusters API requires a super-user role";
            case 404 -> "not found (HTTP 404): is the bookie-clusters servlet installed on this broker?";
            default -> "HTTP " + status;
        };
    }

    /** Waits for {@code f}; whatever it failed with comes out as the exception of the blocking API. */
    static <T> T sync(CompletableFuture<T> f) throws BookieClustersAdminException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BookieClustersAdminException(0, "interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof CompletionException && c.getCause() != null) {
                c = c.getCause();
            }
            if (c instanceof BookieClustersAdminException a) {
                throw a;
            }
            throw new BookieClustersAdminException(0, String.valueOf(c), c);
        }
    }

    @Override
    public void close() {
        // the JDK HTTP client has no close before Java 21; its threads are daemons and idle out
        if (pulsarAuth != null) {
            pulsarAuth.close();
        }
    }
}
