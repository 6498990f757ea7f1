package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.PrometheusServer;
import io.bcswitch.it.support.Rest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shipped alert rules and Grafana dashboard against a real Prometheus (Debian's {@code prometheus}) scraping two
 * brokers' {@code /metrics} through a life of a switch: a broker restarted without the plugin, a switch while the
 * other broker is cut off the metadata store, the migration, a drain report, the old cluster's bookies stopped while
 * a reader reads what they hold, and a rollback. Prometheus loads every rule and evaluates it without error; every
 * panel query of the dashboard returns data at some point of the run; and the alerts the run provokes become
 * pending in Prometheus's own rule evaluation (their {@code for:} is minutes, which promtool's tests cover:
 * docs/monitoring/alerts.test.yaml). Skipped, saying so, where Prometheus is not installed.
 */
class PrometheusMonitoringTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(PrometheusMonitoringTest.class);
    private static final Path MONITORING = Path.of("..", "docs", "monitoring");
    /** Every 2 s, answers within 2 s: a broker's /metrics can take a second on a busy two-core machine. */
    private static final int SCRAPE_SECONDS = 2;
    /** Longer than any wait below, so that broker 1's session outlives its cut-off. */
    private static final long SESSION_TIMEOUT_MILLIS = 45_000;
    private static PrometheusServer prometheus;

    @BeforeAll
    static void start() throws Exception {
        Optional<Path> binary = PrometheusServer.binary();
        assumeTrue(binary.isPresent(), "prometheus is not installed (Debian and Ubuntu: apt-get install prometheus):"
                + " the dashboard and the alert rules were not tried on scraped data");
        cluster = twoBookieClusters()
                .brokers(2)
                .pausableMetadataLinks()
                // the cut-off below lasts well under this
                .brokerConfig(p -> p.setProperty("metadataStoreSessionTimeoutMillis",
                        Long.toString(SESSION_TIMEOUT_MILLIS)))
                .start();
        prometheus = PrometheusServer.start(binary.get(), List.of(hostPort(0), hostPort(1)),
                MONITORING.resolve("alerts.yaml"), SCRAPE_SECONDS);
    }

    @AfterAll
    static void stopPrometheus() throws Exception {
        if (prometheus != null) {
            prometheus.close();
            prometheus = null;
        }
    }

    private static String hostPort(int broker) {
        return cluster.broker(broker).webServiceUrl().replaceFirst("^http://", "");
    }

    @Test
    void everyPanelHasDataAndTheAlertsOfTheRunFire() throws Exception {
        double start = System.currentTimeMillis() / 1000.0;
        String ns = cluster.createTenant("monitoring");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        // schema ledgers for the migration to copy
        SchemaTopics.create(client, ns, 3);
        String topic = "persistent://" + ns + "/data";
        List<String> sent = new ArrayList<>();
        Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
        send(producer, sent, "a", 20);
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());

        // a broker without the plugin (before any switch, where it does no harm)
        cluster.broker(1).restart(false);
        awaitPending("BookieSwitchBrokerWithoutPlugin", Map.of(), Duration.ofSeconds(90));
        walkthrough.step("A broker restarted without the plugin (a stale image, a broker.conf without it)",
                "max by (cluster) (pulsar_bookie_switch_brokers_without_plugin)",
                "ALERTS{alertname=\"BookieSwitchBrokerWithoutPlugin\"}");
        cluster.broker(1).restart(true);
        rest.awaitEveryBrokerRecorded();

        // a switch while broker 1 is cut off the metadata store: it stays on the previous epoch meanwhile
        assertEquals(200, rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri())
                .status());
        rest.awaitEveryBrokerRecorded();
        cluster.broker(1).metadataLink().pause();
        try {
            Rest.Response sw = rest.switchTo("cluster-b");
            assertEquals(200, sw.status(), sw.raw());
            // well within broker 1's session: a cut-off past it would be a different test
            awaitPending("BookieSwitchBrokersOnDifferentEpochs", Map.of(),
                    Duration.ofMillis(SESSION_TIMEOUT_MILLIS / 2));
            walkthrough.step("A switch while one broker is cut off from the metadata store: it stays on the previous "
                            + "epoch until it is back",
                    "pulsar_bookie_switch_epoch",
                    "ALERTS{alertname=\"BookieSwitchBrokersOnDifferentEpochs\"}");
        } finally {
            cluster.broker(1).metadataLink().resume();
        }
        rest.awaitCutoverComplete();
        JsonNode migration = rest.awaitMigrationFinished();
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        send(producer, sent, "b", 20);
        assertEquals(200, rest.get("/drain/cluster-a").status());
        // every broker's view of the migration reaches DONE (each refreshes it from the registry every 2 s)
        await("every broker sees the migration DONE").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    JsonNode phases = prometheus.query("count by (phase) (pulsar_bookie_switch_migration_phase == 1)")
                            .get("result");
                    return phases.size() == 1 && "DONE".equals(phases.get(0).get("metric").path("phase").asText())
                            && phases.get(0).get("value").get(1).asInt() == 2;
                });
        walkthrough.step("The migration done, and a drain report of the old cluster made",
                "pulsar_bookie_switch_migration_phase == 1",
                "max by (bookie_cluster, state) (pulsar_bookie_switch_migration_plan_ledgers)",
                "sum by (bookie_cluster, outcome) (pulsar_bookie_switch_migration_ledgers_total)",
                "max by (bookie_cluster) (pulsar_bookie_switch_drain_ledgers)",
                "max by (bookie_cluster) (pulsar_bookie_switch_rollback_window_seconds)");

        // the old cluster's bookies stopped while a reader reads what they hold: its client operations fail there
        cluster.bookieCluster("cluster-a").stopBookies();
        List<String> read = new ArrayList<>();
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).startMessageId(MessageId.earliest)
                .create()) {
            CompletableFuture<Message<String>> first = reader.readNextAsync();
            try {
                awaitPending("BookieSwitchClientErrors", Map.of("bookie_cluster", "cluster-a"),
                        Duration.ofSeconds(90));
                walkthrough.step("The old cluster's bookies stopped while a reader reads data they hold",
                        "sum by (cluster, bookie_cluster, op) "
                                + "(rate(pulsar_bookie_switch_client_op_seconds_count{outcome=\"failure\"}[5m])) > 0",
                        "ALERTS{alertname=\"BookieSwitchClientErrors\"}");
            } finally {
                cluster.bookieCluster("cluster-a").startBookies();
            }
            // Pulsar retries a failed read after a back-off that grows to a minute
            read.add(first.get(180, TimeUnit.SECONDS).getValue());
            while (read.size() < sent.size()) {
                Message<String> m = reader.readNext(60, TimeUnit.SECONDS);
                assertNotNull(m, "read " + read.size() + " of " + sent.size());
                read.add(m.getValue());
            }
        }
        assertEquals(sent, read, "every message, in order, once the bookies are back");

        // a rollback
        Rest.Response rb = rest.post("/rollback", "");
        assertEquals(200, rb.status(), rb.raw());
        rest.awaitCutoverComplete();
        send(producer, sent, "c", 20);
        producer.close();
        assertEquals(sent, readAll(client, topic), "every message, in order, after the rollback");
        await("the rollback scraped").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() ->
                !prometheus.query("pulsar_bookie_switch_rollbacks_total > 0").get("result").isEmpty());
        walkthrough.step("After a rollback",
                "pulsar_bookie_switch_rollbacks_total > 0",
                "max by (bookie_cluster) (pulsar_bookie_switch_epoch)");
        walkthrough.write(Path.of("target", "monitoring-walkthrough.md"));
        // the walkthrough in the operator docs asks exactly these queries (its answers are copied from that file)
        String operations = Files.readString(MONITORING.getParent().resolve("operations.md"));
        assertEquals(List.of(), walkthrough.queries().stream().filter(q -> !operations.contains(q)).toList(),
                "queries of the run missing from docs/operations.md's monitoring walkthrough");
        double end = System.currentTimeMillis() / 1000.0 + 1;

        // every panel of the dashboard had data at some point of the run, as Grafana would ask for it
        Map<String, String> panels = panelQueries();
        List<String> withoutData = new ArrayList<>();
        for (Map.Entry<String, String> p : panels.entrySet()) {
            String expr = p.getValue().replace("$cluster", ".+");
            JsonNode result = prometheus.queryRange(expr, start, end, 1).get("result");
            log.info("PANEL {}: {} series over the run ({})", p.getKey(), result.size(), expr);
            if (result.isEmpty()) {
                withoutData.add(p.getKey() + ": " + expr);
            }
        }
        assertTrue(panels.size() >= 18, "the dashboard's queries: " + panels);
        assertEquals(List.of(), withoutData, "panels with no data over a whole switch, migration and rollback");
        // the dashboard's cluster variable lists the Pulsar cluster
        assertEquals(1, prometheus.query("count by (cluster) (pulsar_bookie_switch_epoch)").get("result").size());

        // Prometheus loaded every rule of the file and evaluates each without error
        List<String> rules = new ArrayList<>();
        List<String> unhealthy = new ArrayList<>();
        for (JsonNode g : prometheus.rules().get("groups")) {
            for (JsonNode r : g.get("rules")) {
                rules.add(r.get("name").asText());
                if (!"ok".equals(r.path("health").asText())) {
                    unhealthy.add(r.get("name").asText() + ": " + r.path("health").asText() + " "
                            + r.path("lastError").asText());
                }
            }
        }
        assertEquals(alertNames(), rules, "the rules Prometheus loaded");
        assertEquals(List.of(), unhealthy, "rules Prometheus could not evaluate");
        // both brokers are scraped at the end (a scrape that timed out on a busy machine is retried every 2 s)
        await("both brokers scraped").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            JsonNode targets = prometheus.targets().get("activeTargets");
            int up = 0;
            for (JsonNode t : targets) {
                up += "up".equals(t.get("health").asText()) ? 1 : 0;
            }
            return targets.size() == 2 && up == 2;
        });
    }

    private final Walkthrough walkthrough = new Walkthrough();

    /**
     * What Prometheus answers at each step of the run, written as the operator docs show it: each query once it has an
     * answer (every query asked must get one within 30 s), its series in Prometheus's console form.
     */
    private static final class Walkthrough {
        private final StringBuilder text = new StringBuilder();
        private final List<String> queries = new ArrayList<>();

        void step(String title, String... exprs) {
            text.append("\n**").append(title).append("**\n\n```\n");
            for (String expr : exprs) {
                queries.add(expr);
                JsonNode[] result = new JsonNode[1];
                await(expr).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
                    result[0] = prometheus.query(expr).get("result");
                    return !result[0].isEmpty();
                });
                text.append("> ").append(expr).append('\n');
                for (JsonNode series : result[0]) {
                    text.append(console(series)).append('\n');
                }
            }
            text.append("```\n");
        }

        /** A series as Prometheus's console shows it: {@code name{label="value", ...} value}. */
        private static String console(JsonNode series) {
            JsonNode metric = series.get("metric");
            StringBuilder b = new StringBuilder(metric.path("__name__").asText(""));
            List<String> labels = new ArrayList<>();
            metric.fields().forEachRemaining(e -> {
                if (!e.getKey().equals("__name__")) {
                    labels.add(e.getKey() + "=\"" + e.getValue().asText() + "\"");
                }
            });
            b.append('{').append(String.join(", ", labels)).append("} ");
            String value = series.get("value").get(1).asText();
            try {
                double v = Double.parseDouble(value);
                b.append(v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v)
                        : String.format(java.util.Locale.ROOT, "%.4g", v));
            } catch (NumberFormatException e) {
                b.append(value);
            }
            return b.toString();
        }

        List<String> queries() {
            return queries;
        }

        void write(Path file) throws java.io.IOException {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, text.toString());
            log.info("Monitoring walkthrough (Prometheus's answers during the run) written to {}", file.toAbsolutePath());
        }
    }

    /**
     * Waits until Prometheus's own evaluation of the loaded rules has alert {@code name} pending or firing with
     * {@code labels}: the rule's expression sees the trouble in the scraped series.
     */
    private static void awaitPending(String name, Map<String, String> labels, Duration atMost) {
        JsonNode[] last = new JsonNode[1];
        try {
            await(name).atMost(atMost).pollInterval(Duration.ofMillis(500)).until(() -> {
                last[0] = prometheus.alerts().get("alerts");
                for (JsonNode a : last[0]) {
                    JsonNode l = a.get("labels");
                    if (name.equals(l.path("alertname").asText()) && labels.entrySet().stream()
                            .allMatch(e -> e.getValue().equals(l.path(e.getKey()).asText()))) {
                        log.info("ALERT {} {} in Prometheus: {}", name, a.get("state").asText(), a);
                        return true;
                    }
                }
                return false;
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(name + labels + " never pending; alerts: " + last[0] + "\nPrometheus log:\n"
                    + prometheus.logTail(), e);
        }
    }

    private static void send(Producer<String> producer, List<String> sent, String prefix, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            String m = prefix + i;
            producer.send(m);
            sent.add(m);
        }
    }

    private static List<String> readAll(PulsarClient client, String topic) throws Exception {
        List<String> read = new ArrayList<>();
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).startMessageId(MessageId.earliest)
                .create()) {
            while (reader.hasMessageAvailable()) {
                read.add(reader.readNext(30, TimeUnit.SECONDS).getValue());
            }
        }
        return read;
    }

    /** Each panel target of the shipped dashboard: its panel's title (and the target's index) to its query. */
    private static Map<String, String> panelQueries() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(MONITORING.resolve("grafana-dashboard.json").toFile());
        Map<String, String> queries = new LinkedHashMap<>();
        for (JsonNode panel : dashboard.get("panels")) {
            int i = 0;
            for (JsonNode target : panel.path("targets")) {
                queries.put(panel.get("title").asText() + " #" + i++, target.get("expr").asText());
            }
        }
        return queries;
    }

    private static List<String> alertNames() throws Exception {
        Matcher m = Pattern.compile("(?m)^\\s*- alert: (\\w+)").matcher(Files.readString(MONITORING
                .resolve("alerts.yaml")));
        List<String> names = new ArrayList<>();
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }
}
