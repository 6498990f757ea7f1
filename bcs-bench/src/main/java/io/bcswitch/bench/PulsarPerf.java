package io.bcswitch.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real {@code pulsar-perf produce}, started as a process of its own against one side's broker: figures operators
 * already know how to read, beside the bench's own. Its classpath is what module {@code bcs-bench-perf} resolved
 * (pulsar-testclient 4.0.8; its client talks to a 4.2 broker); where that module was not built, there is no
 * pulsar-perf and the scenario says so instead of failing.
 */
final class PulsarPerf {
    /** Where run-bench.sh and the build put pulsar-perf's classpath, unless this property names another file. */
    static final String CLASSPATH_PROPERTY = "bench.pulsarPerf.classpath";
    private static final Path DEFAULT_CLASSPATH = Path.of("bcs-bench-perf", "target", "classpath.txt");
    private static final Pattern LATENCY = Pattern.compile("Aggregated latency stats --- Latency: mean:\\s*([\\d.]+) "
            + "ms - med:\\s*([\\d.]+) - 95pct:\\s*([\\d.]+) - 99pct:\\s*([\\d.]+) - 99.9pct:\\s*([\\d.]+) .*Max:\\s*"
            + "([\\d.]+)");
    private static final Pattern THROUGHPUT = Pattern.compile("Aggregated throughput stats --- (\\d+) records sent "
            + "--- ([\\d.]+) msg/s");

    /** What one run printed at its end (latencies in milliseconds, from pulsar-perf's own histogram). */
    record Result(long sent, double messagesPerSecond, double p50, double p99, double p999, double max) {
    }

    private PulsarPerf() {
    }

    /** pulsar-perf's classpath, if it was built. */
    static Optional<String> classpath() {
        String given = System.getProperty(CLASSPATH_PROPERTY);
        List<Path> candidates = given != null ? List.of(Path.of(given))
                // from the top of the checkout (run-bench.sh) or from the bench module (its tests)
                : List.of(DEFAULT_CLASSPATH, Path.of("..").resolve(DEFAULT_CLASSPATH));
        for (Path p : candidates) {
            if (Files.isRegularFile(p)) {
                try {
                    String cp = Files.readString(p).strip();
                    if (!cp.isEmpty()) {
                        return Optional.of(cp);
                    }
                } catch (IOException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Publishes {@code rate} messages/s of {@code size} bytes to {@code topic} for {@code seconds} (after pulsar-perf's
     * own one-second warm-up), batching off.
     */
    static Result produce(String classpath, String serviceUrl, String topic, int rate, int size, int seconds)
            throws IOException, InterruptedException {
        Path conf = Files.createTempFile("pulsar-perf", ".conf");
        Path log = Files.createTempFile("pulsar-perf", ".log");
        Path logConfig = Files.createTempFile("pulsar-perf-log4j2", ".properties");
        try {
            // its summary lines are INFO log lines: without a configuration log4j prints errors only
            Files.writeString(logConfig, "appender.console.type = Console\nappender.console.name = out\n"
                    + "appender.console.layout.type = PatternLayout\nappender.console.layout.pattern = %m%n\n"
                    + "rootLogger.level = info\nrootLogger.appenderRef.out.ref = out\n");
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                    "-Dlog4j2.configurationFile=" + logConfig.toUri(),
                    "-cp", classpath, "org.apache.pulsar.testclient.PulsarPerfTestTool", conf.toString(), "produce",
                    "--service-url", serviceUrl, "--rate", Integer.toString(rate), "--size", Integer.toString(size),
                    "--test-duration", Integer.toString(seconds), "--warmup-time", "1", "--disable-batching", topic));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(seconds + 120L, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("pulsar-perf did not end within " + (seconds + 120) + " s");
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            Matcher l = LATENCY.matcher(out);
            Matcher t = THROUGHPUT.matcher(out);
            if (!l.find() || !t.find()) {
                throw new IllegalStateException("pulsar-perf (exit " + p.exitValue() + ") printed no aggregated "
                        + "stats; its last lines:\n" + tail(out));
            }
            return new Result(Long.parseLong(t.group(1)), Double.parseDouble(t.group(2)),
                    Double.parseDouble(l.group(2)), Double.parseDouble(l.group(4)), Double.parseDouble(l.group(5)),
                    Double.parseDouble(l.group(6)));
        } finally {
            Files.deleteIfExists(conf);
            Files.deleteIfExists(log);
            Files.deleteIfExists(logConfig);
        }
    }

    private static String tail(String out) {
        String[] lines = out.split("\n");
        return String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 15), lines.length));
    }
}
