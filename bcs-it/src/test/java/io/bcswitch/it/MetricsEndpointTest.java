package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The plugin's metrics are on the broker's own {@code /metrics} endpoint (what Prometheus and the Helm chart's
 * monitors scrape), with no OpenTelemetry exporter enabled, and say what status says: the active bookie cluster and
 * epoch, the cutover's topics, what the migration copied and promoted.
 */
class MetricsEndpointTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().start();
    }

    private static String scrape() throws Exception {
        HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(cluster.broker(0).webServiceUrl()
                + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    /** The value of the one sample of {@code name} whose labels include {@code labels}; empty when there is none. */
    private static OptionalDouble sample(String text, String name, Map<String, String> labels) {
        List<Double> found = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = labels.entrySet().stream().allMatch(l -> line.contains(l.getKey() + "=\"" + l.getValue()
                    + "\""));
            if (all) {
                found.add(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        assertTrue(found.size() <= 1, name + labels + " matches several samples: " + found);
        return found.isEmpty() ? OptionalDouble.empty() : OptionalDouble.of(found.get(0));
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

        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        JsonNode migration = rest.awaitMigrationFinished();
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        JsonNode record = rest.status().get("brokers").get(0);

        String after = scrape();
        assertEquals(1.0, sample(after, "pulsar_bookie_switch_epoch", Map.of("bookie_cluster", "cluster-b"))
                .orElseThrow(() -> new AssertionError(after)));
        assertTrue(sample(after, "pulsar_bookie_switch_epoch", Map.of("bookie_cluster", "cluster-a")).isEmpty());
        assertEquals(record.get("topicsMoved").asDouble(), sample(after, "pulsar_bookie_switch_cutover_topics",
                Map.of("state", "moved")).orElseThrow(), "what status says: " + record);
        assertTrue(record.get("topicsMoved").asInt() > 0, record.toString());
        assertEquals(0.0, sample(after, "pulsar_bookie_switch_cutover_topics", Map.of("state", "pending"))
                .orElseThrow());
        double promoted = sample(after, "pulsar_bookie_switch_migration_ledgers_total",
                Map.of("bookie_cluster", "cluster-b", "outcome", "promoted"))
                .orElseThrow(() -> new AssertionError(after));
        assertEquals(migration.get("promoted").asDouble(), promoted, migration.toString());
        assertTrue(promoted > 0, migration.toString());
        assertEquals(migration.get("copied").asDouble(), sample(after, "pulsar_bookie_switch_migration_ledgers_total",
                Map.of("bookie_cluster", "cluster-b", "outcome", "copied")).orElseThrow(), migration.toString());
        assertTrue(sample(after, "pulsar_bookie_switch_migration_copied_bytes_total",
                Map.of("bookie_cluster", "cluster-b")).orElseThrow() > 0, after);
        // Pulsar's own metrics are still there beside ours
        assertTrue(after.lines().anyMatch(l -> l.startsWith("pulsar_") && !l.startsWith("pulsar_bookie_switch_")),
                "Pulsar's metrics are served as before");
    }
}
