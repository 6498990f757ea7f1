package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bcswitch.testkit.Ports;
import io.bcswitch.testkit.TempDirs;
import java.io.File;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Prometheus server (the {@code prometheus} binary on the PATH, as Debian's package installs it) scraping
 * brokers' {@code /metrics} and evaluating rule files, queried through its HTTP API. Its data and log live in a
 * temporary directory removed at {@link #close()}, which also stops the process (a JVM that exits stops it through a
 * shutdown hook; one killed with {@code kill -9} leaves it running).
 */
public final class PrometheusServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PrometheusServer.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Process process;
    private final Path dir;
    private final Ports ports;
    private final String url;
    private final Thread killer;

    private PrometheusServer(Process process, Path dir, Ports ports, String url) {
        this.process = process;
        this.dir = dir;
        this.ports = ports;
        this.url = url;
        this.killer = new Thread(process::destroyForcibly, "prometheus-killer");
        Runtime.getRuntime().addShutdownHook(killer);
    }

    /** The {@code prometheus} binary on the PATH, if there is one. */
    public static Optional<Path> binary() {
        String path = System.getenv().getOrDefault("PATH", "");
        return java.util.Arrays.stream(path.split(File.pathSeparator)).filter(d -> !d.isEmpty())
                .map(d -> Path.of(d, "prometheus")).filter(Files::isExecutable).findFirst();
    }

    /**
     * Starts Prometheus scraping {@code targets} (host:port of brokers' web services) every {@code scrapeSeconds},
     * evaluating {@code ruleFile} every second; returns once it answers ready.
     */
    public static PrometheusServer start(Path binary, List<String> targets, Path ruleFile, int scrapeSeconds)
            throws Exception {
        Path dir = Files.createTempDirectory("bcs-prometheus-");
        Ports ports = Ports.reserve();
        Process p = null;
        PrometheusServer server = null;
        try {
            int port = ports.take(1)[0];
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
            p = new ProcessBuilder(binary.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
                    "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
                    .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
            server = new PrometheusServer(p, dir, ports, "http://127.0.0.1:" + port);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!server.ready()) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("Prometheus did not start: " + server.logTail());
                }
                Thread.sleep(200);
            }
            log.info("Prometheus {} scrapes {} every {} s (config and data in {})", server.url, targets,
                    scrapeSeconds, dir);
            return server;
        } catch (Exception | Error e) {
            try {
                if (server != null) {
                    server.close();
                } else {
                    if (p != null) {
                        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                    ports.close();
                    deleteQuietly(dir);
                }
            } catch (Exception | Error cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private static void deleteQuietly(Path dir) {
        try {
            TempDirs.deleteRecursively(dir);
        } catch (Exception e) {
            log.warn("Could not remove Prometheus's directory {}: {}", dir, e.toString());
        }
    }

    private boolean ready() {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url + "/-/ready")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (Exception e) {
            return false;
        }
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
        try {
            List<String> lines = Files.readAllLines(dir.resolve("prometheus.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (Exception e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws Exception {
        try {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
            ports.close();
            deleteQuietly(dir);
        }
    }
}
