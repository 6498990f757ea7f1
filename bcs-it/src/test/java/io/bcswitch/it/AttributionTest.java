package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestCluster;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Attribution: every data ledger carries {@code _pulsar.bookieClusterName=<owner>} in its managed-ledger
 * metadata (visible in stats-internal), and {@code GET /topics/{tenant}/{namespace}/{topic}} lists each
 * ledger with its owner, size and entries, before and after a switch A -> B.
 */
class AttributionTest extends ClusterTestBase {
    private static final String KEY = "_pulsar.bookieClusterName";
    private static final int ENTRIES_PER_LEDGER = 10;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .brokers(1)
                // several ledgers per topic on each cluster: the first ledger of a managed ledger is created
                // while it opens, later ones on rollover, and both paths must be attributed
                .brokerConfig(p -> {
                    p.setProperty("managedLedgerMaxEntriesPerLedger", Integer.toString(ENTRIES_PER_LEDGER));
                    p.setProperty("managedLedgerMinLedgerRolloverTimeMinutes", "0");
                })
                .start();
    }

    @Test
    void everyLedgerNamesItsClusterInStatsInternalAndTheTopicsEndpoint() throws Exception {
        String ns = cluster.createTenant("attr");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        List<String> topics = List.of("persistent://" + ns + "/t0", "persistent://" + ns + "/t1",
                "persistent://" + ns + "/orders:v1 (eu)");
        PulsarClient client = cluster.newClient();
        List<Producer<byte[]>> producers = new ArrayList<>();
        for (String t : topics) {
            producers.add(client.newProducer().topic(t).enableBatching(false).create());
        }
        produce(producers, 25, "a");

        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        Rest.Response reg = rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        assertEquals(200, reg.status(), reg.raw());
        Rest.Response sw = rest.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> rest.status().get("cutoverComplete").asBoolean());
        produce(producers, 25, "b");
        for (Producer<byte[]> p : producers) {
            p.close();
        }
        JsonNode status = rest.status();
        JsonNode ranges = status.get("ranges");

        // the property is written asynchronously right after each ledger is added to the managed ledger
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            for (String t : topics) {
                for (LedgerInfo l : admin.topics().getInternalStats(t).ledgers) {
                    assertNotNull(l.properties, t + ": ledger " + l.ledgerId + " has no properties yet");
                    assertEquals(Placement.owner(ranges, l.ledgerId), l.properties.get(KEY),
                            t + ": ledger " + l.ledgerId);
                }
            }
        });
        // ... and each ledger really is on the cluster the range table (and so the property) names
        Placement.assertPlacement(cluster, admin, status, topics);

        for (String t : topics) {
            PersistentTopicInternalStats stats = admin.topics().getInternalStats(t);
            Set<String> owners = new HashSet<>();
            for (LedgerInfo l : stats.ledgers) {
                owners.add(l.properties.get(KEY));
            }
            assertEquals(Set.of("cluster-a", "cluster-b"), owners, t + ": ledgers on both clusters");

            Rest.Response r = rest.get(path(t));
            assertEquals(200, r.status(), r.raw());
            assertEquals(t, r.json().get("topic").asText());
            JsonNode ledgers = r.json().get("ledgers");
            assertEquals(stats.ledgers.size(), ledgers.size(), r.raw());
            long entries = 0;
            long size = 0;
            for (int i = 0; i < ledgers.size(); i++) {
                LedgerInfo l = stats.ledgers.get(i);
                JsonNode e = ledgers.get(i);
                String owner = Placement.owner(ranges, l.ledgerId);
                assertEquals(l.ledgerId, e.get("ledgerId").asLong(), r.raw());
                assertEquals(owner, e.get("cluster").asText(), r.raw());
                assertEquals(owner, e.get("bookieClusterNameProperty").asText(), r.raw());
                boolean current = i == ledgers.size() - 1;
                // stats-internal lists the ledger being written with 0/0 and gives its counts separately
                assertEquals(current ? stats.currentLedgerEntries : l.entries, e.get("entries").asLong(), r.raw());
                assertEquals(current ? stats.currentLedgerSize : l.size, e.get("size").asLong(), r.raw());
                entries += e.get("entries").asLong();
                size += e.get("size").asLong();
            }
            assertEquals(stats.numberOfEntries, entries, t + ": entries add up");
            assertEquals(stats.totalSize, size, t + ": sizes add up");
            assertEquals(50, entries, t);
        }

        // an unloaded topic is answered from the stored managed-ledger metadata, properties included
        String t0 = topics.get(0);
        List<Long> idsBefore = Placement.ledgers(admin, t0);
        admin.topics().unload(t0);
        Rest.Response unloaded = rest.get(path(t0));
        assertEquals(200, unloaded.status(), unloaded.raw());
        List<Long> idsStored = new ArrayList<>();
        for (JsonNode e : unloaded.json().get("ledgers")) {
            long id = e.get("ledgerId").asLong();
            idsStored.add(id);
            assertEquals(Placement.owner(ranges, id), e.get("cluster").asText(), unloaded.raw());
            assertEquals(Placement.owner(ranges, id), e.get("bookieClusterNameProperty").asText(), unloaded.raw());
        }
        assertEquals(idsBefore, idsStored, unloaded.raw());

        // errors
        String tenant = TopicName.get(t0).getTenant();
        Rest.Response missing = rest.get("/topics/" + tenant + "/ns/no-such-topic");
        assertEquals(404, missing.status(), missing.raw());
        assertTrue(missing.error() != null && missing.error().contains("does not exist"), missing.raw());
        for (String bad : List.of("/topics/" + tenant + "/ns", "/topics/" + tenant, "/topics",
                "/topics/" + tenant + "/ns/a/b")) {
            Rest.Response r = rest.get(bad);
            assertEquals(400, r.status(), bad + ": " + r.raw());
            assertTrue(r.error() != null && r.error().contains("malformed path"), r.raw());
        }
        Rest.Response badName = rest.get("/topics/bad%21tenant/ns/x");
        assertEquals(400, badName.status(), badName.raw());
        assertTrue(badName.error() != null && badName.error().contains("invalid topic name"), badName.raw());
        Rest.Response post = rest.post(path(t0), "{}");
        assertEquals(405, post.status(), post.raw());
    }

    private static void produce(List<Producer<byte[]>> producers, int perTopic, String tag) throws Exception {
        for (int i = 0; i < perTopic; i++) {
            for (Producer<byte[]> p : producers) {
                p.send((tag + "-" + i).getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    /** The endpoint path of {@code topic}: each part URL-encoded, as curl users would send it. */
    private static String path(String topic) {
        TopicName tn = TopicName.get(topic);
        return "/topics/" + enc(tn.getTenant()) + "/" + enc(tn.getNamespacePortion()) + "/" + enc(tn.getLocalName());
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
