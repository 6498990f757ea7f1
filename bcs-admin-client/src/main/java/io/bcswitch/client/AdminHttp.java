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
    private final Supplier<Map<String, String>> headers;
    private final PulsarAuthentication pulsarAuth;

    AdminHttp(URI base, HttpClient http, Duration requestTimeout, Supplier<Map<String, String>> headers,
              PulsarAuthentication pulsarAuth) {
        this.base = base;
        this.http = http;
        this.requestTimeout = requestTimeout;
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
        return new AdminHttp(base, http.build(), b.requestTimeout, given, pulsarAuth);
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
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + path)).timeout(requestTimeout)
                .header("Accept", "application/json");
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
                    return decode(resp, javaType);
                });
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
