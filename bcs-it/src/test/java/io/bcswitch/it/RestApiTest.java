package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Acceptance 5: every endpoint through the real servlet on a real broker, success and error cases; a
 * rejected request leaves the registry and the managed-ledger metadata byte-for-byte as they were.
 */
class RestApiTest extends ClusterTestBase {
    private static Rest rest;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .bookieCluster("cluster-c", 1)
                .brokers(1)
                .start();
        rest = new Rest(cluster.broker(0).webServiceUrl());
        // the broker publishes its progress record once after start-up; wait for it, so that the
        // "nothing changed" snapshots below only see what requests do
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            JsonNode brokers = rest.status().get("brokers");
            return brokers.size() == 1 && brokers.get(0).get("finishedAt").asLong() > 0;
        });
    }

    private static Map<String, String> snapshot() throws Exception {
        return Registry.registryAndManagedLedgers(cluster);
    }

    /** Asserts the call is refused with {@code status}, a JSON error mentioning {@code text}, and no change. */
    private static Rest.Response refused(int status, String text, java.util.function.Supplier<Rest.Response> call)
            throws Exception {
        Map<String, String> before = snapshot();
        Rest.Response r = call.get();
        assertEquals(status, r.status(), r.raw());
        assertNotNull(r.error(), "JSON error body expected: " + r.raw());
        assertTrue(r.error().contains(text), "error '" + r.error() + "' should mention '" + text + "'");
        assertEquals(before, snapshot(), "a refused request must not change the metadata store");
        return r;
    }

    @Test
    void endpointsSucceedAndRefuseBadInputWithoutChangingAnything() throws Exception {
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        String uriC = cluster.bookieCluster("cluster-c").metadataServiceUri();

        // list and get
        Rest.Response list = rest.get("/");
        assertEquals(200, list.status(), list.raw());
        assertEquals(1, list.json().size());
        assertEquals("cluster-a", list.json().get(0).get("name").asText());
        assertEquals("ACTIVE", list.json().get(0).get("status").asText());
        // the base path without its trailing slash answers the same list, not a redirect
        Rest.Response bare = rest.get("");
        assertEquals(200, bare.status(), bare.raw());
        assertEquals(list.json(), bare.json());
        Rest.Response a = rest.get("/cluster-a");
        assertEquals(200, a.status());
        assertEquals(cluster.bookieCluster("cluster-a").metadataServiceUri(), a.json().get("metadataServiceUri").asText());
        refused(404, "not registered", () -> rest.get("/cluster-x"));
        refused(400, "must match", () -> rest.get("/bad%20name"));
        refused(404, "no such endpoint", () -> rest.get("/a/b/c"));

        // register: bad input first
        refused(415, "application/json", () -> rest.request("POST", "/cluster-b", "text/plain",
                ("{\"metadataServiceUri\":\"" + uriB + "\"}").getBytes(StandardCharsets.UTF_8)));
        refused(400, "not valid JSON", () -> rest.post("/cluster-b", "{\"metadataServiceUri\":"));
        refused(400, "not valid JSON", () -> rest.post("/cluster-b", "{\"metadataServiceUri\":\"" + uriB + "\"} x"));
        refused(400, "JSON object", () -> rest.post("/cluster-b", "[1,2]"));
        refused(400, "is required", () -> rest.post("/cluster-b", "{}"));
        refused(400, "unknown field", () -> rest.post("/cluster-b", "{\"uri\":\"" + uriB + "\"}"));
        refused(400, "must be a string", () -> rest.post("/cluster-b", "{\"metadataServiceUri\":42}"));
        refused(400, "empty", () -> rest.request("POST", "/cluster-b", "application/json", new byte[0]));
        refused(400, "scheme", () -> rest.register("cluster-b", "http://127.0.0.1:2181/ledgers"));
        refused(400, "no ledgers root", () -> rest.register("cluster-b", "zk+hierarchical://127.0.0.1:2181"));
        refused(400, "reserved", () -> rest.register("status", uriB));
        refused(400, "must match", () -> rest.register("a%24b", uriB));
        refused(400, "must match", () -> rest.register("x".repeat(65), uriB));
        refused(400, "not initialised", () -> rest.register("cluster-z",
                "zk+hierarchical://" + cluster.zkConnectString() + "/bk/nowhere/ledgers"));
        refused(409, "same bookie cluster", () -> rest.register("cluster-b2",
                cluster.bookieCluster("cluster-a").metadataServiceUri()));
        refused(413, "larger than", () -> rest.request("POST", "/cluster-b", "application/json",
                new byte[1024 * 1024 + 10]));
        refused(405, "not allowed", () -> rest.request("DELETE", "/status", null, null));
        refused(405, "not allowed", () -> rest.request("PUT", "/cluster-b", "application/json",
                "{}".getBytes(StandardCharsets.UTF_8)));

        // register: success, then duplicates
        Rest.Response reg = rest.register("cluster-b", uriB);
        assertEquals(200, reg.status(), reg.raw());
        assertEquals("STANDBY", reg.json().get("status").asText());
        refused(409, "already registered", () -> rest.register("cluster-b", uriC));
        refused(409, "same bookie cluster", () -> rest.register("cluster-b2", uriB));
        // the same ensemble and root spelled differently is still the same cluster
        refused(409, "same bookie cluster", () -> rest.register("cluster-b3",
                uriB.replace("zk+hierarchical://127.0.0.1", "zk://localhost") + "/"));
        assertEquals(200, rest.register("cluster-c", uriC).status());
        assertEquals(3, rest.get("/").json().size());

        // precheck
        Rest.Response pre = rest.get("/precheck/cluster-b");
        assertEquals(200, pre.status(), pre.raw());
        assertTrue(pre.json().get("ok").asBoolean(), pre.raw());
        assertEquals("cluster-a", pre.json().get("source").asText());
        assertTrue(pre.json().get("sourceReachable").asBoolean());
        assertTrue(pre.json().get("proposedFirstLedgerId").asLong() >= (1L << 32));
        assertEquals(2, pre.json().get("targetFacts").get("writableBookies").asInt());
        // two writable bookies for an ensemble of two: allowed, but the operator is warned
        assertTrue(pre.json().get("warnings").toString().contains("exactly 2 writable bookies"), pre.raw());
        refused(404, "not registered", () -> rest.get("/precheck/cluster-x"));
        // cluster-c has one bookie, fewer than the ensemble size (2): precheck says why
        Rest.Response preC = rest.get("/precheck/cluster-c");
        assertEquals(200, preC.status());
        assertTrue(!preC.json().get("ok").asBoolean()
                && preC.json().get("problems").toString().contains("writable bookies"), preC.raw());
        Rest.Response preA = rest.get("/precheck/cluster-a");
        assertTrue(preA.json().get("problems").toString().contains("already active"), preA.raw());

        // switch: refusals
        refused(415, "application/json", () -> rest.request("POST", "/switch", "application/x-www-form-urlencoded",
                "target=cluster-b".getBytes(StandardCharsets.UTF_8)));
        refused(400, "not valid JSON", () -> rest.post("/switch", "{target: cluster-b}"));
        refused(400, "is required", () -> rest.post("/switch", "{\"target\":null}"));
        refused(404, "not registered", () -> rest.switchTo("cluster-x"));
        refused(400, "must match", () -> rest.switchTo("../cluster-b"));
        Rest.Response self = refused(409, "already active", () -> rest.switchTo("cluster-a"));
        assertNotNull(self.json().get("precheck"), "409 carries the precheck report");
        Rest.Response weak = refused(409, "writable bookies", () -> rest.switchTo("cluster-c"));
        assertTrue(!weak.json().get("precheck").get("ok").asBoolean());
        refused(405, "not allowed", () -> rest.get("/switch"));

        // switch: success, and status
        JsonNode before = rest.status();
        assertEquals("cluster-a", before.get("activeCluster").asText());
        assertEquals(0, before.get("epoch").asLong());
        assertEquals(1, before.get("ranges").size());
        Rest.Response sw = rest.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());
        assertEquals(1, sw.json().get("directive").get("epoch").asLong());
        assertEquals("cluster-a", sw.json().get("directive").get("origin").asText());
        rest.awaitCutoverComplete();
        JsonNode after = rest.status();
        assertEquals("cluster-b", after.get("activeCluster").asText());
        assertEquals(1, after.get("epoch").asLong());
        assertEquals(2, after.get("ranges").size());
        assertEquals("cluster-b", after.get("ranges").get(1).get("cluster").asText());
        assertEquals(1, after.get("brokers").size());
        assertEquals(1, after.get("brokers").get(0).get("appliedEpoch").asLong());
        assertEquals(0, after.get("pendingBrokers").size(), after.toString());
        assertEquals("ACTIVE", rest.get("/cluster-b").json().get("status").asText());
        assertEquals("STANDBY", rest.get("/cluster-a").json().get("status").asText());
        rest.awaitMigrationFinished(); // it writes its progress to the registry
        refused(409, "already active", () -> rest.switchTo("cluster-b"));

        // long operations started asynchronously: 202 and an operation at once, then polled to the answer the
        // synchronous call gives
        JsonNode drainNow = rest.get("/drain/cluster-a").json();
        JsonNode drain = finished(rest.get("/drain/cluster-a?async=true"), "drain", "DONE");
        assertEquals(200, drain.get("httpStatus").asInt());
        assertEquals("cluster-a", drain.get("parameters").get("cluster").asText());
        assertEquals(drainNow.get("ledgers"), drain.get("result").get("ledgers"), drain.toString());
        // what the work itself refuses ends the operation FAILED, with the synchronous call's answer
        JsonNode windowed = finished(rest.post("/cleanup?async=true", "{\"srcCluster\":\"cluster-a\"}"), "cleanup",
                "FAILED");
        assertEquals(409, windowed.get("httpStatus").asInt(), windowed.toString());
        assertTrue(windowed.get("result").get("reason").asText().contains("rollback window"), windowed.toString());
        java.util.Set<Long> onA = cluster.bookieCluster("cluster-a").ledgerIds();
        JsonNode cleanup = finished(rest.post("/cleanup?async=true", "{\"srcCluster\":\"cluster-a\",\"force\":true}"),
                "cleanup", "DONE");
        assertTrue(cleanup.get("parameters").get("dryRun").asBoolean(), "dry run unless told otherwise: " + cleanup);
        assertEquals(0, cleanup.get("result").get("deleted").asInt(), cleanup.toString());
        assertEquals(onA, cluster.bookieCluster("cluster-a").ledgerIds(), "a dry run deletes nothing");
        JsonNode verify = finished(rest.get("/verify?async=true&deep=true"), "verify", "DONE");
        assertTrue(verify.get("parameters").get("deep").asBoolean());
        assertEquals(rest.get("/verify").json().get("ok"), verify.get("result").get("ok"), verify.toString());
        // refused as the synchronous call would be, before anything is recorded
        refused(404, "not registered", () -> rest.get("/drain/cluster-x?async=true"));
        refused(409, "active cluster", () -> rest.post("/cleanup?async=true", "{\"srcCluster\":\"cluster-b\"}"));
        refused(404, "no operation", () -> rest.get("/operations/drain-unknown"));
        JsonNode all = rest.get("/operations").json();
        assertEquals(List.of("verify", "cleanup", "cleanup", "drain"), java.util.stream.StreamSupport.stream(all.spliterator(),
                false).map(o -> o.get("operation").asText()).toList(), "newest first: " + all);
    }

    /** The operation a 202 answer started, polled (30 s at most) until it is no longer RUNNING. */
    private static JsonNode finished(Rest.Response started, String operation, String state) {
        assertEquals(202, started.status(), started.raw());
        assertEquals(operation, started.json().get("operation").asText(), started.raw());
        String id = started.json().get("id").asText();
        JsonNode[] seen = new JsonNode[1];
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            seen[0] = rest.get("/operations/" + id).json();
            return !"RUNNING".equals(seen[0].get("state").asText());
        });
        assertEquals(state, seen[0].get("state").asText(), seen[0].toString());
        return seen[0];
    }
}
