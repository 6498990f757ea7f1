package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.awaitility.core.ConditionTimeoutException;
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
        long first = compact(admin, topic);
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
        long second = compact(admin, topic);
        assertTrue(second != first);
        assertEquals("cluster-b", Placement.owner(rest.status().get("ranges"), second));
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(second), "second compacted ledger on B");
        assertFalse(cluster.bookieCluster("cluster-a").ledgerIds().contains(second));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertFalse(
                cluster.bookieCluster("cluster-a").ledgerIds().contains(first), "superseded ledger deleted on A"));
        assertEquals(expected, Compacted.view(client, topic));
    }

    /** Runs compaction and returns the id of the compacted ledger it wrote. */
    private static long compact(PulsarAdmin admin, String topic) throws Exception {
        admin.topics().triggerCompaction(topic);
        long start = System.nanoTime();
        try {
            // 120 s: a dispatcher whose read failed waits 15 s, then 30 s, before it reads again
            await().atMost(Duration.ofSeconds(120)).until(() ->
                    admin.topics().compactionStatus(topic).status != LongRunningProcessStatus.Status.RUNNING);
        } catch (ConditionTimeoutException e) {
            // say where it stands: the compaction cursor and the ledgers it reads
            throw new AssertionError("compaction of " + topic + " still running after 120 s; internal stats: "
                    + new ObjectMapper().writeValueAsString(admin.topics().getInternalStats(topic)), e);
        }
        long seconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        if (seconds > 20) {
            System.out.println("compaction of " + topic + " took " + seconds + " s; internal stats: "
                    + new ObjectMapper().writeValueAsString(admin.topics().getInternalStats(topic)));
        }
        LongRunningProcessStatus status = admin.topics().compactionStatus(topic);
        assertEquals(LongRunningProcessStatus.Status.SUCCESS, status.status, "compaction failed: " + status.lastError);
        var compacted = admin.topics().getInternalStats(topic).compactedLedger;
        assertNotNull(compacted);
        assertTrue(compacted.ledgerId >= 0, "compacted ledger id");
        return compacted.ledgerId;
    }
}
