package io.bcswitch.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The shipped alert rules and dashboard name only metrics the plugin serves, and the operator docs describe every
 * one it serves: a renamed metric cannot silently empty a panel or silence an alert.
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
}
