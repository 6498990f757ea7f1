package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Sequences;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.it.support.Unload;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A switch made while the previous switch's migration still waits for its cutover (issue 35, class 2, as it was
 * reproduced): A -> B, and while B's migration is PENDING, B -> C. C's migration finishes and B's ends SUPERSEDED
 * (it never waits for ever); verify finds nothing wrong and no unfinished migration; every message published before,
 * between and after the switches is read back, in order; once the topics are gone and the old clusters are cleaned
 * up, the removal verdict says the plugin can be taken out.
 */
class SwitchWhileMigrationPendingTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(SwitchWhileMigrationPendingTest.class);
    private static final int TOPICS = 8;
    private static final int PER_PHASE = 20;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .bookieCluster("cluster-c", 2)
                .brokers(1)
                // one topic a second: each cutover takes about 8 s, so the first switch's migration waits in
                // PENDING while the second switch is made
                .brokerConfig(p -> p.setProperty(ConfigKey.CUTOVER_TOPICS_PER_SECOND.fullName(), "1"))
                .start();
    }

    @Test
    void aSwitchWhileTheMigrationBeforeIsPendingSupersedesItAndEverythingSettles() throws Exception {
        String ns = cluster.createTenant("pending");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        assertEquals(200, rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri()).status());
        assertEquals(200, rest.register("cluster-c", cluster.bookieCluster("cluster-c").metadataServiceUri()).status());
        rest.awaitEveryBrokerRecorded();

        List<String> topics = new ArrayList<>();
        for (int i = 0; i < TOPICS; i++) {
            topics.add("persistent://" + ns + "/t" + i);
        }
        List<Producer<String>> producers = Sequences.producers(client, topics);
        long seq = Sequences.produce(producers, 0, PER_PHASE);
        // a subscription on each topic that has acknowledged half: its cursor ledger on A is what the migrations
        // move; unloaded cleanly so that the cursor ledger is closed (a migration skips an open one)
        for (String t : topics) {
            try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(t).subscriptionName("s")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).isAckReceiptEnabled(true)
                    .subscribe()) {
                for (int i = 0; i < PER_PHASE / 2; i++) {
                    c.acknowledge(c.receive(10, TimeUnit.SECONDS));
                }
            }
            Unload.cleanly(admin, t);
        }

        Rest.Response toB = rest.switchTo("cluster-b");
        assertEquals(200, toB.status(), toB.raw());
        await("switch 1's migration waits for the cutover").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    JsonNode m = rest.status().get("migration");
                    return m != null && !m.isNull() && m.get("phase").asText().equals("PENDING");
                });
        // the second switch, right away: it is accepted as soon as the broker applied the first
        await("the switch to C is accepted").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    Rest.Response r = rest.switchTo("cluster-c");
                    log.info("PENDING switch to C: {} {}", r.status(), r.raw());
                    return r.status() == 200;
                });
        JsonNode status = rest.status();
        assertEquals(2, status.get("epoch").asLong(), status.toString());
        JsonNode first = Registry.jsonChildren(cluster.zkConnectString(), "/admin/bookie-clusters/orchestrator")
                .get("1");
        log.info("PENDING switch 1's migration when switch 2 was made: {}", first);
        // the case this test is for: switch 1's migration had not started copying when switch 2 superseded it
        assertTrue(Set.of("PENDING", "SUPERSEDED").contains(first.get("phase").asText()), first.toString());
        assertEquals(0, first.get("copied").asInt(), first.toString());
        seq = Sequences.produce(producers, seq, PER_PHASE);

        rest.awaitCutoverComplete();
        JsonNode second = rest.awaitMigrationFinished();
        log.info("PENDING switch 2's migration: {}", second);
        assertEquals(2, second.get("switchEpoch").asLong());
        assertEquals("DONE", second.get("phase").asText(), second.toString());
        await("switch 1's migration ends").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
                .untilAsserted(() -> assertEquals("SUPERSEDED", Registry.jsonChildren(cluster.zkConnectString(),
                        "/admin/bookie-clusters/orchestrator").get("1").get("phase").asText()));
        seq = Sequences.produce(producers, seq, PER_PHASE);

        JsonNode verify = rest.get("/verify").json();
        log.info("PENDING verify after settling: {}", verify);
        assertTrue(verify.get("ok").asBoolean(), verify.toString());
        for (JsonNode because : verify.get("removal").get("because")) {
            assertFalse(because.asText().contains("the migration of switch epoch"), verify.toString());
        }

        // every message, each once and in order, from A's, B's and C's ledgers
        for (Producer<String> p : producers) {
            p.close();
        }
        for (String t : topics) {
            MessageAccount.assertSequence(Traffic.readAll(client, t), seq, t + ": read from earliest");
            try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(t).subscriptionName("s").subscribe()) {
                List<String> rest2 = MessageAccount.drain(c, 3);
                assertEquals(seq - PER_PHASE / 2, rest2.size(), t + ": the subscription resumes where it was");
                assertEquals("p:" + PER_PHASE / 2, rest2.get(0), t);
            }
        }

        // nothing is left that pins the old clusters: the topics go, A and B are cleaned up, and the plugin can go
        for (String t : topics) {
            admin.topics().delete(t, true);
        }
        for (String old : List.of("cluster-a", "cluster-b")) {
            Rest.Response cleaned = rest.post("/cleanup", "{\"srcCluster\":\"" + old + "\",\"dryRun\":false,"
                    + "\"force\":true}");
            log.info("PENDING cleanup of {}: {} {}", old, cleaned.status(), cleaned.raw());
            assertEquals(200, cleaned.status(), cleaned.raw());
        }
        await("the removal verdict").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> {
                    JsonNode v = rest.get("/verify").json();
                    log.info("PENDING verify after cleanup: {}", v);
                    assertTrue(v.get("ok").asBoolean(), v.toString());
                    assertTrue(v.get("removal").get("safe").asBoolean(), v.get("removal").toString());
                });
    }
}
