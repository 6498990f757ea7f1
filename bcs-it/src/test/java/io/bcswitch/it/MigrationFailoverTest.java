package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestBookie;
import io.bcswitch.testkit.TestBookieCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteAdvHandle;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The orchestrator's broker dies mid-BUILD (issue acceptance 3): the other broker takes over and
 * finishes; copies made before are recognised, the interrupted one is redone, nothing is copied into a
 * mismatch or lost. A target that already holds a different ledger with a colliding id (acceptance 4):
 * the collision is reported, the ledger stays home on the old cluster, nothing is overwritten.
 */
class MigrationFailoverTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(MigrationFailoverTest.class);
    private static final int TOPICS = 24;

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .brokers(2)
                // slow enough to stop the orchestrator's broker in the middle of BUILD
                .brokerConfig(p -> {
                    p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "1500");
                    p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_CONCURRENCY.fullName(), "2");
                })
                .start();
    }

    @Test
    void anotherBrokerFinishesAnInterruptedMigrationAndCollisionsAreLeftAlone() throws Exception {
        String ns = cluster.createTenant("failover");
        PulsarAdmin admin = cluster.newAdmin();
        List<String> topics;
        List<Long> schemaLedgers = new ArrayList<>();
        try (PulsarClient client = cluster.newClient()) {
            topics = SchemaTopics.create(client, ns, TOPICS);
        }
        for (String t : topics) {
            PersistentTopicInternalStats stats = admin.topics().getInternalStats(t, true);
            stats.schemaLedgers.forEach(l -> schemaLedgers.add(l.ledgerId));
        }
        assertEquals(TOPICS, schemaLedgers.size(), "one schema ledger per topic, on A");
        // B already holds a different ledger with the id of one of A's schema ledgers
        long colliding = schemaLedgers.get(schemaLedgers.size() - 1);
        byte[] foreign = "not a schema".getBytes(StandardCharsets.UTF_8);
        try (BookKeeper bkB = BookKeeper.forConfig(cluster.bookieCluster("cluster-b").clientConfiguration()).build()) {
            WriteAdvHandle w = bkB.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                    .withDigestType(DigestType.CRC32C).withPassword(new byte[0]).makeAdv().withLedgerId(colliding)
                    .execute().get();
            w.write(0, foreign);
            w.close();
        }

        Rest rest0 = new Rest(cluster.broker(0).webServiceUrl());
        Rest rest1 = new Rest(cluster.broker(1).webServiceUrl());
        assertEquals(200, rest0.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri()).status());
        Rest.Response sw = rest0.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());
        String owner0 = cluster.broker(0).pulsar().getBrokerId();
        // broker 0 accepted the switch, so it runs the migration; stop it once BUILD has copied some ledgers
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            JsonNode m = rest1.status().get("migration");
            return m != null && !m.isNull() && m.get("phase").asText().equals("BUILD") && m.get("copied").asInt() >= 3;
        });
        JsonNode before = rest1.status().get("migration");
        log.info("FAILOVER stopping broker 0 ({}) during BUILD: {}", owner0, before);
        assertEquals(owner0, before.get("owner").asText());
        cluster.broker(0).stop();

        JsonNode done = rest1.awaitMigrationFinished();
        log.info("FAILOVER migration finished by the other broker: {}", done);
        assertFalse(done.get("owner").asText().equals(owner0), "another broker resumed: " + done);
        assertEquals("DONE_WITH_FAILURES", done.get("phase").asText(), done.toString());
        assertEquals(1, done.get("collisions").asInt(), done.toString());
        assertEquals(0, done.get("failed").asInt(), done.toString());
        // every planned ledger (the topics' schemas and the namespace policy topic's) but the colliding one
        assertTrue(done.get("planned").asInt() >= TOPICS, done.toString());
        assertEquals(done.get("planned").asInt() - 1, done.get("promoted").asInt(), done.toString());
        assertEquals(done.get("planned").asInt() - 1, done.get("copied").asInt() + done.get("alreadyPresent").asInt(),
                "each ledger counted once: " + done);
        assertTrue(done.get("alreadyPresent").asInt() >= 1, "copies of the first run recognised: " + done);
        assertTrue(done.get("issues").toString().contains("\"ledgerId\":" + colliding), done.toString());

        // the colliding ledger on B is untouched, and the schema stays home on A
        try (BookKeeper bkB = BookKeeper.forConfig(cluster.bookieCluster("cluster-b").clientConfiguration()).build();
             ReadHandle r = bkB.newOpenLedgerOp().withLedgerId(colliding).withRecovery(false)
                     .withDigestType(DigestType.CRC32C).withPassword(new byte[0]).execute().get();
             LedgerEntries e = r.read(0, 0)) {
            assertEquals(0, r.getLastAddConfirmed());
            assertEquals("not a schema", new String(e.getEntry(0).getEntryBytes(), StandardCharsets.UTF_8));
        }
        JsonNode status = rest1.status();
        Set<Long> relocated = new HashSet<>();
        JsonNode relocations = rest1.get("/cleanup-targets/cluster-a").json();
        relocations.forEach(t -> relocated.add(t.get("ledgerId").asLong()));
        assertFalse(relocated.contains(colliding), "the colliding ledger is not relocated, so not a cleanup target");
        Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
        for (long id : schemaLedgers) {
            if (id != colliding) {
                assertTrue(onB.contains(id), "schema ledger " + id + " copied to B");
                assertTrue(relocated.contains(id), "schema ledger " + id + " relocated (its original is a target)");
            }
        }
        // every schema still resolves and every topic still takes its typed producer
        cluster.broker(0).start();
        try (PulsarClient client = cluster.newClient()) {
            SchemaTopics.assertUsable(admin, client, topics, -1);
        }
        log.info("FAILOVER status at the end: {}", status.get("migration"));

        // the operator removes the foreign ledger from B, restarts B's bookies one at a time as the runbook says
        // and runs the migration again: the ledger moves now. Without the restart the retry races the bookie's
        // garbage collector: once it has removed a ledger a bookie had written, the bookie refuses that id for days
        // (the run then ends DONE_WITH_FAILURES naming the restart), so the collection is forced first and the
        // test does what an operator must do, whatever the timing.
        try (BookKeeper bkB = BookKeeper.forConfig(cluster.bookieCluster("cluster-b").clientConfiguration()).build()) {
            bkB.newDeleteLedgerOp().withLedgerId(colliding).execute().get();
        }
        TestBookieCluster b = cluster.bookieCluster("cluster-b");
        for (TestBookie bookie : b.bookies()) {
            bookie.forceGarbageCollection(colliding);
        }
        for (TestBookie bookie : b.bookies()) {
            bookie.stop();
            bookie.start();
            b.awaitWritableBookies(b.bookieCount());
        }
        Rest.Response retry = rest1.post("/migration/retry", "");
        log.info("FAILOVER retry: {}", retry.raw());
        assertEquals(200, retry.status(), retry.raw());
        assertEquals("BUILD", retry.json().get("phase").asText(), retry.raw());
        JsonNode again = rest1.awaitMigrationFinished();
        log.info("FAILOVER migration run again: {}", again);
        assertEquals("DONE", again.get("phase").asText(), again.toString());
        assertEquals(0, again.get("collisions").asInt(), again.toString());
        assertEquals(done.get("planned").asInt(), again.get("promoted").asInt(), "every ledger promoted: " + again);
        assertEquals(1, again.get("copied").asInt(), "only the formerly colliding ledger is copied: " + again);
        // its original becomes a cleanup target once no broker may still read it on A (a schema read handle of the
        // callback API counts as held for 30 s after it was opened)
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(90)).untilAsserted(() -> {
            Set<Long> relocatedNow = new HashSet<>();
            rest1.get("/cleanup-targets/cluster-a").json().forEach(t -> relocatedNow.add(t.get("ledgerId").asLong()));
            assertTrue(relocatedNow.contains(colliding), "the formerly colliding ledger is relocated now");
        });
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(colliding));
        try (PulsarClient client = cluster.newClient()) {
            SchemaTopics.assertUsable(admin, client, topics.subList(topics.size() - 1, topics.size()), -2);
        }
    }
}
