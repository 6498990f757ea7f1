package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.NoSchemaFallback;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.avro.reflect.Nullable;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Schema storage follows the registry: v1 registered on A, switch, v2 registered on B; both versions
 * resolve for clients and admin, before and after a broker restart; hard deletion deletes each
 * version's ledger on the cluster that holds it.
 */
@ExtendWith(NoSchemaFallback.class)
class SchemaRoutingTest extends ClusterTestBase {

    /** Version 1 of the record. */
    public static class V1 {
        public int id;

        public V1() {
        }

        V1(int id) {
            this.id = id;
        }
    }

    /** Version 2 adds an optional field: backward and forward compatible with V1. */
    public static class V2 {
        public int id;
        @Nullable
        public String note;

        public V2() {
        }

        V2(int id, String note) {
            this.id = id;
            this.note = note;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .start();
    }

    private static List<Long> schemaLedgers(PulsarAdmin admin, String topic) throws Exception {
        List<Long> ids = new ArrayList<>();
        for (LedgerInfo l : admin.topics().getInternalStats(topic, true).schemaLedgers) {
            ids.add(l.ledgerId);
        }
        return ids;
    }

    @Test
    void schemaVersionsLiveOnTheClusterActiveWhenTheyWereRegistered() throws Exception {
        String ns = cluster.createTenant("schemas");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        String topic = "persistent://" + ns + "/records";
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());

        Consumer<V1> c1 = client.newConsumer(Schema.AVRO(V1.class)).topic(topic).subscriptionName("v1-reader")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
        try (Producer<V1> p1 = client.newProducer(Schema.AVRO(V1.class)).topic(topic).create()) {
            for (int i = 0; i < 10; i++) {
                p1.send(new V1(i));
            }
        }
        List<Long> afterV1 = schemaLedgers(admin, topic);
        assertEquals(1, afterV1.size(), "one schema ledger for v1: " + afterV1);
        long v1Ledger = afterV1.get(0);
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().contains(v1Ledger));

        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());

        Consumer<V2> c2 = client.newConsumer(Schema.AVRO(V2.class)).topic(topic).subscriptionName("v2-reader")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
        try (Producer<V2> p2 = client.newProducer(Schema.AVRO(V2.class)).topic(topic).create()) {
            for (int i = 10; i < 20; i++) {
                p2.send(new V2(i, "n" + i));
            }
        }
        List<Long> afterV2 = schemaLedgers(admin, topic);
        assertEquals(2, afterV2.size(), "one schema ledger per version: " + afterV2);
        long v2Ledger = afterV2.stream().filter(id -> id != v1Ledger).findFirst().orElseThrow();
        JsonNode status = rest.status();
        assertEquals("cluster-a", Placement.owner(status.get("ranges"), v1Ledger));
        assertEquals("cluster-b", Placement.owner(status.get("ranges"), v2Ledger));
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(v2Ledger), "v2's ledger is on B");
        assertFalse(cluster.bookieCluster("cluster-a").ledgerIds().contains(v2Ledger));
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().contains(v1Ledger), "v1's ledger stays on A");

        // consumers with either schema read every message
        assertReceivesAll(c1, 20);
        assertReceivesAll(c2, 20);
        c1.close();
        c2.close();
        assertVersionsResolve(admin, topic);
        // the migration moves v1's ledger to B; the deletion below is of a migrated ledger (a delete racing with the
        // promotion is MigrationSafetyTest's and the sequence explorer's)
        JsonNode migration = rest.awaitMigrationFinished();
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(v1Ledger), "v1's ledger copied to B");

        // after a broker restart both versions still resolve, from both clusters
        cluster.broker(0).restart();
        PulsarAdmin admin2 = cluster.newAdmin();
        assertVersionsResolve(admin2, topic);
        try (PulsarClient client2 = cluster.newClient();
             Consumer<V1> again = client2.newConsumer(Schema.AVRO(V1.class)).topic(topic)
                     .subscriptionName("after-restart")
                     .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe()) {
            assertReceivesAll(again, 20);
        }

        // hard deletion removes each version's ledger from the cluster that holds it; v1 was migrated to B
        // after the switch, so both its copy there and its original on A go
        admin2.schemas().deleteSchema(topic, true);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertFalse(cluster.bookieCluster("cluster-a").ledgerIds().contains(v1Ledger), "v1 deleted on A");
            assertFalse(cluster.bookieCluster("cluster-b").ledgerIds().contains(v1Ledger), "v1's copy deleted on B");
            assertFalse(cluster.bookieCluster("cluster-b").ledgerIds().contains(v2Ledger), "v2 deleted on B");
        });
    }

    private static void assertVersionsResolve(PulsarAdmin admin, String topic) throws Exception {
        SchemaInfo v0 = admin.schemas().getSchemaInfo(topic, 0);
        SchemaInfo v1 = admin.schemas().getSchemaInfo(topic, 1);
        assertNotNull(v0);
        assertNotNull(v1);
        assertFalse(v0.getSchemaDefinition().contains("note"), v0.getSchemaDefinition());
        assertTrue(v1.getSchemaDefinition().contains("note"), v1.getSchemaDefinition());
        assertEquals(2, admin.schemas().getAllSchemas(topic).size());
    }

    private static <T> void assertReceivesAll(Consumer<T> consumer, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            Message<T> m = consumer.receive(30, TimeUnit.SECONDS);
            assertNotNull(m, "message " + i);
            int id = m.getValue() instanceof V1 v ? v.id : ((V2) m.getValue()).id;
            assertEquals(i, id);
            consumer.acknowledge(m);
        }
    }
}
