package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestBookie;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ledger the broker holds open on the old cluster is not taken away under it. A compacted topic is
 * compacted on cluster-a and read compacted (the broker keeps the compacted ledger open for readers);
 * then cluster-a -> cluster-b is switched and the migration copies the compacted ledger to cluster-b and
 * promotes the copy (relocation). Each test starts its own cluster from there:
 * <ul>
 *   <li>{@code POST /cleanup {"srcCluster":"cluster-a","dryRun":false,"force":true}}, then the bookies
 *       garbage-collect what was deleted (forced now; they do it every gcWaitTime, 10 min by default):
 *       a new readCompacted reader must still read the whole compacted view (latest value of every
 *       key) within 30 s;</li>
 *   <li>the broker moves the compacted view's reader to cluster-b once it routes the ledger there: the drain
 *       report of cluster-a then lists no open handle, {@code POST /close-client/cluster-a} retires it, and the
 *       compacted view stays readable. (That close-client and cleanup wait while a handle is open is checked
 *       in MigrationSafetyTest.)</li>
 * </ul>
 */
class LongLivedHandleTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(LongLivedHandleTest.class);
    private static final String ROOT = "/admin/bookie-clusters";

    private PulsarAdmin admin;
    private PulsarClient client;
    private Rest rest;
    private String topic;
    private final Map<String, String> expected = new TreeMap<>();
    private long compactedLedger;

    @AfterEach
    void closeThisCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }

    /** Compacted on A and read; switched to B; migration DONE with the compacted ledger relocated to B. */
    private void compactedOnASwitchedAndMigrated(String tenant) throws Exception {
        cluster = twoBookieClusters()
                .brokerConfig(p -> p.setProperty("retentionCheckIntervalInSeconds", "1"))
                .start();
        String ns = cluster.createTenant(tenant);
        admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(0, 0));
        client = cluster.newClient();
        rest = new Rest(cluster.broker(0).webServiceUrl());
        topic = "persistent://" + ns + "/kv";
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create()) {
            for (int i = 0; i < 40; i++) {
                String key = "k" + (i % 8);
                String value = "v" + i;
                p.newMessage().key(key).value(value).send();
                expected.put(key, value);
            }
        }
        compactedLedger = Compacted.compact(admin, topic);
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().contains(compactedLedger), "compacted on A");
        assertEquals(expected, Compacted.view(client, topic), "compacted view on A");

        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        JsonNode migration = rest.awaitMigrationFinished();
        log.info("HANDLE migration: {}", migration);
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        JsonNode relocation = Registry.relocations(cluster.zkConnectString()).get(compactedLedger);
        assertNotNull(relocation, "the compacted ledger " + compactedLedger + " is relocated");
        assertEquals("cluster-b", relocation.get("home").asText());
        assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(compactedLedger), "its copy is on B");
        assertEquals(expected, Compacted.view(client, topic), "compacted view after the migration");
    }

    @Test
    void compactedViewSurvivesCleanupOfTheOriginal() throws Exception {
        compactedOnASwitchedAndMigrated("cleanup");
        // until the readers of the compacted view have moved to B, cleanup keeps what they hold on A (it says so in
        // its notes): wait for that, so that the cleanup below deletes the original
        awaitNoHandleOnA();
        Rest.Response cleanup = rest.post("/cleanup", "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"force\":true}");
        log.info("HANDLE cleanup of cluster-a: {} {}", cleanup.status(), cleanup.raw());
        assertEquals(200, cleanup.status(), cleanup.raw());
        assertFalse(cluster.bookieCluster("cluster-a").ledgerIds().contains(compactedLedger),
                "the original of compacted ledger " + compactedLedger + " is deleted: " + cleanup.raw());
        // what the bookies do within gcWaitTime (10 min by default), done now
        for (TestBookie b : cluster.bookieCluster("cluster-a").bookies()) {
            b.forceGarbageCollection(compactedLedger);
        }
        log.info("HANDLE the original of compacted ledger {} is deleted and garbage-collected on A", compactedLedger);

        String what = "a new compacted reader after cleanup of cluster-a reads the whole compacted view "
                + "(compacted ledger " + compactedLedger + ", original deleted on A)";
        await(what).atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                assertEquals(expected, Compacted.view(client, topic), what));
    }

    /**
     * The compacted view was read (its handle cached, on A) before the migration promoted it: once the broker routes
     * it to B, its readers are moved there (the topic is unloaded and reopens it on B), so that A holds nothing and no
     * handle, can be retired with close-client, and the compacted view keeps working.
     */
    @Test
    void aCompactedViewReadBeforeItsPromotionMovesToTheNewHomeSoTheOldClusterCanBeRetired() throws Exception {
        compactedOnASwitchedAndMigrated("close");
        awaitNoHandleOnA();
        Rest.Response close = rest.post("/close-client/cluster-a", "");
        log.info("HANDLE close-client cluster-a: {} {}", close.status(), close.raw());
        assertEquals(200, close.status(), close.raw());
        assertEquals("DEPRECATED", close.json().get("status").asText());
        await("a new compacted reader after close-client reads the whole compacted view")
                .atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                        assertEquals(expected, Compacted.view(client, topic)));
    }

    /** Nothing referenced is left on A and no broker holds a handle there any more. */
    private void awaitNoHandleOnA() {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            JsonNode d = rest.get("/drain/cluster-a").json();
            assertTrue(d.get("empty").asBoolean(), "drain report of A: " + d);
            assertTrue(d.get("openHandles").isEmpty(), "no broker holds a handle on A any more: " + d
                    + "; the brokers' records (openLedgers names the ledgers): " + rest.status().get("brokers"));
        });
    }
}
