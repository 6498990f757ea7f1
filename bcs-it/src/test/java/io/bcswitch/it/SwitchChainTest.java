package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Sequences;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Acceptance 3: A -> B -> A -> B -> C (which contains both A -> B -> A and A -> B -> C). After every
 * switch each topic gets a new ledger on the target, ledger ids keep increasing within each topic, every
 * ledger is on the cluster the range table names, and all data stays readable.
 */
class SwitchChainTest extends ClusterTestBase {
    private static final int TOPICS = 4;
    private static final int PER_PHASE = 30;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .bookieCluster("cluster-c", 2)
                .brokers(1)
                .start();
    }

    @Test
    void switchBackAndOnKeepsIdsIncreasingAndDataReadable() throws Exception {
        String ns = cluster.createTenant("chain");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        assertEquals(200, rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri()).status());
        assertEquals(200, rest.register("cluster-c", cluster.bookieCluster("cluster-c").metadataServiceUri()).status());

        List<String> topics = new ArrayList<>();
        for (int i = 0; i < TOPICS; i++) {
            topics.add("persistent://" + ns + "/t" + i);
        }
        List<Producer<String>> producers = Sequences.producers(client, topics);
        long seq = Sequences.produce(producers, 0, PER_PHASE);

        String[] chain = {"cluster-b", "cluster-a", "cluster-b", "cluster-c"};
        long epoch = 0;
        long previousFirstId = 0;
        for (String target : chain) {
            Rest.Response sw = rest.switchTo(target);
            assertEquals(200, sw.status(), target + ": " + sw.raw());
            epoch++;
            long firstId = sw.json().get("directive").get("firstLedgerId").asLong();
            assertTrue(firstId > previousFirstId, "each switch gets a higher range: " + firstId);
            previousFirstId = firstId;
            long e = epoch;
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
                JsonNode s = rest.status();
                return s.get("epoch").asLong() == e && s.get("cutoverComplete").asBoolean();
            });
            seq = Sequences.produce(producers, seq, PER_PHASE);
            JsonNode status = rest.status();
            assertEquals(target, status.get("activeCluster").asText());
            Map<String, List<String>> owners = Placement.assertPlacement(cluster, admin, status, topics);
            for (String t : topics) {
                List<String> o = owners.get(t);
                assertEquals(target, o.get(o.size() - 1), t + ": newest ledger after switching to " + target);
                List<Long> ids = Placement.ledgers(admin, t);
                assertTrue(ids.get(ids.size() - 1) >= firstId, t + ": newest ledger in the new range");
            }
        }

        JsonNode status = rest.status();
        assertEquals(5, status.get("ranges").size(), status.toString());
        Map<String, List<String>> owners = Placement.assertPlacement(cluster, admin, status, topics);
        for (String t : topics) {
            // every cluster of the chain holds part of each topic
            assertEquals(new HashSet<>(List.of("cluster-a", "cluster-b", "cluster-c")), new HashSet<>(owners.get(t)),
                    t + ": " + owners.get(t));
            MessageAccount.assertSequence(Traffic.readAll(client, t), seq, t + ": read from earliest");
        }
        for (Producer<String> p : producers) {
            p.close();
        }
    }

}
