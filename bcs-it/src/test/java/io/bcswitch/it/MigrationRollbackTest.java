package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Metrics;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Unload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
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
 * Rollback inside the window (issue acceptance 2): after A -> B and its migration, a rollback makes A
 * active again with a fresh id range, reads of the promoted ledgers go back to A's originals, the copies
 * on B are deleted once the broker has applied that, and nothing published before, during or after is
 * lost. A rollback after the window is refused.
 */
class MigrationRollbackTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(MigrationRollbackTest.class);

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().start();
    }

    @Test
    void rollbackRestoresReadsAndWritesOnTheOldCluster() throws Exception {
        String ns = cluster.createTenant("rollback");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String topic = "persistent://" + ns + "/data";
        String idle = "persistent://" + ns + "/idle";
        List<String> sent = new ArrayList<>();
        // the subscription "s" consumes nothing until the end: every message must still be there
        client.newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe().close();
        Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
        send(producer, sent, "a", 20);
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(idle).subscriptionName("idle")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).isAckReceiptEnabled(true)
                .subscribe();
             Producer<String> p = client.newProducer(Schema.STRING).topic(idle).create()) {
            p.send("idle-0");
            c.acknowledge(c.receive(10, TimeUnit.SECONDS));
        }
        // unloaded with its cursor closed cleanly, so nothing of the idle topic stays open on cluster-a (an
        // unload racing Pulsar's own cursor metadata write leaves the cursor ledger open, which the migration
        // rightly skips, and the migration would not end DONE)
        Unload.cleanly(admin, idle);

        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        JsonNode migration = rest.awaitMigrationFinished();
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        List<Long> copies = new ArrayList<>();
        copies.addAll(Registry.copies(cluster.zkConnectString(), 1));
        assertFalse(copies.isEmpty(), migration.toString());
        assertEquals(migration.get("planned").asInt(), migration.get("copied").asInt(), migration.toString());
        assertEquals(migration.get("copied").asInt(), copies.size(), "every copy recorded once: " + copies);
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().containsAll(copies));
        send(producer, sent, "b", 20);

        Rest.Response rb = rest.post("/rollback", "");
        log.info("ROLLBACK response: {}", rb.raw());
        assertEquals(200, rb.status(), rb.raw());
        assertEquals(1, rb.json().get("rolledBackEpoch").asLong());
        JsonNode directive = rb.json().get("switched").get("directive");
        assertEquals("cluster-a", directive.get("target").asText());
        assertEquals(2, directive.get("epoch").asLong());
        long firstIdOfA2 = directive.get("firstLedgerId").asLong();
        assertEquals(copies.size(), rb.json().get("copiesToDelete").asInt());
        // counted on the broker's /metrics, against the cluster switched away from
        await("the rollback on /metrics").atMost(Duration.ofSeconds(10)).until(() -> Metrics.sample(
                Metrics.scrape(cluster.broker(0)), "pulsar_bookie_switch_rollbacks_total",
                Map.of("bookie_cluster", "cluster-b")).orElse(0) == 1);
        rest.awaitCutoverComplete();
        send(producer, sent, "a2", 20);
        producer.close();

        // the promotions of epoch 1 are gone; the copies on B are deleted once the broker applied that
        Map<String, String> relocations = Registry.snapshot(cluster.zkConnectString(),
                "/admin/bookie-clusters/relocations");
        for (Map.Entry<String, String> r : relocations.entrySet()) {
            assertFalse(r.getValue().contains(hex("\"home\":\"cluster-b\"")), "no relocation to B is left: " + r);
        }
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
            for (long id : copies) {
                assertFalse(onB.contains(id), "copy " + id + " deleted from B: " + onB);
            }
        });
        Set<Long> onA = cluster.bookieCluster("cluster-a").ledgerIds();
        assertTrue(onA.containsAll(copies), "originals still on A");
        List<Long> ledgers = Placement.ledgers(admin, topic);
        long newest = ledgers.get(ledgers.size() - 1);
        assertTrue(newest >= firstIdOfA2 && onA.contains(newest), "writes go to A's new range: " + ledgers);

        // nothing lost: every message, in order, from A's first range, B's range and A's new range
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("s").subscribe()) {
            assertEquals(sent, MessageAccount.drain(c, 5), "the subscription's backlog, to its end");
        }
        assertEquals(sent, MessageAccount.readValuesToEnd(client, topic), "read from earliest to the end");
        // the idle subscription's cursor (promoted, then flipped back) resumes from A's original
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(idle).create();
             Consumer<String> c = client.newConsumer(Schema.STRING).topic(idle).subscriptionName("idle").subscribe()) {
            p.send("idle-1");
            assertEquals("idle-1", c.receive(30, TimeUnit.SECONDS).getValue());
        }

        // after the window: refused
        cluster.broker(0).restart(p -> p.setProperty(io.bcswitch.config.ConfigKey.ROLLBACK_WINDOW_HOURS.fullName(), "0"));
        Rest.Response late = new Rest(cluster.broker(0).webServiceUrl()).post("/rollback", "");
        log.info("ROLLBACK after the window: {}", late.raw());
        assertEquals(409, late.status(), late.raw());
        assertTrue(late.error().contains("rollback window"), late.raw());
    }

    private static void send(Producer<String> p, List<String> sent, String prefix, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            String v = prefix + "-" + i;
            p.send(v);
            sent.add(v);
        }
    }

    private static String hex(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
