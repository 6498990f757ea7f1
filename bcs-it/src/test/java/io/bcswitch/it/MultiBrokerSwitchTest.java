package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.adapter.BookieClusterSwitchStorage;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Sequences;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Acceptance 2: a switch requested on broker 0 takes effect on broker 1, while both brokers own topics and a load
 * runs on topics of each; nothing is lost; a restarted broker comes back on B.
 */
class MultiBrokerSwitchTest extends ClusterTestBase {
    private static final int TOPICS = 8;
    private static final int PER_PHASE = 50;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .brokers(2)
                .start();
    }

    private static BookieClusterSwitchStorage plugin(int broker) {
        return (BookieClusterSwitchStorage) cluster.broker(broker).pulsar().getManagedLedgerStorage();
    }

    @Test
    void switchPropagatesAndRestartedBrokerReadsOldData() throws Exception {
        String ns = cluster.createTenant("multi");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        // topics owned by each broker, so that both brokers have topics to move at the switch
        List<String> topics = Placement.topicsOwnedByEach(cluster, admin, ns, "t", TOPICS / 2);
        List<String> loaded = Placement.topicsOwnedByEach(cluster, admin, ns, "load", 2);
        List<Producer<String>> producers = Sequences.producers(client, topics);
        long seq = 0;
        seq = Sequences.produce(producers, seq, PER_PHASE);
        // and a continuous load, on topics of both brokers, across the switch
        Traffic traffic = new Traffic(client, loaded, "sub", 50);
        await().atMost(Duration.ofSeconds(30)).until(() -> traffic.counts().stream().allMatch(c -> c.acked.size() > 20));

        Rest rest0 = new Rest(cluster.broker(0).webServiceUrl());
        Rest rest1 = new Rest(cluster.broker(1).webServiceUrl());
        assertEquals(200, rest0.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri()).status());
        Rest.Response sw = rest0.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());

        // broker 1 sees it: through its own REST endpoint and its routing view
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            JsonNode s = rest1.status();
            return s.get("cutoverComplete").asBoolean() && s.get("brokers").size() == 2;
        });
        assertEquals("cluster-b", plugin(1).currentOwnership().activeCluster());
        assertEquals(1, plugin(1).currentOwnership().activeEpoch());
        assertEquals("cluster-b", plugin(0).currentOwnership().activeCluster());
        // the switch was announced first: both brokers had their clients of B ready for its range before the commit
        long firstIdOfB = sw.json().get("directive").get("firstLedgerId").asLong();
        for (JsonNode b : rest1.status().get("brokers")) {
            assertEquals(firstIdOfB, b.get("preparedFirstLedgerId").asLong(), b.toString());
        }

        // each broker moved every topic it had open at the cutover (as many as it counted), at least the test's topics
        // it owns (the namespace's system topics besides), none failed
        for (int i = 0; i < 2; i++) {
            String id = cluster.broker(i).pulsar().getBrokerId();
            JsonNode b = null;
            for (JsonNode r : rest1.status().get("brokers")) {
                b = r.get("broker").asText().equals(id) ? r : b;
            }
            assertTrue(b != null, "a cutover record of broker " + id);
            assertEquals(b.get("topicsTotal").asInt(), b.get("topicsMoved").asInt(), "every open topic moved: " + b);
            assertEquals(0, b.get("topicsFailed").asInt(), b.toString());
            // placed on it before the switch (each broker owns TOPICS / 2 of the sequenced topics and 2 loaded ones)
            assertTrue(b.get("topicsTotal").asInt() >= TOPICS / 2 + 2, "each of the test's topics counted: " + b);
        }
        traffic.sendMoreThenStopAndAssertExact(200);

        seq = Sequences.produce(producers, seq, PER_PHASE);
        JsonNode status = rest1.status();
        for (String t : topics) {
            List<Long> ids = Placement.ledgers(admin, t);
            assertEquals("cluster-b", Placement.owner(status.get("ranges"), ids.get(ids.size() - 1)), t);
        }
        Placement.assertPlacement(cluster, admin, status, topics);
        for (Producer<String> p : producers) {
            p.close();
        }

        // restart broker 1: it comes back with B active, from the registry, not from its configuration
        cluster.broker(1).restart();
        assertEquals("cluster-b", plugin(1).currentOwnership().activeCluster());
        assertEquals(1, plugin(1).currentOwnership().activeEpoch());

        // with broker 0 down, broker 1 serves every topic and must read A's old ledgers
        cluster.broker(0).stop();
        try (PulsarClient c1 = PulsarClient.builder().serviceUrl(cluster.broker(1).brokerServiceUrl()).build();
             PulsarAdmin a1 = PulsarAdmin.builder().serviceHttpUrl(cluster.broker(1).webServiceUrl()).build()) {
            for (String t : topics) {
                MessageAccount.assertSequence(Traffic.readAll(c1, t), seq, t + ": everything readable through the restarted broker");
                try (Producer<String> p = c1.newProducer(Schema.STRING).topic(t).enableBatching(false).create()) {
                    p.send("p:" + seq);
                }
                List<Long> ids = Placement.ledgers(a1, t);
                assertTrue(Placement.owner(status.get("ranges"), ids.get(0)).equals("cluster-a"), t);
                assertEquals("cluster-b", Placement.owner(status.get("ranges"), ids.get(ids.size() - 1)), t);
            }
        }
        cluster.broker(0).start();
    }

}
