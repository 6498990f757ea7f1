package io.bcswitch.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.routing.Ownership;
import io.bcswitch.topics.TopicLedgerReports;
import io.bcswitch.topics.TopicLedgers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code GET /topics/{tenant}/{namespace}/{topic}} at the REST edge, over a fake {@link TopicLedgers}. */
class TopicsEndpointTest {
    private final List<List<String>> asked = new ArrayList<>();
    private BookieClustersApi api;
    private InMemoryRest rest;

    @BeforeEach
    void setUp() {
        TopicLedgers port = (tenant, namespace, local) -> {
            asked.add(List.of(tenant, namespace, local));
            if (local.equals("missing")) {
                return CompletableFuture.failedFuture(RegistryException.notFound("topic does not exist"));
            }
            if (local.equals("bad")) {
                return CompletableFuture.failedFuture(RegistryException.invalid("invalid topic name"));
            }
            return CompletableFuture.completedFuture(List.of(
                    new TopicLedgers.Ledger(4, 12L, 3400L, Map.of(TopicLedgers.BOOKIE_CLUSTER_PROPERTY, "cluster-a")),
                    new TopicLedgers.Ledger(5, 2L, 100L, Map.of())));
        };
        Ownership o = new Ownership(RangeTable.bootstrap("cluster-a", 0), "cluster-a", 0);
        api = new BookieClustersApi(null, null, null, Runnable::run, null,
                new TopicLedgerReports(port, () -> o, () -> CompletableFuture.completedFuture(o)), 30_000);
        rest = new InMemoryRest(api);
    }

    private RestResponse get(String path) throws Exception {
        return rest.handle("GET", path, null, null).get();
    }

    private static JsonNode json(RestResponse r) throws Exception {
        return Json.mapper().readTree(BookieClustersApi.toJson(r));
    }

    @Test
    void listsLedgersWithOwnerSizeEntriesAndProperty() throws Exception {
        RestResponse r = get("/topics/my-tenant/my-ns/orders:v1 %x");
        assertEquals(200, r.status());
        assertEquals(List.of(List.of("my-tenant", "my-ns", "orders:v1 %x")), asked);
        JsonNode j = json(r);
        assertEquals("persistent://my-tenant/my-ns/orders:v1 %x", j.get("topic").asText());
        JsonNode l0 = j.get("ledgers").get(0);
        assertEquals(4, l0.get("ledgerId").asLong());
        assertEquals("cluster-a", l0.get("cluster").asText());
        assertEquals(3400, l0.get("size").asLong());
        assertEquals(12, l0.get("entries").asLong());
        assertEquals("cluster-a", l0.get("bookieClusterNameProperty").asText());
        assertTrue(j.get("ledgers").get(1).get("bookieClusterNameProperty").isNull());
        assertEquals(200, get("/topics/t/ns/x/").status(), "a trailing slash is ignored");
    }

    @Test
    void malformedPathsAre400() throws Exception {
        for (String p : List.of("/topics", "/topics/", "/topics/t", "/topics/t/ns", "/topics/t/ns/a/b",
                "/topics//ns/x", "/topics/t//x", "/topics/t/ns//")) {
            RestResponse r = get(p);
            assertEquals(400, r.status(), p);
            assertTrue(json(r).get("error").asText().contains("malformed path"), p);
        }
        assertTrue(asked.isEmpty(), "nothing is looked up for a malformed path");
        assertEquals(400, get("/topics/t/ns/bad").status());
    }

    @Test
    void unknownTopicIs404AndOtherMethodsAre405() throws Exception {
        RestResponse r = get("/topics/t/ns/missing");
        assertEquals(404, r.status());
        assertTrue(json(r).get("error").asText().contains("does not exist"));
        RestResponse post = rest.handle("POST", "/topics/t/ns/x", "application/json", "{}".getBytes()).get();
        assertEquals(405, post.status(), String.valueOf(post.body()));
        assertEquals(405, rest.handle("DELETE", "/topics/t/ns/x", null, null).get().status());
        assertEquals(405, rest.handle("POST", "/topics", "application/json", "{}".getBytes()).get().status());
    }

    @Test
    void withoutThePortTheEndpointIsUnavailable() throws Exception {
        BookieClustersApi bare = new BookieClustersApi(null);
        assertEquals(503, new InMemoryRest(bare).handle("GET", "/topics/t/ns/x", null, null).get().status());
    }
}
