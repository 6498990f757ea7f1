package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestBookieCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two brokers, one of which is cut off from the metadata store at chosen moments (its session and
 * ephemeral nodes stay alive, it just does not see the relocation table change):
 * <ul>
 *   <li>the orchestrator's broker is stopped in the middle of PROMOTE (issue acceptance 3): the other
 *       broker resumes and finishes, every copy identical to its original, none promoted twice;</li>
 *   <li>nothing is deleted from a cluster until every live broker has applied the relocation epoch that
 *       moved it: originals relocated in an epoch the lagging broker has not applied are not cleanup
 *       targets, and a rollback's copies stay until the lagging broker has applied the flip.</li>
 * </ul>
 */
class MigrationLaggingBrokerTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(MigrationLaggingBrokerTest.class);
    private static final String ROOT = "/admin/bookie-clusters";
    private static final int TOPICS = 12;

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .brokers(2)
                .pausableMetadataLinks()
                .brokerConfig(p -> {
                    // BUILD slow enough (a few seconds) to cut broker 1 off before PROMOTE starts
                    p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "1200");
                    p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_PROMOTE_BATCH_SIZE.fullName(), "2");
                    // the cut-offs below last well under this
                    p.setProperty("metadataStoreSessionTimeoutMillis", "45000");
                })
                .start();
    }

    @Test
    void promoteSurvivesItsBrokerAndNothingIsDeletedWhileABrokerLags() throws Exception {
        String ns = cluster.createTenant("lagging");
        PulsarAdmin admin = cluster.newAdmin();
        List<String> topics;
        try (PulsarClient client = cluster.newClient()) {
            topics = SchemaTopics.create(client, ns, TOPICS);
        }
        Rest rest0 = new Rest(cluster.broker(0).webServiceUrl());
        Rest rest1 = new Rest(cluster.broker(1).webServiceUrl());
        String broker0 = cluster.broker(0).pulsar().getBrokerId();
        String broker1 = cluster.broker(1).pulsar().getBrokerId();
        assertEquals(200, rest0.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri()).status());
        Rest.Response sw = rest0.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());

        // --- broker 1 falls behind while broker 0 (which accepted the switch) runs the migration ---
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> {
            JsonNode m = rest0.status().get("migration");
            return m != null && !m.isNull() && m.get("phase").asText().equals("BUILD");
        });
        cluster.broker(1).metadataLink().pause();
        JsonNode stalled = awaitMigration(rest0, m -> m.get("phase").asText().equals("PROMOTE")
                && m.get("promoted").asInt() >= 2);
        long relocationEpoch = rest0.status().get("relocationEpoch").asLong();
        Map<String, JsonNode> applied = Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied");
        log.info("LAGGING PROMOTE waits for broker 1: migration {}, relocation epoch {}, applied {}", stalled,
                relocationEpoch, applied);
        assertEquals(broker0, stalled.get("owner").asText());
        assertTrue(applied.get(broker1).get("epoch").asLong() < relocationEpoch, "broker 1 lags: " + applied);
        assertEquals("[\"" + broker1 + "\"]", rest0.status().get("relocationPendingBrokers").toString(),
                "status names the broker PROMOTE waits for");
        Thread.sleep(1_500);
        JsonNode still = rest0.status().get("migration");
        assertEquals("PROMOTE", still.get("phase").asText(), still.toString());
        assertEquals(stalled.get("promoted").asInt(), still.get("promoted").asInt(),
                "the next batch waits until every live broker has applied the last one");

        // what broker 0 promoted is not a cleanup target while broker 1 may still read the originals
        Set<Long> promotedSoFar = relocatedLedgers();
        assertFalse(promotedSoFar.isEmpty());
        Set<Long> targetsWhileLagging = cleanupTargets(rest0, "RELOCATED");
        assertTrue(targetsWhileLagging.isEmpty(), "no original is deletable while broker 1 lags: "
                + targetsWhileLagging + " (relocated: " + promotedSoFar + ")");

        // --- the orchestrator's broker goes away in the middle of PROMOTE; broker 1 catches up and takes over ---
        int promotedByBroker0 = still.get("promoted").asInt();
        cluster.broker(0).stop();
        cluster.broker(1).metadataLink().resume();
        JsonNode done = rest1.awaitMigrationFinished();
        log.info("LAGGING migration finished by broker 1: {}", done);
        assertEquals("[]", rest1.status().get("relocationPendingBrokers").toString());
        assertEquals("DONE", done.get("phase").asText(), done.toString());
        assertEquals(broker1, done.get("owner").asText());
        int planned = done.get("planned").asInt();
        assertTrue(planned >= TOPICS, "the topics' schema ledgers (and the policy topic's): " + done);
        assertEquals(planned, done.get("promoted").asInt(), done.toString());
        assertEquals(0, done.get("failed").asInt(), done.toString());
        assertEquals(0, done.get("collisions").asInt(), done.toString());
        assertEquals(planned - promotedByBroker0, done.get("copied").asInt() + done.get("alreadyPresent").asInt(),
                "the resumed run handles each ledger not yet promoted once: " + done);

        // every relocation points at a copy on B identical to its original on A
        Set<Long> relocated = relocatedLedgers();
        assertEquals(planned, relocated.size(), "one relocation per ledger");
        assertTrue(relocated.containsAll(promotedSoFar));
        for (long id : relocated) {
            assertIdentical(id, cluster.bookieCluster("cluster-a"), cluster.bookieCluster("cluster-b"));
        }
        // the only live broker (1) has applied everything: now the originals are cleanup targets
        assertEquals(relocated, cleanupTargets(rest1, "RELOCATED"));

        // every schema resolves and every topic takes its typed producer, with broker 0 back
        cluster.broker(0).start();
        try (PulsarClient client = cluster.newClient()) {
            SchemaTopics.assertUsable(admin, client, topics, -1);
        }

        // --- a rollback while broker 1 lags: the copies on B stay until broker 1 has applied the flip ---
        Rest rest0b = new Rest(cluster.broker(0).webServiceUrl());
        await().atMost(Duration.ofSeconds(30)).until(() -> appliedEverywhere(rest0b.status().get("relocationEpoch")
                .asLong()));
        cluster.broker(1).metadataLink().pause();
        Rest.Response rb = rest0b.post("/rollback", "");
        log.info("LAGGING rollback while broker 1 lags: {}", rb.raw());
        assertEquals(200, rb.status(), rb.raw());
        assertEquals(relocated.size(), rb.json().get("copiesToDelete").asInt(), rb.raw());
        long flip = rest0b.status().get("relocationEpoch").asLong();
        await().atMost(Duration.ofSeconds(30)).until(() -> Registry.jsonChildren(cluster.zkConnectString(),
                ROOT + "/relocation-applied").get(broker0).get("epoch").asLong() >= flip);
        // several orchestrator passes on broker 0 (one every 2 s) find broker 1 behind and delete nothing
        Thread.sleep(6_000);
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().containsAll(relocated),
                "no copy deleted from B while broker 1 may still read it");
        cluster.broker(1).metadataLink().resume();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
            assertTrue(relocated.stream().noneMatch(onB::contains), "copies deleted once broker 1 applied the flip");
        });
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().containsAll(relocated), "originals kept on A");
        rest0b.awaitCutoverComplete();
        try (PulsarClient client = cluster.newClient()) {
            SchemaTopics.assertUsable(admin, client, topics, -2);
        }
    }

    private static JsonNode awaitMigration(Rest rest, java.util.function.Predicate<JsonNode> condition) {
        JsonNode[] seen = new JsonNode[1];
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            JsonNode m = rest.status().get("migration");
            seen[0] = m;
            return m != null && !m.isNull() && condition.test(m);
        });
        return seen[0];
    }

    private static Set<Long> relocatedLedgers() throws Exception {
        Set<Long> ids = new TreeSet<>();
        Registry.relocations(cluster.zkConnectString()).forEach((id, r) -> ids.add(r.get("ledgerId").asLong()));
        return ids;
    }

    private static Set<Long> cleanupTargets(Rest rest, String reason) {
        Rest.Response r = rest.get("/cleanup-targets/cluster-a");
        assertEquals(200, r.status(), r.raw());
        Set<Long> ids = new TreeSet<>();
        r.json().forEach(t -> {
            if (t.get("reason").asText().equals(reason)) {
                ids.add(t.get("ledgerId").asLong());
            }
        });
        return ids;
    }

    private static boolean appliedEverywhere(long epoch) throws Exception {
        Map<String, JsonNode> applied = Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied");
        return applied.size() == 2 && applied.values().stream().allMatch(a -> a.get("epoch").asLong() >= epoch);
    }

    /** Same metadata shape and the same payload in every entry, read straight from each cluster's bookies. */
    private static void assertIdentical(long id, TestBookieCluster a, TestBookieCluster b) throws Exception {
        try (BookKeeper bkA = BookKeeper.forConfig(a.clientConfiguration()).build();
             BookKeeper bkB = BookKeeper.forConfig(b.clientConfiguration()).build()) {
            LedgerMetadata ma = bkA.getLedgerMetadata(id).get();
            LedgerMetadata mb = bkB.getLedgerMetadata(id).get();
            assertTrue(ma.isClosed() && mb.isClosed(), "ledger " + id + " closed on both");
            assertEquals(ma.getLastEntryId(), mb.getLastEntryId(), "ledger " + id);
            assertEquals(ma.getLength(), mb.getLength(), "ledger " + id);
            // the copy carries the original's custom metadata and the mark naming where it was copied from
            java.util.Set<String> copyKeys = new java.util.TreeSet<>(mb.getCustomMetadata().keySet());
            assertTrue(copyKeys.remove("bookie-cluster-switch/copy-of"), "ledger " + id + " marked as a copy");
            assertEquals(a.name(), new String(mb.getCustomMetadata().get("bookie-cluster-switch/copy-of"),
                    java.nio.charset.StandardCharsets.UTF_8), "ledger " + id + " copied from " + a.name());
            assertEquals(new java.util.TreeSet<>(ma.getCustomMetadata().keySet()), copyKeys, "ledger " + id);
            assertNotEquals(-1, ma.getLastEntryId(), "ledger " + id + " has entries");
            List<byte[]> ea = entries(bkA, id, ma);
            List<byte[]> eb = entries(bkB, id, mb);
            assertEquals(ea.size(), eb.size());
            for (int i = 0; i < ea.size(); i++) {
                assertArrayEquals(ea.get(i), eb.get(i), "ledger " + id + " entry " + i);
            }
        }
    }

    private static List<byte[]> entries(BookKeeper bk, long id, LedgerMetadata m) throws Exception {
        List<byte[]> out = new ArrayList<>();
        try (ReadHandle r = bk.newOpenLedgerOp().withLedgerId(id).withRecovery(false)
                .withDigestType(m.getDigestType()).withPassword(m.getPassword()).execute().get();
             LedgerEntries es = r.read(0, m.getLastEntryId())) {
            for (LedgerEntry e : es) {
                out.add(e.getEntryBytes());
            }
        }
        return out;
    }
}
