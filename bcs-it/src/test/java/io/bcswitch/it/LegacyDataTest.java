package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Traffic;
import java.util.ArrayList;
import java.util.List;
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

/**
 * Acceptance 4: a broker that ran stock Pulsar (no plugin) and wrote data is restarted with the plugin,
 * the way an operator installs it; the old data (legacy short ledger ids, no range table at the time)
 * stays readable, including after a switch, and an existing subscription resumes where it was.
 */
class LegacyDataTest extends ClusterTestBase {
    private static final int TOPICS = 3;

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .plugin(false)
                .start();
    }

    @Test
    void dataWrittenWithoutThePluginStaysReadable() throws Exception {
        String ns = cluster.createTenant("legacy");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        List<String> topics = new ArrayList<>();
        try (PulsarClient client = PulsarClient.builder().serviceUrl(cluster.broker(0).brokerServiceUrl()).build()) {
            for (int i = 0; i < TOPICS; i++) {
                String t = "persistent://" + ns + "/t" + i;
                topics.add(t);
                // a subscription that has consumed the first 40 of 100 messages
                try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(t).subscriptionName("sub")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
                     Producer<String> p = client.newProducer(Schema.STRING).topic(t).producerName("p")
                             .enableBatching(false).create()) {
                    for (int s = 0; s < 100; s++) {
                        p.send("p:" + s);
                    }
                    for (int s = 0; s < 40; s++) {
                        c.acknowledge(c.receive());
                    }
                }
            }
        }
        List<List<Long>> legacyLedgers = new ArrayList<>();
        for (String t : topics) {
            legacyLedgers.add(Placement.ledgers(admin, t));
        }
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().containsAll(legacyLedgers.get(0)));

        // the operator installs the plugin and restarts the broker
        cluster.broker(0).restart(true);
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        JsonNode status = rest.status();
        assertEquals("cluster-a", status.get("activeCluster").asText());
        assertEquals("cluster-a", status.get("bootstrap").get("cluster").asText());
        assertEquals(0, status.get("ranges").get(0).get("firstLedgerId").asLong());

        try (PulsarClient client = PulsarClient.builder().serviceUrl(cluster.broker(0).brokerServiceUrl()).build()) {
            for (String t : topics) {
                MessageAccount.assertSequence(Traffic.readAll(client, t), 100, t + " after enabling the plugin");
            }
            rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
            for (String t : topics) {
                try (Producer<String> p = client.newProducer(Schema.STRING).topic(t).producerName("p")
                        .enableBatching(false).create()) {
                    for (int s = 100; s < 150; s++) {
                        p.send("p:" + s);
                    }
                }
            }
            // data is readable from the start, across both clusters
            for (String t : topics) {
                MessageAccount.assertSequence(Traffic.readAll(client, t), 150, t + " after the switch");
            }
            // the old subscription resumes at message 40 and reads through onto cluster-b
            for (String t : topics) {
                try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(t).subscriptionName("sub")
                        .subscribe()) {
                    for (int s = 40; s < 150; s++) {
                        Message<String> m = c.receive(30, java.util.concurrent.TimeUnit.SECONDS);
                        assertEquals("p:" + s, m == null ? null : m.getValue(), t);
                        c.acknowledge(m);
                    }
                }
            }
        }
        status = rest.status();
        Placement.assertPlacement(cluster, admin, status, topics);
        for (int i = 0; i < TOPICS; i++) {
            List<Long> ids = Placement.ledgers(admin, topics.get(i));
            assertTrue(ids.containsAll(legacyLedgers.get(i)), "legacy ledgers kept: " + ids);
            assertEquals("cluster-b", Placement.owner(status.get("ranges"), ids.get(ids.size() - 1)));
            assertFalse(cluster.bookieCluster("cluster-b").ledgerIds().contains(legacyLedgers.get(i).get(0)));
        }
    }

}
