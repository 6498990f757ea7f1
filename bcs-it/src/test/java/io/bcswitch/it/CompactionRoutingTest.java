package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Compaction follows the registry: the compacted ledger written before a switch is on A, the one
 * written after it on B; the superseded one is deleted on the cluster that held it; a compacted
 * reader sees the right view at every step.
 */
class CompactionRoutingTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .start();
    }

    @Test
    void compactedLedgersAreCreatedOnTheActiveClusterAndDeletedWhereTheyAre() throws Exception {
        String ns = cluster.createTenant("compact");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        String topic = "persistent://" + ns + "/kv";
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        Map<String, String> expected = new HashMap<>();

        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create()) {
            for (int i = 0; i < 50; i++) {
                String key = "k" + (i % 5);
                String value = "a" + i;
                p.newMessage().key(key).value(value).send();
                expected.put(key, value);
            }
        }
        long first = Compacted.compact(admin, topic);
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().contains(first), "first compacted ledger on A");
        assertEquals(expected, Compacted.view(client, topic));

        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        // the compacted view does not change because of the switch
        assertEquals(expected, Compacted.view(client, topic));

        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create()) {
            for (int i = 0; i < 30; i++) {
                String key = "k" + (i % 7);
                String value = "b" + i;
                p.newMessage().key(key).value(value).send();
                expected.put(key, value);
            }
        }
        long second = Compacted.compact(admin, topic);
        assertTrue(second != first);
        assertEquals("cluster-b", Placement.owner(rest.status().get("ranges"), second));
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(second), "second compacted ledger on B");
        assertFalse(cluster.bookieCluster("cluster-a").ledgerIds().contains(second));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertFalse(
                cluster.bookieCluster("cluster-a").ledgerIds().contains(first), "superseded ledger deleted on A"));
        assertEquals(expected, Compacted.view(client, topic));
    }
}
