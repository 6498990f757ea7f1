package io.bcswitch.launcher;

import io.bcswitch.registry.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Minimal client for the plugin's REST API under {@code /admin/v2/bookie-clusters}. */
final class Rest {

    static final String BASE_PATH = "/admin/v2/bookie-clusters";

    private final String base;
    private final HttpClient http = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    Rest(String webServiceUrl) {
        this.base = webServiceUrl + BASE_PATH;
    }

    String url(String path) {
        return base + path;
    }

    /** One answer: HTTP status, body and how long the call took. */
    record Reply(String method, String path, int status, String body, long nanos) {

        boolean ok() {
            return status >= 200 && status < 300;
        }

        double millis() {
            return nanos / 1e6;
        }

        /** The body parsed as {@code type}, or null when it is not one. */
        <T> T as(Class<T> type) {
            try {
                return Json.mapper().readValue(body, type);
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }

        /** The body on one line, cut to {@code max} characters. */
        String compact(int max) {
            String s = body == null ? "" : body.replaceAll("\\s*\\n\\s*", " ").trim();
            return s.length() <= max ? s : s.substring(0, max) + "... (" + s.length() + " chars)";
        }

        @Override
        public String toString() {
            return String.format("%s %s -> HTTP %d in %.0f ms", method, path, status, millis());
        }
    }

    Reply get(String path) throws IOException, InterruptedException {
        return send("GET", path, HttpRequest.newBuilder(URI.create(url(path))).GET());
    }

    Reply post(String path, String json) throws IOException, InterruptedException {
        return send("POST", path, HttpRequest.newBuilder(URI.create(url(path)))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)));
    }

    private Reply send(String method, String path, HttpRequest.Builder request)
            throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        HttpResponse<String> response = http.send(request.timeout(Duration.ofSeconds(90)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        return new Reply(method, path, response.statusCode(), response.body(), System.nanoTime() - t0);
    }
}
