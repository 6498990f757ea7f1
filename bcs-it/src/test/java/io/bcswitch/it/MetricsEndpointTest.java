package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Metrics;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeperAdmin;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The plugin's metrics are on the broker's own {@code /metrics} endpoint (what Prometheus and the Helm chart's
 * monitors scrape), with no OpenTelemetry exporter enabled, and say what status says: the active bookie cluster and
 * epoch, the cutover's topics, what the migration copied and promoted, its phase and what is left, the rollback
 * window, the relocation epoch lag, each bookie cluster's client operations, and the last drain report.
 */
class MetricsEndpointTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().start();
    }

    private static String scrape() throws Exception {
        return Metrics.scrape(cluster.broker(0));
    }

    private static OptionalDouble sample(String text, String name, Map<String, String> labels) {
        return Metrics.sample(text, name, labels);
    }

    @Test
    void theSwitchCutoverAndMigrationAreOnTheBrokersMetricsEndpoint() throws Exception {
        String ns = cluster.createTenant("metrics");
        cluster.newAdmin().namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        String topic = "persistent://" + ns + "/t";
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).create()) {
            for (int i = 0; i < 10; i++) {
                p.send("m" + i);
            }
        }
        String before = scrape();
        assertEquals(0.0, sample(before, "pulsar_bookie_switch_epoch", Map.of("bookie_cluster", "cluster-a"))
                .orElseThrow(() -> new AssertionError("no epoch metric:\n" + before)));
        assertTrue(sample(before, "pulsar_bookie_switch_migration_ledgers_total", Map.of()).isEmpty(), before);
        // served from the start, from 0 (an alert on its increase needs the series before the first failure)
        assertEquals(0.0, sample(before, "pulsar_bookie_switch_migration_pass_failures_total", Map.of())
                .orElseThrow(() -> new AssertionError("no pass-failure counter:\n" + before)));

        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        JsonNode migration = rest.awaitMigrationFinished();
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        JsonNode record = rest.status().get("brokers").get(0);

        String after = scrape();
        assertEquals(1.0, sample(after, "pulsar_bookie_switch_epoch", Map.of("bookie_cluster", "cluster-b"))
                .orElseThrow(() -> new AssertionError(after)));
        assertTrue(sample(after, "pulsar_bookie_switch_epoch", Map.of("bookie_cluster", "cluster-a")).isEmpty());
        // every topic the broker had open at the cutover moved (the test's topic among them)
        assertEquals(record.get("topicsTotal").asInt(), record.get("topicsMoved").asInt(), record.toString());
        assertTrue(record.get("topicsMoved").asInt() >= 1, record.toString());
        assertEquals(record.get("topicsMoved").asDouble(), sample(after, "pulsar_bookie_switch_cutover_topics",
                Map.of("state", "moved")).orElseThrow(), "what the broker recorded: " + record);
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_cutover_topics", Map.of("state", "pending"))
                .orElseThrow());
        double promoted = sample(after, "pulsar_bookie_switch_migration_ledgers_total",
                Map.of("bookie_cluster", "cluster-b", "outcome", "promoted"))
                .orElseThrow(() -> new AssertionError(after));
        // counted against the bookies: a copy keeps its ledger's id, so the ids both clusters hold are the copies
        // (nothing is cleaned up yet), and their lengths on b are the bytes copied
        Set<Long> copies = new TreeSet<>(cluster.bookieCluster("cluster-a").ledgerIds());
        copies.retainAll(cluster.bookieCluster("cluster-b").ledgerIds());
        long copiedBytes = 0;
        try (BookKeeperAdmin b = cluster.bookieCluster("cluster-b").newAdmin()) {
            for (long id : copies) {
                org.apache.bookkeeper.client.LedgerHandle h = b.openLedgerNoRecovery(id);
                copiedBytes += h.getLength();
                h.close();
            }
        }
        assertTrue(!copies.isEmpty(), "the migration copied the closed metadata ledgers");
        assertEquals(copies.size(), promoted, "every copy promoted: " + copies + " " + migration);
        assertEquals(copies.size(), sample(after, "pulsar_bookie_switch_migration_ledgers_total",
                Map.of("bookie_cluster", "cluster-b", "outcome", "copied")).orElseThrow(), copies + " " + migration);
        assertEquals(migration.get("promoted").asDouble(), promoted, migration.toString());
        assertEquals(copiedBytes, sample(after, "pulsar_bookie_switch_migration_copied_bytes_total",
                Map.of("bookie_cluster", "cluster-b")).orElseThrow(), "the copies' lengths on b: " + copies);
        // the migration's stored state, the rollback window, the relocation table
        assertEquals(1.0, sample(after, "pulsar_bookie_switch_migration_phase",
                Map.of("bookie_cluster", "cluster-b", "phase", "DONE")).orElseThrow(() -> new AssertionError(after)));
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_migration_phase",
                Map.of("bookie_cluster", "cluster-b", "phase", "BUILD")).orElseThrow());
        assertEquals(migration.get("promoted").asDouble(), sample(after, "pulsar_bookie_switch_migration_plan_ledgers",
                Map.of("bookie_cluster", "cluster-b", "state", "promoted")).orElseThrow(), migration.toString());
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_migration_plan_ledgers",
                Map.of("bookie_cluster", "cluster-b", "state", "remaining")).orElseThrow());
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_migration_remaining_bytes",
                Map.of("bookie_cluster", "cluster-b")).orElseThrow(() -> new AssertionError(after)),
                "nothing left to copy once it is DONE");
        assertTrue(sample(after, "pulsar_bookie_switch_migration_pass_failures_total", Map.of()).isPresent(), after);
        double window = sample(after, "pulsar_bookie_switch_rollback_window_seconds",
                Map.of("bookie_cluster", "cluster-b")).orElseThrow(() -> new AssertionError(after));
        assertTrue(window > 23 * 3600 && window <= 24 * 3600, "the default window of 24 h has just begun: " + window);
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_brokers_without_plugin", Map.of()).orElseThrow(
                () -> new AssertionError(after)), "the one broker runs the plugin");
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_relocation_epoch_lag", Map.of()).orElseThrow(
                () -> new AssertionError(after)), "the broker routes with the table PROMOTE wrote");
        // the BookKeeper client's operations, per bookie cluster: the topic wrote on a before the switch, on b after
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).create()) {
            p.send("after");
        }
        String withClients = scrape();
        for (String c : List.of("cluster-a", "cluster-b")) {
            assertTrue(sample(withClients, "pulsar_bookie_switch_client_op_seconds_count", Map.of("bookie_cluster", c,
                    "pool", "default", "op", "ADD_ENTRY", "outcome", "success")).orElseThrow(
                            () -> new AssertionError(c + ":\n" + withClients)) > 0, c);
        }
        assertTrue(sample(withClients, "pulsar_bookie_switch_client_op_seconds_count", Map.of("bookie_cluster",
                "cluster-b", "pool", "migration", "op", "LEDGER_CREATE", "outcome", "success")).orElseThrow(
                        () -> new AssertionError(withClients)) > 0, "the migration's copies were created on b");
        // what the last drain report said, for the old cluster only
        assertTrue(sample(withClients, "pulsar_bookie_switch_drain_bytes", Map.of()).isEmpty(), "no report yet");
        JsonNode drain = rest.get("/drain/cluster-a").json();
        String drained = scrape();
        assertEquals(drain.get("bytes").asDouble(), sample(drained, "pulsar_bookie_switch_drain_bytes",
                Map.of("bookie_cluster", "cluster-a")).orElseThrow(() -> new AssertionError(drained)), drain.toString());
        assertTrue(drain.get("bytes").asLong() > 0, "the first ten messages are still on a: " + drain);
        assertEquals(drain.get("ledgers").asDouble(), sample(drained, "pulsar_bookie_switch_drain_ledgers",
                Map.of("bookie_cluster", "cluster-a")).orElseThrow());
        assertTrue(sample(drained, "pulsar_bookie_switch_drain_report_timestamp_seconds",
                Map.of("bookie_cluster", "cluster-a")).orElseThrow() * 1000 > System.currentTimeMillis() - 60_000);
        // a reader of the data written before the switch holds a ledger open on a: the gauge that says a cannot be
        // retired yet (whether something else, the drain report say, still holds one there at this moment varies)
        String reading;
        try (Reader<String> r = client.newReader(Schema.STRING).topic(topic).startMessageId(MessageId.earliest)
                .receiverQueueSize(1).create()) {
            assertEquals("m0", r.readNext(30, TimeUnit.SECONDS).getValue());
            reading = await("a's open handle on /metrics").atMost(Duration.ofSeconds(30)).until(() -> scrape(),
                    text -> sample(text, "pulsar_bookie_switch_open_ledger_handles",
                            Map.of("bookie_cluster", "cluster-a")).orElse(0) >= 1);
        }
        assertTrue(sample(reading, "pulsar_bookie_switch_open_ledger_handles", Map.of("bookie_cluster", "cluster-b"))
                .isEmpty(), "the active cluster is not counted:\n" + reading);
        // kept for whoever wants to see what the endpoint serves (docs, the samples)
        java.nio.file.Files.writeString(java.nio.file.Path.of("target", "metrics-sample.txt"), String.join("\n",
                reading.lines().filter(l -> l.contains("pulsar_bookie_switch_")).toList()) + "\n");
        // Pulsar's own metrics are still there beside ours
        assertTrue(after.lines().anyMatch(l -> l.startsWith("pulsar_") && !l.startsWith("pulsar_bookie_switch_")),
                "Pulsar's metrics are served as before");
    }
}
