package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The precheck builds the client the brokers will build (the broker's own BookKeeper client factory and settings)
 * and proves it can create, write, read and delete a ledger on the target: a target whose metadata looks healthy
 * (registered, initialised, enough writable bookies) but that a broker cannot use is refused before any broker is
 * told to switch, and the refusal changes nothing. Here the broker cannot build a client for cluster-b (the fixture's
 * fault hook, as if cluster-b's metadata service were unreachable from the broker only). And when only another
 * broker cannot use the target, the switch goes ahead, that broker keeps retrying, and the operator can roll it
 * back.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PrecheckProbeTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().brokers(2).start();
    }

    @Test
    @Order(1)
    void aTargetTheBrokersCannotUseIsRefusedBeforeTheSwitch() throws Exception {
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String uri = cluster.bookieCluster("cluster-b").metadataServiceUri();
        // both brokers have announced themselves (their records are part of what must not change)
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> rest.status().get("brokers").size() == 2
                && rest.status().get("relocationPendingBrokers").isEmpty());
        assertEquals(200, rest.register("cluster-b", uri).status());

        cluster.broker(0).failBookKeeperClients(uri);
        JsonNode pre = rest.get("/precheck/cluster-b").json();
        assertFalse(pre.get("ok").asBoolean(), pre.toString());
        assertTrue(pre.get("problems").toString().contains("a broker's BookKeeper client cannot use 'cluster-b'"),
                pre.toString());
        assertEquals(2, pre.get("targetFacts").get("writableBookies").asInt(), "its metadata looks healthy");

        Map<String, String> before = Registry.registryAndManagedLedgers(cluster);
        Rest.Response sw = rest.switchTo("cluster-b");
        assertEquals(409, sw.status(), sw.raw());
        assertTrue(sw.error().contains("cannot use 'cluster-b'"), sw.raw());
        assertEquals(before, Registry.registryAndManagedLedgers(cluster), "a refused switch changes nothing");

        cluster.broker(0).healBookKeeperClients();
        assertTrue(rest.get("/precheck/cluster-b").json().get("ok").asBoolean());
        assertEquals(200, rest.switchTo("cluster-b").status());
        rest.awaitCutoverComplete();
        assertEquals("cluster-b", rest.status().get("activeCluster").asText());
    }

    @Test
    @Order(2)
    void aBrokerThatCannotActivateASwitchDoesNotBlockItsRollback() throws Exception {
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String uri = cluster.bookieCluster("cluster-a").metadataServiceUri();
        assertEquals("cluster-b", rest.status().get("activeCluster").asText());
        cluster.broker(1).failBookKeeperClients(uri);
        try {
            assertEquals(200, rest.switchTo("cluster-a").status(), "broker 0 can use cluster-a");
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> rest.status().toString()
                    .contains("activationError\":\"") );
            Rest.Response rb = rest.post("/rollback", "");
            assertEquals(200, rb.status(), "the rollback is what cures it: " + rb.raw());
        } finally {
            cluster.broker(1).healBookKeeperClients();
        }
        rest.awaitCutoverComplete();
        JsonNode st = rest.status();
        assertEquals("cluster-b", st.get("activeCluster").asText(), st.toString());
        assertEquals(3, st.get("epoch").asLong(), st.toString());
    }

    @Test
    @Order(3)
    void aProbeWhoseWriteFailsAfterItsLedgerWasCreatedLeavesNothingBehind() throws Exception {
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        assertEquals("cluster-b", rest.status().get("activeCluster").asText());
        var a = cluster.bookieCluster("cluster-a");
        // registered and connected, but answering nothing: the probe ledger's metadata is created, its write hangs
        a.bookies().forEach(b -> b.suspend());
        try {
            java.util.concurrent.CompletableFuture<Rest.Response> asked = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> rest.get("/precheck/cluster-a"));
            // the probe's ledger is created (its metadata is there) while its write hangs
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> !probeBandLedgers(a).isEmpty() || asked.isDone());
            assertFalse(probeBandLedgers(a).isEmpty(), "no probe ledger was created: " + (asked.isDone()
                    ? asked.join().raw() : "the precheck has not answered"));
            JsonNode pre = asked.get(60, java.util.concurrent.TimeUnit.SECONDS).json();
            assertFalse(pre.get("ok").asBoolean(), pre.toString());
            assertTrue(pre.get("problems").toString().contains("a broker's BookKeeper client cannot use 'cluster-a'"),
                    pre.toString());
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> probeBandLedgers(a).isEmpty());
        } finally {
            a.bookies().forEach(b -> b.resume());
        }
        // the bookies answer again once they have caught up: a precheck then passes
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> rest.get("/precheck/cluster-a").json().get("ok")
                .asBoolean());
        assertEquals(java.util.Set.of(), probeBandLedgers(a), "a probe that succeeded deletes its ledger too");
    }

    private static java.util.Set<Long> probeBandLedgers(io.bcswitch.testkit.TestBookieCluster c) throws Exception {
        java.util.Set<Long> out = new java.util.TreeSet<>(c.ledgerIds());
        out.removeIf(id -> !io.bcswitch.registry.IdSpace.isProbeId(id));
        return out;
    }
}
