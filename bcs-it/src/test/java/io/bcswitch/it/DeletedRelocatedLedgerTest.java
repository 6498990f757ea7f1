package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A ledger the migration moved twice (its original on A, a copy promoted on B, then a copy promoted on C) that
 * Pulsar then deletes: every copy goes with it, the one on B that is neither its home nor its original included.
 * (Found by explorer seed 7130834792486426106: a compacted ledger moved A to B to C, compacted away, left its copy on
 * B, which nothing read and nothing deleted.)
 */
class DeletedRelocatedLedgerTest extends ClusterTestBase {
    private static final List<String> CLUSTERS = List.of("cluster-a", "cluster-b", "cluster-c");

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().bookieCluster("cluster-a", 1).bookieCluster("cluster-b", 1)
                .bookieCluster("cluster-c", 1).brokers(1).start();
    }

    @Test
    void aLedgerMovedTwiceIsDeletedEverywhereItWasCopiedTo() throws Exception {
        String ns = cluster.createTenant("moved");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        String topic = "persistent://" + ns + "/kv";
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        Map<String, String> expected = new HashMap<>();
        write(client, topic, "a", expected);
        long moved = Compacted.compact(admin, topic);
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().contains(moved));

        for (String target : List.of("cluster-b", "cluster-c")) {
            assertEquals(200, rest.register(target, cluster.bookieCluster(target).metadataServiceUri()).status());
            assertEquals(200, rest.switchTo(target).status());
            rest.awaitCutoverComplete();
            JsonNode m = rest.awaitMigrationFinished();
            assertEquals("DONE", m.get("phase").asText(), m.toString());
            assertEquals(target, Registry.relocations(cluster.zkConnectString()).get(moved).get("home").asText(),
                    "the compacted ledger moved home to " + target);
        }
        for (String c : CLUSTERS) {
            assertTrue(cluster.bookieCluster(c).ledgerIds().contains(moved), "a copy on " + c);
        }
        assertEquals(expected, Compacted.view(client, topic));

        // a new compaction: Pulsar deletes the compacted ledger it replaces, through its home
        write(client, topic, "b", expected);
        long next = Compacted.compact(admin, topic);
        assertTrue(next != moved);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (String c : CLUSTERS) {
                assertFalse(cluster.bookieCluster(c).ledgerIds().contains(moved), "ledger " + moved + " on " + c);
            }
        });
        assertEquals(expected, Compacted.view(client, topic));
        JsonNode v = rest.get("/verify").json();
        assertTrue(v.get("ok").asBoolean(), v.toString());
    }

    private static void write(PulsarClient client, String topic, String prefix, Map<String, String> expected)
            throws Exception {
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create()) {
            for (int i = 0; i < 20; i++) {
                String key = "k" + (i % 4);
                p.newMessage().key(key).value(prefix + i).send();
                expected.put(key, prefix + i);
            }
        }
    }
}
