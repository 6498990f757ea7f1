package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Tokens;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Token authentication and authorization enabled on the brokers, as in production: every endpoint of
 * the bookie-clusters API (and HEAD and OPTIONS, which Jersey answers for every route) answers a super-user token, refuses an ordinary role's token with 403 and a
 * request without credentials with 401, and a refused call changes nothing in the metadata store.
 */
class SecurityTest extends ClusterTestBase {
    private static final Tokens TOKENS = new Tokens();

    @BeforeAll
    static void start() throws Exception {
        cluster = TOKENS.secure(twoBookieClusters()
                .bookieCluster("cluster-c", 2))
                .start();
    }

    private static Map<String, String> snapshot() throws Exception {
        return Registry.registryAndManagedLedgers(cluster);
    }

    @Test
    void onlySuperUsersMayCallAnyEndpoint() throws Exception {
        String ns = cluster.createTenant("sec");
        String topic = "persistent://" + ns + "/t";
        try (PulsarClient client = cluster.newClient();
             Producer<String> p = client.newProducer(Schema.STRING).topic(topic).create()) {
            p.send("hello");
        }
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        String uriC = cluster.bookieCluster("cluster-c").metadataServiceUri();
        String web = cluster.broker(0).webServiceUrl();
        Rest admin = new Rest(web, TOKENS.admin);
        Rest app = new Rest(web, TOKENS.app);
        Rest anonymous = new Rest(web, null);
        Rest forged = new Rest(web, TOKENS.admin.substring(0, TOKENS.admin.length() - 4) + "AAAA");
        assertEquals(200, admin.register("cluster-c", uriC).status());

        // every endpoint, with the state-changing ones aimed at something that would succeed
        Map<String, Function<Rest, Rest.Response>> endpoints = new LinkedHashMap<>();
        endpoints.put("GET /", r -> r.get("/"));
        endpoints.put("GET /status", r -> r.get("/status"));
        endpoints.put("GET /cluster-a", r -> r.get("/cluster-a"));
        endpoints.put("GET /precheck/cluster-c", r -> r.get("/precheck/cluster-c"));
        endpoints.put("GET /topics/...", r -> r.get("/topics/" + ns + "/t"));
        endpoints.put("POST /cluster-b (register)", r -> r.register("cluster-b", uriB));
        endpoints.put("POST /switch", r -> r.switchTo("cluster-c"));
        endpoints.put("DELETE /cluster-c (unregister)", r -> r.request("DELETE", "/cluster-c", null, null));
        endpoints.put("PUT /cluster-b (no such method)", r -> r.request("PUT", "/cluster-b", "application/json",
                "{}".getBytes()));
        endpoints.put("GET /verify", r -> r.get("/verify"));
        endpoints.put("GET /drain/cluster-a", r -> r.get("/drain/cluster-a"));
        endpoints.put("GET /drain/cluster-a?async=true", r -> r.get("/drain/cluster-a?async=true"));
        endpoints.put("GET /cleanup-targets", r -> r.get("/cleanup-targets"));
        endpoints.put("POST /cleanup", r -> r.post("/cleanup", "{\"srcCluster\":\"cluster-b\",\"dryRun\":false}"));
        endpoints.put("POST /rollback", r -> r.post("/rollback", ""));
        endpoints.put("POST /migration/retry", r -> r.post("/migration/retry", ""));
        endpoints.put("POST /close-client/cluster-c", r -> r.post("/close-client/cluster-c", ""));
        endpoints.put("GET /tuning", r -> r.get("/tuning"));
        endpoints.put("POST /tuning", r -> r.post("/tuning", "{\"migrationConcurrency\":2}"));
        endpoints.put("GET /operations", r -> r.get("/operations"));
        // answered by Jersey for every route: still only after the caller is known to be a super-user
        endpoints.put("OPTIONS /status", r -> r.request("OPTIONS", "/status", null, null));
        endpoints.put("HEAD /verify", r -> r.request("HEAD", "/verify", null, null));

        for (var e : endpoints.entrySet()) {
            Map<String, String> before = snapshot();
            Rest.Response none = e.getValue().apply(anonymous);
            assertEquals(401, none.status(), e.getKey() + " without a token: " + none.raw());
            Rest.Response bad = e.getValue().apply(forged);
            assertEquals(401, bad.status(), e.getKey() + " with a forged token: " + bad.raw());
            Rest.Response user = e.getValue().apply(app);
            assertEquals(403, user.status(), e.getKey() + " as a non-super-user: " + user.raw());
            if (!e.getKey().startsWith("HEAD")) { // a HEAD answer has no body
                assertTrue(user.error() != null && user.error().contains("super-user"), user.raw());
            }
            assertEquals(before, snapshot(), e.getKey() + ": a refused call changed the metadata store");
        }

        // the super-user can do everything
        assertEquals(200, admin.get("/").status());
        assertEquals(200, admin.get("/status").status());
        assertEquals(200, admin.get("/cluster-a").status());
        assertEquals(200, admin.get("/precheck/cluster-c").status());
        assertEquals(200, admin.get("/topics/" + ns + "/t").status());
        for (String path : new String[] {"/verify", "/drain/cluster-c", "/cleanup-targets", "/tuning", "/operations"}) {
            Rest.Response r = admin.get(path);
            assertEquals(200, r.status(), path + ": " + r.raw());
        }
        assertEquals(200, admin.request("OPTIONS", "/status", null, null).status());
        assertEquals(200, admin.request("HEAD", "/verify", null, null).status());
        assertEquals(200, admin.register("cluster-b", uriB).status());
        Rest.Response unregister = admin.request("DELETE", "/cluster-b", null, null);
        assertEquals(200, unregister.status(), unregister.raw());
        assertEquals(200, admin.register("cluster-b", uriB).status());
        Rest.Response sw = admin.switchTo("cluster-c");
        assertEquals(200, sw.status(), sw.raw());
        admin.awaitCutoverComplete();
        assertEquals(405, admin.request("PUT", "/cluster-b", "application/json", "{}".getBytes()).status());
        assertNotEquals(200, admin.request("DELETE", "/cluster-c", null, null).status(), "active cluster");
        // brokers still talk to each other and clients still publish with authorization on
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            try (PulsarClient client = cluster.newClient();
                 Producer<String> p = client.newProducer(Schema.STRING).topic(topic).create()) {
                p.send("after the switch");
            }
        });
        assertEquals("cluster-c", admin.status().get("activeCluster").asText());
    }
}
