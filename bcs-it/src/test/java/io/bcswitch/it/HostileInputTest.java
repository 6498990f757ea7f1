package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hostile input against the REST API of real brokers: every case must be refused with the expected
 * status and a JSON error that says what is wrong, and must leave the metadata store (the registry
 * and {@code /managed-ledgers}) byte-for-byte as it was. Ends with two concurrent switches to different
 * targets through different brokers: exactly one wins, the other gets 409, both brokers converge.
 */
class HostileInputTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(HostileInputTest.class);

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .bookieCluster("cluster-c", 2)
                .brokers(2)
                .brokerConfig(p -> p.setProperty(io.bcswitch.config.ConfigKey.PROBE_TIMEOUT_SECONDS.fullName(), "3"))
                .start();
    }

    private record Case(String name, int status, String errorMentions, Supplier<Rest.Response> call) {
    }

    private static Map<String, String> snapshot() throws Exception {
        return Registry.registryAndManagedLedgers(cluster);
    }

    @Test
    void hostileRequestsAreRefusedClearlyAndChangeNothing() throws Exception {
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        Rest rest1 = new Rest(cluster.broker(1).webServiceUrl());
        String uriA = cluster.bookieCluster("cluster-a").metadataServiceUri();
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        String uriC = cluster.bookieCluster("cluster-c").metadataServiceUri();
        await().atMost(Duration.ofSeconds(60)).until(() -> rest.status().get("brokers").size() == 2
                && rest.status().get("cutoverComplete").asBoolean());
        // data on cluster-a, so that A owns ledgers the brokers reference: a subscription that never reads keeps
        // them (without one, the cutover's rollover let Pulsar trim them at once, and unregister was rightly accepted
        // on a slow run)
        String ns = cluster.createTenant("hostile");
        try (PulsarClient client = cluster.newClient();
             Producer<String> p = client.newProducer(Schema.STRING).topic("persistent://" + ns + "/t").create()) {
            client.newConsumer(Schema.STRING).topic("persistent://" + ns + "/t").subscriptionName("unread")
                    .subscribe().close();
            for (int i = 0; i < 10; i++) {
                p.send("m" + i);
            }
        }
        assertEquals(200, rest.register("cluster-b", uriB).status());
        assertEquals(200, rest.register("cluster-c", uriC).status());

        try (ServerSocket silent = new ServerSocket(0); ServerSocket closed = new ServerSocket(0)) {
            int closedPort = closed.getLocalPort();
            closed.close();
            List<Socket> accepted = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept()); // accept and never answer
                    }
                } catch (IOException e) {
                    // closed at the end
                }
            }, "silent-zookeeper");
            acceptor.setDaemon(true);
            acceptor.start();
            String body = "{\"metadataServiceUri\":\"" + uriB + "\"}";
            List<Case> cases = List.of(
                    // names
                    new Case("empty name (POST on the collection)", 405, "not allowed", () -> rest.post("/", body)),
                    new Case("blank name", 400, "must match", () -> rest.register("%20", uriB)),
                    new Case("65-character name", 400, "must match", () -> rest.register("n".repeat(65), uriB)),
                    new Case("1000-character name", 400, "must match", () -> rest.register("n".repeat(1000), uriB)),
                    // "/." is normalised away by the web server: a POST on the collection
                    new Case("single dot name", 405, "not allowed", () -> rest.register("%2E", uriB)),
                    new Case("dot-dot inside a name", 400, "must match", () -> rest.register("..%5C..", uriB)),
                    new Case("traversal in name", 400, "must match", () -> rest.register("..%5C..%5Cetc", uriB)),
                    new Case("unicode letters", 400, "must match", () -> rest.register("cl%C3%BCster", uriB)),
                    new Case("right-to-left override", 400, "must match", () -> rest.register("a%E2%80%AEb", uriB)),
                    new Case("CJK name", 400, "must match", () -> rest.register("%E5%90%8D%E5%89%8D", uriB)),
                    new Case("shell metacharacters", 400, "must match", () -> rest.register("a%3Brm%20-rf", uriB)),
                    new Case("reserved word", 400, "reserved", () -> rest.register("status", uriB)),
                    new Case("get invalid name", 400, "must match", () -> rest.get("/a%24b")),
                    // URIs
                    new Case("http scheme", 400, "scheme", () -> rest.register("x1", "http://127.0.0.1:2181/ledgers")),
                    new Case("file scheme", 400, "scheme", () -> rest.register("x1", "file:///etc/passwd")),
                    new Case("no host", 400, "", () -> rest.register("x1", "zk+hierarchical:///ledgers")),
                    new Case("no ledgers root", 400, "no ledgers root",
                            () -> rest.register("x1", "zk+hierarchical://127.0.0.1:2181")),
                    new Case("unparseable URI", 400, "invalid host", () -> rest.register("x1", "zk+hierarchical://[::1/ledgers")),
                    new Case("not a URI", 400, "", () -> rest.register("x1", "%%% not a uri")),
                    new Case("port out of range", 400, "", () -> rest.register("x1",
                            "zk+hierarchical://127.0.0.1:99999/ledgers")),
                    new Case("ZooKeeper port closed", 400, "cannot read bookie cluster metadata",
                            () -> rest.register("x1", "zk+hierarchical://127.0.0.1:" + closedPort + "/ledgers")),
                    new Case("ZooKeeper that never answers", 400, "cannot read bookie cluster metadata",
                            () -> rest.register("x1", "zk+hierarchical://127.0.0.1:" + silent.getLocalPort()
                                    + "/ledgers")),
                    new Case("uninitialised ledgers root", 400, "not initialised", () -> rest.register("x1",
                            "zk+hierarchical://" + cluster.zkConnectString() + "/bk/nowhere/ledgers")),
                    new Case("broker's own metadata root", 400, "", () -> rest.register("x1",
                            "zk+hierarchical://" + cluster.zkConnectString() + "/managed-ledgers")),
                    // bodies and content types
                    new Case("text/plain body", 415, "application/json", () -> rest.request("POST", "/x1",
                            "text/plain", body.getBytes(StandardCharsets.UTF_8))),
                    new Case("no content type", 415, "application/json", () -> rest.request("POST", "/x1",
                            null, body.getBytes(StandardCharsets.UTF_8))),
                    new Case("form-encoded switch", 415, "application/json", () -> rest.request("POST", "/switch",
                            "application/x-www-form-urlencoded", "target=cluster-b".getBytes(StandardCharsets.UTF_8))),
                    new Case("truncated JSON", 400, "not valid JSON", () -> rest.post("/x1", "{\"metadataServiceUri\":")),
                    new Case("trailing garbage", 400, "not valid JSON", () -> rest.post("/x1", body + "}")),
                    new Case("JSON array", 400, "JSON object", () -> rest.post("/x1", "[\"" + uriB + "\"]")),
                    new Case("JSON null", 400, "JSON object", () -> rest.post("/x1", "null")),
                    new Case("unknown field", 400, "unknown field", () -> rest.post("/x1",
                            "{\"metadataServiceUri\":\"" + uriB + "\",\"admin\":true}")),
                    new Case("number instead of string", 400, "must be a string", () -> rest.post("/x1",
                            "{\"metadataServiceUri\":7}")),
                    new Case("empty body", 400, "empty", () -> rest.request("POST", "/x1", "application/json",
                            new byte[0])),
                    new Case("1 MB + 1 body", 413, "larger than", () -> rest.request("POST", "/x1",
                            "application/json", new byte[1024 * 1024 + 1])),
                    new Case("8 MB body", 413, "larger than", () -> rest.request("POST", "/switch",
                            "application/json", new byte[8 * 1024 * 1024])),
                    // duplicates
                    new Case("duplicate name", 409, "already registered", () -> rest.register("cluster-b", uriC)),
                    new Case("duplicate cluster under another name", 409, "same bookie cluster",
                            () -> rest.register("b-again", uriB)),
                    new Case("active cluster under another name", 409, "same bookie cluster",
                            () -> rest.register("a-again", uriA)),
                    // switch
                    new Case("switch to self", 409, "already active", () -> rest.switchTo("cluster-a")),
                    new Case("switch to unknown", 404, "not registered", () -> rest.switchTo("cluster-x")),
                    new Case("switch to invalid name", 400, "must match", () -> rest.switchTo("../cluster-b")),
                    new Case("switch without target", 400, "is required", () -> rest.post("/switch", "{}")),
                    new Case("switch with extra field", 400, "unknown field", () -> rest.post("/switch",
                            "{\"target\":\"cluster-b\",\"force\":true}")),
                    // unregister
                    new Case("unregister the active cluster", 409, "active cluster",
                            () -> rest.request("DELETE", "/cluster-a", null, null)),
                    new Case("unregister unknown", 404, "not registered",
                            () -> rest.request("DELETE", "/cluster-x", null, null)),
                    new Case("unregister invalid name", 400, "must match",
                            () -> rest.request("DELETE", "/a%2Ab", null, null)),
                    // methods and paths
                    new Case("PUT a cluster", 405, "not allowed", () -> rest.request("PUT", "/cluster-b",
                            "application/json", body.getBytes(StandardCharsets.UTF_8))),
                    new Case("PATCH switch", 405, "not allowed", () -> rest.request("PATCH", "/switch",
                            "application/json", "{}".getBytes(StandardCharsets.UTF_8))),
                    new Case("GET switch", 405, "not allowed", () -> rest.get("/switch")),
                    new Case("DELETE status", 405, "not allowed", () -> rest.request("DELETE", "/status", null, null)),
                    new Case("DELETE the collection", 405, "not allowed", () -> rest.request("DELETE", "/", null, null)),
                    new Case("unknown endpoint", 404, "no such endpoint", () -> rest.get("/a/b/c")),
                    new Case("malformed topic path", 400, "malformed path", () -> rest.get("/topics/only-tenant")),
                    // migration endpoints
                    new Case("rollback before any switch", 409, "nothing to roll back", () -> rest.post("/rollback", "")),
                    new Case("rollback with a body field", 400, "unknown field", () -> rest.post("/rollback",
                            "{\"force\":true}")),
                    new Case("GET rollback", 405, "not allowed", () -> rest.get("/rollback")),
                    new Case("retry a migration before any switch", 409, "no migration to run again",
                            () -> rest.post("/migration/retry", "")),
                    new Case("retry a migration with a body field", 400, "unknown field",
                            () -> rest.post("/migration/retry", "{\"epoch\":1}")),
                    new Case("GET migration retry", 405, "not allowed", () -> rest.get("/migration/retry")),
                    new Case("POST migration", 404, "no such endpoint", () -> rest.post("/migration", "{}")),
                    new Case("cleanup without srcCluster", 400, "is required", () -> rest.post("/cleanup", "{}")),
                    new Case("cleanup dryRun not a boolean", 400, "true or false", () -> rest.post("/cleanup",
                            "{\"srcCluster\":\"cluster-b\",\"dryRun\":\"no\"}")),
                    new Case("cleanup negative maxDeletions", 400, "whole number", () -> rest.post("/cleanup",
                            "{\"srcCluster\":\"cluster-b\",\"maxDeletions\":-1}")),
                    new Case("cleanup of the active cluster", 409, "active cluster", () -> rest.post("/cleanup",
                            "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"force\":true}")),
                    new Case("cleanup of an unknown cluster", 404, "not registered", () -> rest.post("/cleanup",
                            "{\"srcCluster\":\"cluster-x\"}")),
                    new Case("drain report of an unknown cluster", 404, "not registered", () -> rest.get("/drain/nope")),
                    new Case("drain report of an invalid name", 400, "must match", () -> rest.get("/drain/a%24b")),
                    new Case("close-client of the active cluster", 409, "active cluster",
                            () -> rest.post("/close-client/cluster-a", "")),
                    new Case("cleanup-targets of the active cluster", 409, "active cluster",
                            () -> rest.get("/cleanup-targets/cluster-a")),
                    new Case("verify with a bad deep flag", 400, "true or false", () -> rest.get("/verify?deep=maybe")),
                    new Case("POST verify", 405, "not allowed", () -> rest.post("/verify", "{}")),
                    new Case("verify with an extra segment", 404, "no such endpoint", () -> rest.get("/verify/deep")),
                    new Case("verify as a cluster name", 405, "not allowed", () -> rest.register("verify", uriB)),
                    // long operations started asynchronously: refused before anything is recorded
                    new Case("async cleanup without srcCluster", 400, "is required",
                            () -> rest.post("/cleanup?async=true", "{}")),
                    new Case("async cleanup of the active cluster", 409, "active cluster",
                            () -> rest.post("/cleanup?async=true", "{\"srcCluster\":\"cluster-a\",\"dryRun\":false}")),
                    new Case("async cleanup of an unknown cluster", 404, "not registered",
                            () -> rest.post("/cleanup?async=true", "{\"srcCluster\":\"cluster-x\"}")),
                    new Case("async drain report of an unknown cluster", 404, "not registered",
                            () -> rest.get("/drain/nope?async=true")),
                    new Case("async drain report of an invalid name", 400, "must match",
                            () -> rest.get("/drain/a%24b?async=true")),
                    new Case("async flag not a boolean", 400, "true or false", () -> rest.get("/verify?async=later")),
                    new Case("async verify with a bad deep flag", 400, "true or false",
                            () -> rest.get("/verify?async=true&deep=maybe")),
                    new Case("an unknown operation", 404, "no operation", () -> rest.get("/operations/drain-1-2")),
                    new Case("operations with an extra segment", 404, "no such endpoint",
                            () -> rest.get("/operations/a/b")),
                    new Case("POST operations", 405, "not allowed", () -> rest.post("/operations", "{}")),
                    new Case("operations as a cluster name", 405, "not allowed", () -> rest.register("operations", uriB)),
                    // run-time tuning
                    new Case("tuning with nothing to change", 400, "nothing to change", () -> rest.post("/tuning", "{}")),
                    new Case("tuning concurrency 0", 400, "between 1 and 1024", () -> rest.post("/tuning",
                            "{\"migrationConcurrency\":0}")),
                    new Case("tuning concurrency beyond an int", 400, "between 1 and 1024", () -> rest.post("/tuning",
                            "{\"migrationConcurrency\":1000000000000}")),
                    new Case("tuning fractional concurrency", 400, "whole number", () -> rest.post("/tuning",
                            "{\"migrationConcurrency\":2.5}")),
                    new Case("tuning negative copy rate", 400, "between 0", () -> rest.post("/tuning",
                            "{\"migrationBytesPerSecond\":-1}")),
                    new Case("tuning cutover rate as text", 400, "must be a number", () -> rest.post("/tuning",
                            "{\"cutoverTopicsPerSecond\":\"fast\"}")),
                    new Case("tuning cutover rate 0", 400, ">= 0.1", () -> rest.post("/tuning",
                            "{\"cutoverTopicsPerSecond\":0}")),
                    new Case("tuning with an unknown field", 400, "unknown field", () -> rest.post("/tuning",
                            "{\"migrationConcurrency\":2,\"promoteBatchSize\":5}")),
                    new Case("DELETE tuning", 405, "not allowed", () -> rest.request("DELETE", "/tuning", null, null)),
                    new Case("tuning as a cluster name", 400, "unknown field", () -> rest.register("tuning", uriB)),
                    new Case("switch allowUnknownSourceIds not a boolean", 400, "true or false",
                            () -> rest.post("/switch", "{\"target\":\"cluster-b\",\"allowUnknownSourceIds\":\"yes\"}")));
            List<String> failures = new ArrayList<>();
            for (Case c : cases) {
                Map<String, String> before = snapshot();
                Rest.Response r = c.call().get();
                String problem = null;
                if (r.status() != c.status()) {
                    problem = "status " + r.status() + ", expected " + c.status();
                } else if (r.error() == null || r.error().isBlank()) {
                    problem = "no JSON error";
                } else if (!r.error().contains(c.errorMentions())) {
                    problem = "error does not mention '" + c.errorMentions() + "'";
                } else if (!before.equals(snapshot())) {
                    problem = "metadata store changed";
                }
                log.info("HOSTILE {}: {} {}{}", c.name(), r.status(), r.raw().length() > 300
                        ? r.raw().substring(0, 300) + "..." : r.raw(), problem == null ? "" : "  <-- " + problem);
                if (problem != null) {
                    failures.add(c.name() + ": " + problem + ": " + r.raw());
                }
            }
            assertTrue(failures.isEmpty(), failures.size() + " of " + cases.size() + " cases failed:\n"
                    + String.join("\n", failures));
            silent.close();
            for (Socket s : accepted) {
                s.close();
            }
        }

        // two concurrent switches to different targets through different brokers: exactly one wins
        Map<String, String> before = snapshot();
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Rest.Response> toB = CompletableFuture.supplyAsync(() -> {
            awaitLatch(go);
            return rest.switchTo("cluster-b");
        });
        CompletableFuture<Rest.Response> toC = CompletableFuture.supplyAsync(() -> {
            awaitLatch(go);
            return rest1.switchTo("cluster-c");
        });
        go.countDown();
        Rest.Response b = toB.join();
        Rest.Response c = toC.join();
        log.info("HOSTILE concurrent switches: to cluster-b {} {}; to cluster-c {} {}", b.status(), b.raw(),
                c.status(), c.raw());
        assertTrue((b.status() == 200) != (c.status() == 200), "exactly one switch wins: " + b.raw() + " / " + c.raw());
        Rest.Response loser = b.status() == 200 ? c : b;
        String winner = b.status() == 200 ? "cluster-b" : "cluster-c";
        String other = winner.equals("cluster-b") ? "cluster-c" : "cluster-b";
        assertEquals(409, loser.status(), loser.raw());
        assertTrue(loser.error() != null && !loser.error().isBlank(), loser.raw());
        assertTrue(!before.equals(snapshot()), "the winning switch changed the registry");
        rest.awaitCutoverComplete();
        for (Rest r : List.of(rest, rest1)) {
            JsonNode s = r.status();
            assertEquals(winner, s.get("activeCluster").asText(), s.toString());
            assertEquals(1, s.get("epoch").asLong(), s.toString());
            for (JsonNode broker : s.get("brokers")) {
                assertEquals(winner, broker.get("activeCluster").asText(), s.toString());
                assertEquals(1, broker.get("appliedEpoch").asLong(), s.toString());
            }
        }

        // unregister: the old cluster still holds the topic's ledgers; the never-active loser does not
        rest.awaitMigrationFinished(); // the migration after the switch writes to the registry too
        before = snapshot();
        Rest.Response pinned = rest.request("DELETE", "/cluster-a", null, null);
        log.info("HOSTILE unregister cluster-a after the switch: {} {}", pinned.status(), pinned.raw());
        assertEquals(409, pinned.status(), pinned.raw());
        assertTrue(pinned.error().contains("still holds ledgers") && pinned.error().contains("data"), pinned.raw());
        assertEquals(before, snapshot(), "refused unregister changes nothing");
        assertEquals(409, rest1.request("DELETE", "/" + winner, null, null).status(), "the new active cluster");
        Rest.Response gone = rest1.request("DELETE", "/" + other, null, null);
        assertEquals(200, gone.status(), gone.raw());
        assertEquals(404, rest.get("/" + other).status());
        assertEquals(2, rest.get("/").json().size());
        // it can be registered again
        assertEquals(200, rest.register(other, other.equals("cluster-b") ? uriB : uriC).status());
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
