package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The precheck builds the client the brokers will build (the broker's own BookKeeper client factory and settings)
 * and proves it can create, write, read and delete a ledger on the target: a target whose metadata looks healthy
 * (registered, initialised, enough writable bookies) but that a broker cannot use is refused before any broker is
 * told to switch, and the refusal changes nothing. Here the broker cannot build a client for cluster-b (the fixture's
 * fault hook, as if cluster-b's metadata service were unreachable from the broker only).
 */
class PrecheckProbeTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().start();
    }

    @Test
    void aTargetTheBrokersCannotUseIsRefusedBeforeTheSwitch() throws Exception {
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String uri = cluster.bookieCluster("cluster-b").metadataServiceUri();
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
}
