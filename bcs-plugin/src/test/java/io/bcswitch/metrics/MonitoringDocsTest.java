package io.bcswitch.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped alert rules and dashboard name only metrics the plugin serves, and the operator docs describe every
 * one it serves: a renamed metric cannot silently empty a panel or silence an alert. The rules also pass
 * Prometheus's own checker and their unit tests (docs/monitoring/alerts.test.yaml), and those tests see every rule
 * both fire and stay silent.
 */
class MonitoringDocsTest {
    private static final Path DOCS = Path.of("..", "docs");
    private static final Pattern NAME = Pattern.compile("pulsar_bookie_switch_[a-z_]+");

    private static Set<String> namesIn(Path file) throws Exception {
        Set<String> names = new TreeSet<>();
        Matcher m = NAME.matcher(Files.readString(file));
        while (m.find()) {
            // a summary's samples are its family name plus _count or _sum
            names.add(m.group().replaceFirst("^(" + MetricNames.CLIENT_OP_SECONDS + ")_(count|sum)$", "$1"));
        }
        return names;
    }

    @Test
    void alertsAndDashboardUseOnlyServedMetricsAndTheDocsDescribeEveryOne() throws Exception {
        Set<String> served = new TreeSet<>(MetricNames.ALL);
        Set<String> alerts = namesIn(DOCS.resolve("monitoring/alerts.yaml"));
        Set<String> dashboard = namesIn(DOCS.resolve("monitoring/grafana-dashboard.json"));
        assertTrue(served.containsAll(alerts), "alerts name unknown metrics: " + alerts);
        assertTrue(served.containsAll(dashboard), "the dashboard names unknown metrics: " + dashboard);
        assertEquals(served, dashboard, "the dashboard shows every metric");
        Set<String> documented = namesIn(DOCS.resolve("operations.md"));
        assertEquals(served, documented, "docs/operations.md describes exactly the metrics served");
        // the dashboard is JSON Grafana can import
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(DOCS.resolve("monitoring/grafana-dashboard.json")
                .toFile());
    }

    private static final Path RULES = DOCS.resolve("monitoring/alerts.yaml");
    private static final Path RULE_TESTS = DOCS.resolve("monitoring/alerts.test.yaml");

    @Test
    void prometheusAcceptsTheRulesAndTheirTestsPass() throws Exception {
        String promtool = promtool();
        Run check = run(promtool, "check", "rules", RULES.toString());
        assertEquals(0, check.exit(), check.output());
        Run tests = run(promtool, "test", "rules", RULE_TESTS.toString());
        assertEquals(0, tests.exit(), tests.output());
    }

    /**
     * Each rule in turn made to never fire, then to fire always, then (where it has one) to fire without waiting for
     * its {@code for:}: the tests must fail every time, so no rule is left without a test that expects it, one that
     * expects silence and one that expects the wait (a new rule needs all three).
     */
    @Test
    void theTestsSeeEveryRuleFireAndStaySilent(@TempDir Path dir) throws Exception {
        String promtool = promtool();
        String rules = Files.readString(RULES);
        // one block per rule: from its "- alert:" line to the next
        String[] blocks = rules.split("(?m)^(?=      - alert: )");
        assertTrue(blocks.length > 10, "rules found: " + (blocks.length - 1));
        List<String[]> mutants = new ArrayList<>();
        for (int i = 1; i < blocks.length; i++) {
            String name = blocks[i].replaceFirst("(?s)^\\s*- alert: (\\w+).*", "$1");
            for (String[] mutant : new String[][] {{"never fires", "vector(1) == 2"}, {"always fires", "vector(1)"}}) {
                String[] copy = blocks.clone();
                copy[i] = blocks[i].replaceFirst("(?m)^(        expr: ).*$", "$1" + mutant[1]);
                assertTrue(!copy[i].equals(blocks[i]), "no expr in " + name);
                mutants.add(new String[] {name + " (" + mutant[0] + ")", String.join("", copy)});
            }
            if (blocks[i].contains("\n        for: ")) {
                // and one that fires as soon as its expression holds: some test must expect the wait
                String[] copy = blocks.clone();
                copy[i] = blocks[i].replaceFirst("(?m)^        for: .*\n", "");
                mutants.add(new String[] {name + " (without its for:)", String.join("", copy)});
            }
        }
        // each in a directory of its own, two at a time (a run of the tests takes about a second)
        List<String> survivors = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            List<java.util.concurrent.Future<?>> runs = new ArrayList<>();
            for (int m = 0; m < mutants.size(); m++) {
                Path d = Files.createDirectories(dir.resolve("mutant-" + m));
                Files.copy(RULE_TESTS, d.resolve("alerts.test.yaml"));
                Files.writeString(d.resolve("alerts.yaml"), mutants.get(m)[1]);
                String label = mutants.get(m)[0];
                runs.add(pool.submit(() -> {
                    if (run(promtool, "test", "rules", d.resolve("alerts.test.yaml").toString()).exit() == 0) {
                        survivors.add(label);
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> r : runs) {
                r.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(List.of(), List.copyOf(survivors), "rules whose tests pass whatever the rule says");
    }

    private record Run(int exit, String output) {
    }

    private static Run run(String... command) throws Exception {
        Path out = Files.createTempFile("promtool-", ".out");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool did not end within 60 s: " + String.join(" ", command));
            return new Run(p.exitValue(), Files.readString(out));
        } finally {
            p.destroyForcibly();
            Files.deleteIfExists(out);
        }
    }

    /** Prometheus's promtool from the PATH, or this test is skipped saying why (CI installs it: .ci/run). */
    private static String promtool() {
        String path = System.getenv().getOrDefault("PATH", "");
        Optional<Path> found = java.util.Arrays.stream(path.split(File.pathSeparator)).filter(d -> !d.isEmpty())
                .map(d -> Path.of(d, "promtool")).filter(Files::isExecutable).findFirst();
        assumeTrue(found.isPresent(), "promtool is not installed (Debian and Ubuntu: apt-get install prometheus): "
                + "the alert rules were not checked by Prometheus");
        return found.get().toString();
    }
}
