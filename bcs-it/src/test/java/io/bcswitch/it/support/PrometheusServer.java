package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bcswitch.testkit.LocalServer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A real Prometheus server (the {@code prometheus} binary on the PATH, as Debian's package installs it) scraping
 * brokers' {@code /metrics} and evaluating rule files, queried through its HTTP API. Its data and log live in a
 * temporary directory removed at {@link #close()}, which also stops the process ({@link LocalServer}).
 */
public final class PrometheusServer implements AutoCloseable {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final LocalServer server;
    private final String url;

    private PrometheusServer(LocalServer server, String url) {
        this.server = server;
        this.url = url;
    }

    /** The {@code prometheus} binary on the PATH, if there is one. */
    public static Optional<Path> binary() {
        return LocalServer.binary("prometheus");
    }

    /**
     * Starts Prometheus scraping {@code targets} (host:port of brokers' web services) every {@code scrapeSeconds},
     * evaluating {@code ruleFile} every second; returns once it answers ready.
     */
    public static PrometheusServer start(Path binary, List<String> targets, Path ruleFile, int scrapeSeconds)
            throws Exception {
        int[] port = new int[1];
        LocalServer server = LocalServer.start("prometheus", 1, (dir, ports) -> {
            port[0] = ports[0];
            Files.copy(ruleFile, dir.resolve("rules.yaml"));
            String config = String.join("\n",
                    "global:",
                    "  scrape_interval: " + scrapeSeconds + "s",
                    "  scrape_timeout: " + scrapeSeconds + "s",
                    "  evaluation_interval: 1s",
                    "rule_files:",
                    "  - " + dir.resolve("rules.yaml"),
                    "scrape_configs:",
                    "  - job_name: broker",
                    "    metrics_path: /metrics/",
                    "    static_configs:",
                    "      - targets: [" + targets.stream().map(t -> "'" + t + "'").collect(Collectors.joining(", "))
                            + "]",
                    "");
            Files.writeString(dir.resolve("prometheus.yml"), config);
            return List.of(binary.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
                    "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + ports[0]);
        }, ports -> "http://127.0.0.1:" + ports[0] + "/-/ready");
        return new PrometheusServer(server, "http://127.0.0.1:" + port[0]);
    }

    /** {@code /api/v1/query}: the instant vector (or scalar) of {@code expr} now. */
    public JsonNode query(String expr) throws Exception {
        return api("/api/v1/query?query=" + enc(expr));
    }

    /** {@code /api/v1/query_range}: the series of {@code expr} between the two times (Unix seconds). */
    public JsonNode queryRange(String expr, double startSeconds, double endSeconds, int stepSeconds)
            throws Exception {
        return api("/api/v1/query_range?query=" + enc(expr) + "&start=" + startSeconds + "&end=" + endSeconds
                + "&step=" + stepSeconds);
    }

    /** {@code /api/v1/rules}: the rule groups as Prometheus evaluates them (health, last error). */
    public JsonNode rules() throws Exception {
        return api("/api/v1/rules");
    }

    /** {@code /api/v1/alerts}: the alerts pending or firing now. */
    public JsonNode alerts() throws Exception {
        return api("/api/v1/alerts");
    }

    /** {@code /api/v1/targets}: what each scrape target last answered. */
    public JsonNode targets() throws Exception {
        return api("/api/v1/targets");
    }

    /** The {@code data} of an API answer; fails on anything but status success. */
    private JsonNode api(String pathAndQuery) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url + pathAndQuery))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = MAPPER.readTree(r.body());
        if (r.statusCode() != 200 || !"success".equals(body.path("status").asText())) {
            throw new AssertionError("Prometheus answered " + r.statusCode() + " to " + pathAndQuery + ": " + r.body());
        }
        return body.get("data");
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** The server's log so far (for a failure's message). */
    public String logTail() {
        return server.logTail();
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
