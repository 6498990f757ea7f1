package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Tokens;
import io.bcswitch.rest.ApiDescription;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Token authentication and authorization enabled on the brokers, as in production: every route of the
 * bookie-clusters API's own route table (and HEAD and OPTIONS, which Jersey answers for every route) refuses a
 * request without credentials or with a forged token with 401, and with 403 an ordinary role, that role
 * forwarded by a proxy, a super-user naming another client without being a proxy, and a proxy naming no client;
 * a refused call changes nothing in the metadata store. A super-user, directly or through a proxy, may call them.
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
        Rest proxyForApp = new Rest(web, TOKENS.proxy, "app");
        Rest proxyForAdmin = new Rest(web, TOKENS.proxy, "admin");
        Rest adminForApp = new Rest(web, TOKENS.admin, "app");
        Rest bareProxy = new Rest(web, TOKENS.proxy);
        assertEquals(200, admin.register("cluster-c", uriC).status());
        Rest.Response started = admin.get("/drain/cluster-a?async=true");
        assertEquals(202, started.status(), started.raw());
        String opId = started.json().get("id").asText();
        // finished before the refused calls, which compare the metadata store before and after each
        await().atMost(Duration.ofSeconds(30)).until(() ->
                !"RUNNING".equals(admin.get("/operations/" + opId).json().get("state").asText()));

        // one request per route of the API's own route table, the state-changing ones aimed at something that
        // would succeed: a route added to the API without a request here fails this test
        Map<String, Function<Rest, Rest.Response>> endpoints = new LinkedHashMap<>();
        endpoints.put("GET /", r -> r.get("/"));
        endpoints.put("GET /status", r -> r.get("/status"));
        endpoints.put("GET /{name}", r -> r.get("/cluster-a"));
        endpoints.put("GET /precheck/{name}", r -> r.get("/precheck/cluster-c"));
        endpoints.put("GET /topics/{tenant}/{namespace}/{topic}", r -> r.get("/topics/" + ns + "/t"));
        endpoints.put("POST /{name}", r -> r.register("cluster-b", uriB));
        endpoints.put("POST /switch", r -> r.switchTo("cluster-c"));
        endpoints.put("DELETE /{name}", r -> r.request("DELETE", "/cluster-c", null, null));
        endpoints.put("POST /read-mode", r -> r.post("/read-mode", "{\"mode\":\"DUAL_READ\"}"));
        endpoints.put("GET /verify", r -> r.get("/verify"));
        endpoints.put("GET /drain/{name}", r -> r.get("/drain/cluster-a?async=true"));
        endpoints.put("GET /cleanup-targets", r -> r.get("/cleanup-targets"));
        endpoints.put("GET /cleanup-targets/{name}", r -> r.get("/cleanup-targets/cluster-a"));
        endpoints.put("POST /cleanup", r -> r.post("/cleanup", "{\"srcCluster\":\"cluster-b\",\"dryRun\":false}"));
        endpoints.put("POST /rollback", r -> r.post("/rollback", ""));
        endpoints.put("POST /migration/retry", r -> r.post("/migration/retry", ""));
        endpoints.put("POST /close-client/{name}", r -> r.post("/close-client/cluster-c", ""));
        endpoints.put("GET /tuning", r -> r.get("/tuning"));
        endpoints.put("POST /tuning", r -> r.post("/tuning", "{\"migrationConcurrency\":2}"));
        endpoints.put("GET /operations", r -> r.get("/operations"));
        endpoints.put("GET /operations/{id}", r -> r.get("/operations/" + opId));
        Set<String> routes = new TreeSet<>();
        ApiDescription.ROUTES.forEach(route -> routes.add(route.method() + " " + route.path()));
        assertEquals(routes, new TreeSet<>(endpoints.keySet()), "a request for each route of the API");
        // beyond the route table: a method no route has, and what Jersey answers for every route
        endpoints.put("PUT /{name} (no such method)", r -> r.request("PUT", "/cluster-b", "application/json",
                "{}".getBytes()));
        endpoints.put("OPTIONS /status", r -> r.request("OPTIONS", "/status", null, null));
        endpoints.put("HEAD /verify", r -> r.request("HEAD", "/verify", null, null));
        endpoints.put("GET /drain/{name} (synchronous)", r -> r.get("/drain/cluster-a"));

        for (var e : endpoints.entrySet()) {
            Map<String, String> before = snapshot();
            Rest.Response none = e.getValue().apply(anonymous);
            assertEquals(401, none.status(), e.getKey() + " without a token: " + none.raw());
            Rest.Response bad = e.getValue().apply(forged);
            assertEquals(401, bad.status(), e.getKey() + " with a forged token: " + bad.raw());
            // an ordinary role; the same role forwarded by a proxy; a super-user claiming to act for it without
            // being a proxy; a proxy that names no client
            for (var caller : Map.of("a non-super-user", app, "a proxy for a non-super-user", proxyForApp,
                    "a super-user naming another client", adminForApp, "a proxy naming no client", bareProxy)
                    .entrySet()) {
                Rest.Response refused = e.getValue().apply(caller.getValue());
                assertEquals(403, refused.status(), e.getKey() + " as " + caller.getKey() + ": " + refused.raw());
                if (!e.getKey().startsWith("HEAD")) { // a HEAD answer has no body
                    assertTrue(refused.error() != null && refused.error().contains("super-user"), refused.raw());
                }
            }
            assertEquals(before, snapshot(), e.getKey() + ": a refused call changed the metadata store");
        }
        // a proxy forwarding a super-user is that super-user
        Rest.Response forwarded = proxyForAdmin.get("/status");
        assertEquals(200, forwarded.status(), forwarded.raw());
        assertEquals(200, proxyForAdmin.post("/tuning", "{\"migrationConcurrency\":2}").status());

        // the super-user can do everything
        assertEquals(200, admin.get("/").status());
        assertEquals(200, admin.get("/status").status());
        assertEquals(200, admin.get("/cluster-a").status());
        assertEquals(200, admin.get("/precheck/cluster-c").status());
        assertEquals(200, admin.get("/topics/" + ns + "/t").status());
        // past authorization, refused for what it asks: cleanup never touches the active cluster
        assertEquals(409, admin.get("/cleanup-targets/cluster-a").status());
        assertEquals(200, admin.post("/read-mode", "{\"mode\":\"DUAL_READ\"}").status());
        for (String path : new String[] {"/verify", "/drain/cluster-c", "/cleanup-targets",
                "/tuning", "/operations", "/operations/" + opId}) {
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
        Rest.Response active = admin.request("DELETE", "/cluster-c", null, null);
        assertEquals(409, active.status(), "the active cluster is not unregistered: " + active.raw());
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
