package io.bcswitch.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.switching.StatusReport;
import io.bcswitch.switching.SwitchResult;
import io.bcswitch.switching.SwitchService;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The REST edge over a real {@link SwitchService} on an in-memory metadata store. The active-to-be cluster
 * "east" is the broker's implicit default, so its metadata is read from the same in-memory store and no
 * ZooKeeper is contacted; "west" is only ever rejected before its metadata would be read.
 */
class BookieClustersApiTest {
    private static final String ROOT = "/admin/bookie-clusters";
    private static final String EAST_URI = "metadata-store:zk:localhost:2181"; // the broker's own cluster, as the plugin registers it
    private static final String WEST_URI = "zk+hierarchical://zk-west:2181/ledgers";
    private static final String JSON = "application/json";
    private static final long NOW = 1_700_000_000_000L;

    private MetadataStoreExtended store;
    private ClusterMetadataAccess access;
    private BookieClustersApi api;
    private InMemoryRest rest;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        RegistryPaths paths = new RegistryPaths(ROOT);
        RegistryStore registry = new RegistryStore(new PulsarMetadataPort(store), paths);
        registry.write(paths.cluster("east"), new BookieClusterRecord(1, "east", EAST_URI, ClusterStatus.STANDBY,
                NOW - 2000), -1).get();
        registry.write(paths.cluster("west"), new BookieClusterRecord(1, "west", WEST_URI, ClusterStatus.STANDBY,
                NOW - 1000), -1).get();
        // the cluster the brokers started on is not registered, so reading it needs no ZooKeeper either
        registry.write(paths.bootstrap(), new BootstrapRecord(1, "old", NOW - 5000), -1).get();
        registry.write(paths.ranges(), RangeTable.bootstrap("old", NOW - 5000), -1).get();
        // what the brokers saw of old's id generator when they started (31-bit ids only)
        registry.raiseWatermark("old", 0, 500, NOW - 5000, "broker start").get();
        // east's bookie-cluster metadata, in the broker's store (implicit default): 2 writable bookies
        put("/ledgers/LAYOUT", "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1");
        put("/ledgers/available/b1:3181", "");
        put("/ledgers/available/b2:3181", "");
        put("/ledgers/available/readonly/b3:3181", "");

        access = new io.bcswitch.precheck.ServedClusterMetadata(2000, java.util.Map.of(EAST_URI, store));
        SwitchService service = new SwitchService(registry, access, 3,
                Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC),
                () -> java.util.concurrent.CompletableFuture.completedFuture(java.util.List.of()));
        api = new BookieClustersApi(service);
        rest = new InMemoryRest(api);
    }

    @AfterEach
    void tearDown() throws Exception {
        access.close();
        store.close();
    }

    private void put(String path, String data) throws Exception {
        store.put(path, data.getBytes(StandardCharsets.UTF_8), Optional.empty()).get();
    }

    private RestResponse call(String method, String path, String contentType, String body) throws Exception {
        return call(method, path, contentType, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }

    private RestResponse call(String method, String path, String contentType, byte[] body) throws Exception {
        return rest.handle(method, path, contentType, body).get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void unregisterIsRefusedWhileTheClusterOwnsReferencedLedgers() throws Exception {
        RegistryPaths paths = new RegistryPaths(ROOT);
        RegistryStore registry = new RegistryStore(new PulsarMetadataPort(store), paths);
        // west was active once (epoch 1), so it owns ids from 2^32 up
        registry.write(paths.ranges(), RangeTable.bootstrap("old", NOW - 5000)
                .with(new io.bcswitch.registry.IdRange("west", 1L << 32, 1, NOW - 3000)), 0).get();
        List<io.bcswitch.inventory.LedgerReference> refs = new ArrayList<>();
        SwitchService service = new SwitchService(registry, access, 3, Clock.systemUTC(),
                () -> java.util.concurrent.CompletableFuture.completedFuture(List.copyOf(refs)));
        InMemoryRest withRefs = new InMemoryRest(new BookieClustersApi(service));
        refs.add(new io.bcswitch.inventory.LedgerReference(3, io.bcswitch.inventory.LedgerKind.DATA, "t/ns/persistent/x"));
        refs.add(new io.bcswitch.inventory.LedgerReference((1L << 32) + 5, io.bcswitch.inventory.LedgerKind.CURSOR,
                "t/ns/persistent/x/sub"));
        refs.add(new io.bcswitch.inventory.LedgerReference((1L << 32) + 7, io.bcswitch.inventory.LedgerKind.SCHEMA,
                "t/ns/x"));
        Map<String, String> before = snapshot();
        RestResponse refused = withRefs.handle("DELETE", "/west", null, null).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(409, refused.status(), String.valueOf(refused.body()));
        String error = String.valueOf(refused.body());
        assertTrue(error.contains("1 cursor, 1 schema") && error.contains("ledger " + ((1L << 32) + 5)), error);
        assertEquals(before, snapshot());
        // once nothing west owns is referenced (only old's ledger 3 is), it can go
        refs.removeIf(r -> r.ledgerId() > 3);
        RestResponse ok = withRefs.handle("DELETE", "/west", null, null).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(200, ok.status(), String.valueOf(ok.body()));
        assertEquals(404, withRefs.handle("GET", "/west", null, null)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS).status());
        // a cluster that never owned a range needs no inventory at all
        assertEquals(200, rest.handle("DELETE", "/east", null, null).get(TestWaits.SECONDS, TimeUnit.SECONDS).status());
    }

    /** Every node of the store, to prove a refused call changed nothing. */
    private Map<String, String> snapshot() throws Exception {
        return io.bcswitch.registry.StoreSnapshot.of(store);
    }

    private static String error(RestResponse r) throws Exception {
        JsonNode n = Json.mapper().readTree(BookieClustersApi.toJson(r));
        assertTrue(n.has("reason"), "error body: " + n);
        assertEquals(n.get("reason"), n.get("error"), "the earlier key says the same: " + n);
        return n.get("reason").asText();
    }

    private record Req(String method, String path, String contentType, byte[] body, int status, String message) {
        static Req of(String method, String path, String contentType, String body, int status, String message) {
            return new Req(method, path, contentType, body == null ? null : body.getBytes(StandardCharsets.UTF_8),
                    status, message);
        }

        @Override
        public String toString() {
            return method + " " + path + " [" + contentType + "] "
                    + (body == null ? "null" : body.length > 200 ? body.length + " bytes"
                    : new String(body, StandardCharsets.UTF_8));
        }
    }

    private static byte[] bigBody(int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) ' ');
        byte[] json = "{\"target\":\"nosuch\"}".getBytes(StandardCharsets.UTF_8);
        System.arraycopy(json, 0, b, 0, json.length);
        return b;
    }

    private List<Req> refusedRequests() {
        List<Req> r = new ArrayList<>();
        String target = "{\"target\":\"east\"}";
        String uri = "{\"metadataServiceUri\":\"zk+hierarchical://zk-new:2181/ledgers\"}";
        // 405
        r.add(Req.of("DELETE", "/old", null, null, 404, "not registered"));
        r.add(Req.of("DELETE", "/bad%name", null, null, 400, "must match"));
        r.add(Req.of("PUT", "/east", JSON, uri, 405, "allowed: GET, POST"));
        r.add(Req.of("PUT", "/switch", JSON, target, 405, "allowed: POST"));
        r.add(Req.of("GET", "/switch", null, null, 405, "allowed: POST"));
        r.add(Req.of("POST", "/status", JSON, "{\"metadataServiceUri\":\"zk://h:1/l\"}", 400, "reserved"));
        r.add(Req.of("POST", "", JSON, uri, 405, "allowed: GET"));
        r.add(Req.of("DELETE", "/", null, null, 405, "allowed: GET"));
        r.add(Req.of("POST", "/precheck/east", JSON, "{}", 405, "allowed: GET"));
        // 404: endpoints
        r.add(Req.of("GET", "/a/b", null, null, 404, "no such endpoint: /a/b"));
        r.add(Req.of("GET", "/precheck", null, null, 404, "no such endpoint"));
        r.add(Req.of("GET", "/precheck/east/extra", null, null, 404, "no such endpoint"));
        r.add(Req.of("POST", "/clusters/east", JSON, uri, 404, "no such endpoint"));
        // 404: clusters
        r.add(Req.of("GET", "/nosuch", null, null, 404, "'nosuch' is not registered"));
        r.add(Req.of("GET", "/precheck/nosuch", null, null, 404, "'nosuch' is not registered"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":\"nosuch\"}", 404, "'nosuch' is not registered"));
        // 415
        r.add(Req.of("POST", "/switch", "text/plain", target, 415, "application/json"));
        r.add(Req.of("POST", "/switch", null, target, 415, "application/json"));
        r.add(Req.of("POST", "/switch", "application/jsonp", target, 415, "application/json"));
        r.add(Req.of("POST", "/newcluster", "application/x-www-form-urlencoded", uri, 415, "application/json"));
        // 400: body
        r.add(Req.of("POST", "/switch", JSON, "{", 400, "not valid JSON"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":}", 400, "not valid JSON"));
        r.add(Req.of("POST", "/switch", JSON, "[\"east\"]", 400, "must be a JSON object"));
        r.add(Req.of("POST", "/switch", JSON, "\"east\"", 400, "must be a JSON object"));
        r.add(Req.of("POST", "/switch", JSON, "", 400, "empty"));
        r.add(Req.of("POST", "/switch", JSON, null, 400, "empty"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":\"east\",\"force\":true}", 400, "unknown field 'force'"));
        // PIP-477's register body: status STANDBY only, name the path's
        r.add(Req.of("POST", "/newcluster", JSON,
                "{\"metadataServiceUri\":\"zk://h:1/l\",\"status\":\"ACTIVE\"}", 400, "statuses follow the switch"));
        r.add(Req.of("POST", "/newcluster", JSON,
                "{\"metadataServiceUri\":\"zk://h:1/l\",\"name\":\"other\"}", 400, "must be the cluster name of the path"));
        r.add(Req.of("POST", "/newcluster", JSON,
                "{\"metadataServiceUri\":\"zk://h:1/l\",\"status\":7}", 400, "field 'status' must be a string"));
        r.add(Req.of("POST", "/newcluster", JSON, "{\"metadataServiceUri\":\"zk://h:1/l\",\"force\":1}", 400,
                "unknown field 'force'"));
        // PIP-477's read modes: only DUAL_READ, which is what is always done
        r.add(Req.of("POST", "/read-mode", JSON, "{\"mode\":\"OLD_CLUSTER_ONLY\"}", 409, "rollback"));
        r.add(Req.of("POST", "/read-mode", JSON, "{\"mode\":\"NEW_CLUSTER_ONLY\"}", 409, "drain-report"));
        r.add(Req.of("POST", "/read-mode", JSON, "{\"mode\":\"ANY\"}", 400, "unknown read mode 'ANY'"));
        r.add(Req.of("POST", "/read-mode", JSON, "{}", 400, "field 'mode' is required"));
        r.add(Req.of("GET", "/read-mode", null, null, 405, "allowed: POST"));
        r.add(Req.of("POST", "/internal", JSON, uri, 404, "no such endpoint"));
        r.add(Req.of("POST", "/internal/promote-cursor", JSON, "{}", 404, "no such endpoint"));
        r.add(Req.of("POST", "/switch", JSON, "{}", 400, "field 'target' is required"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":null}", 400, "field 'target' is required"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":7}", 400, "field 'target' must be a string"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":[\"east\"]}", 400, "must be a string"));
        r.add(Req.of("POST", "/newcluster", JSON, "{}", 400, "field 'metadataServiceUri' is required"));
        // 413 (also before the content type is looked at)
        r.add(new Req("POST", "/switch", JSON, bigBody(BookieClustersApi.MAX_BODY_BYTES + 1), 413, "larger than"));
        r.add(new Req("POST", "/switch", "text/plain", bigBody(BookieClustersApi.MAX_BODY_BYTES + 1), 413,
                "larger than"));
        r.add(new Req("POST", "/newcluster", JSON, bigBody(BookieClustersApi.MAX_BODY_BYTES + 1), 413,
                "larger than"));
        // 400: names and URIs
        r.add(Req.of("GET", "/bad name", null, null, 400, "must match"));
        r.add(Req.of("GET", "/" + "x".repeat(65), null, null, 400, "must match"));
        r.add(Req.of("GET", "/precheck/..", null, null, 400, "must match"));
        r.add(Req.of("POST", "/bad name", JSON, uri, 400, "must match"));
        r.add(Req.of("POST", "/..", JSON, uri, 400, "must match"));
        r.add(Req.of("POST", "/brokers", JSON, uri, 400, "reserved"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":\"../west\"}", 400, "must match"));
        r.add(Req.of("POST", "/switch", JSON, "{\"target\":\"\"}", 400, "empty"));
        r.add(Req.of("POST", "/newcluster", JSON, "{\"metadataServiceUri\":\"http://h:1/ledgers\"}", 400,
                "unsupported metadataServiceUri scheme"));
        r.add(Req.of("POST", "/newcluster", JSON, "{\"metadataServiceUri\":\"zk://h:1\"}", 400, "no ledgers root"));
        r.add(Req.of("POST", "/newcluster", JSON, "{\"metadataServiceUri\":\"\"}", 400, "empty"));
        // 409
        r.add(Req.of("POST", "/east", JSON, uri, 409, "'east' is already registered"));
        r.add(Req.of("POST", "/west2", JSON, "{\"metadataServiceUri\":\"zk://zk-west:2181/ledgers/\"}", 409,
                "same bookie cluster"));
        r.add(Req.of("POST", "/switch", JSON, target, 409, "fewer than the ensemble size 3"));
        return r;
    }

    @Test
    void refusedRequestsGetTheRightStatusAndChangeNothing() throws Exception {
        Map<String, String> before = snapshot();
        assertTrue(before.containsKey(ROOT + "/clusters/east"), "fixture: " + before.keySet());
        List<String> wrong = new ArrayList<>();
        for (Req q : refusedRequests()) {
            RestResponse resp = call(q.method(), q.path(), q.contentType(), q.body());
            String msg = resp.status() == 200 ? String.valueOf(resp.body()) : error(resp);
            if (resp.status() != q.status() || !msg.contains(q.message())) {
                wrong.add(q + " -> " + resp.status() + " " + msg);
            }
        }
        assertTrue(wrong.isEmpty(), "unexpected answers:\n" + String.join("\n", wrong));
        assertEquals(before, snapshot(), "a refused request changed the metadata store");
    }

    @Test
    void failedPrecheckIsReturnedWithTheRefusal() throws Exception {
        RestResponse r = call("POST", "/switch", "application/json; charset=UTF-8", "{\"target\":\"east\"}");
        assertEquals(409, r.status());
        JsonNode n = Json.mapper().readTree(BookieClustersApi.toJson(r));
        assertTrue(n.get("error").asText().startsWith("precheck failed for 'east'"), n.toString());
        JsonNode pre = n.get("precheck");
        assertFalse(pre.get("ok").asBoolean());
        assertEquals("east", pre.get("target").asText());
        assertEquals(2, pre.get("targetFacts").get("writableBookies").asInt());
        assertFalse(store.exists("/ledgers/idgen-long/HOB-0000000002").get(), "no id range was taken");
    }

    @Test
    void readsAnswer200() throws Exception {
        RestResponse list = call("get", "/", null, (String) null);
        assertEquals(200, list.status());
        @SuppressWarnings("unchecked")
        List<BookieClusterRecord> clusters = (List<BookieClusterRecord>) list.body();
        assertEquals(List.of("east", "west"), clusters.stream().map(BookieClusterRecord::name).toList());
        assertEquals(200, call("GET", "", null, (String) null).status());

        RestResponse one = call("GET", "/west/", null, (String) null);
        assertEquals(200, one.status());
        assertEquals(new BookieClusterRecord(1, "west", WEST_URI, ClusterStatus.STANDBY, NOW - 1000), one.body());

        RestResponse status = call("GET", "/status", null, (String) null);
        assertEquals(200, status.status());
        StatusReport s = assertInstanceOf(StatusReport.class, status.body());
        assertEquals("old", s.activeCluster());
        assertEquals(0L, s.epoch());

        RestResponse pre = call("GET", "/precheck/east", null, (String) null);
        assertEquals(200, pre.status());
        PrecheckReport p = assertInstanceOf(PrecheckReport.class, pre.body());
        assertFalse(p.ok());
        assertEquals("old", p.source());
        assertFalse(p.sourceReachable());
        // above old's ids with a margin: old cannot be read, it may have moved on since it was seen
        assertEquals(2L, p.proposedHighOrderBits());
        assertEquals(2L << 32, p.proposedFirstLedgerId());
        assertTrue(p.problems().stream().anyMatch(x -> x.contains("fewer than the ensemble size 3")), "" + p);
        // every answer serialises
        for (RestResponse r : List.of(list, one, status, pre)) {
            assertTrue(BookieClustersApi.toJson(r).length > 2);
        }
    }

    @Test
    void anAcceptedSwitchDoesChangeTheStore() throws Exception {
        // control for the "changes nothing" checks: the same request succeeds once east has enough bookies
        put("/ledgers/available/b4:3181", "");
        Map<String, String> before = snapshot();
        RestResponse r = call("POST", "/switch", JSON, "{\"target\":\"east\"}");
        assertEquals(200, r.status(), String.valueOf(r.body()));
        SwitchResult result = assertInstanceOf(SwitchResult.class, r.body());
        assertEquals("east", result.directive().target());
        assertEquals("old", result.directive().origin());
        assertEquals(1L, result.directive().epoch());
        assertEquals(2L << 32, result.directive().firstLedgerId());

        Map<String, String> after = snapshot();
        assertNotEquals(before, after);
        assertTrue(after.containsKey(ROOT + "/switch-target"));
        assertTrue(after.containsKey("/ledgers/idgen-long/HOB-0000000002"));
        BookieClusterRecord east = (BookieClusterRecord) call("GET", "/east", null, (String) null).body();
        assertEquals(ClusterStatus.ACTIVE, east.status());

        // switching to the now active cluster is refused and changes nothing
        RestResponse again = call("POST", "/switch", JSON, "{\"target\":\"east\"}");
        assertEquals(409, again.status());
        assertTrue(error(again).contains("already active"), error(again));
        assertEquals(after, snapshot());
    }

    /** PIP-477's forms: its register body, its one honoured read mode, the read mode in status. */
    @Test
    void thePipsRegisterBodyAndReadModeAreAccepted() throws Exception {
        Map<String, String> before = snapshot();
        RestResponse mode = call("POST", "/read-mode", JSON, "{\"mode\":\"DUAL_READ\"}");
        assertEquals(200, mode.status(), String.valueOf(mode.body()));
        assertEquals(Map.of("readMode", "DUAL_READ"), mode.body());
        assertEquals(before, snapshot(), "setting the read mode that is always in use changes nothing");
        StatusReport s = assertInstanceOf(StatusReport.class, call("GET", "/status", null, (String) null).body());
        assertEquals(io.bcswitch.switching.ReadMode.DUAL_READ, s.readMode());

        assertEquals(200, call("DELETE", "/east", null, (String) null).status());
        RestResponse reg = call("POST", "/east", JSON, "{\"name\":\"east\",\"metadataServiceUri\":\"" + EAST_URI
                + "\",\"status\":\"STANDBY\"}");
        assertEquals(200, reg.status(), String.valueOf(reg.body()));
        BookieClusterRecord east = assertInstanceOf(BookieClusterRecord.class, reg.body());
        assertEquals(ClusterStatus.STANDBY, east.status());
        assertEquals(EAST_URI, east.metadataServiceUri());
    }

    @Test
    void bodyOfExactlyTheLimitIsAccepted() throws Exception {
        RestResponse r = call("POST", "/switch", JSON, bigBody(BookieClustersApi.MAX_BODY_BYTES));
        assertEquals(404, r.status(), "parsed and looked up, not refused for size: " + r.body());
    }

    @Test
    void trailingContentAfterTheJsonObjectIsRefused() throws Exception {
        put("/ledgers/available/b4:3181", "");
        Map<String, String> before = snapshot();
        for (String body : new String[] {"{\"target\":\"east\"} garbage", "{\"target\":\"east\"}{\"target\":\"west\"}"}) {
            RestResponse r = call("POST", "/switch", JSON, body);
            assertEquals(400, r.status(), body + " -> " + r.body());
        }
        assertEquals(before, snapshot());
    }

    @Test
    void theBrokersOwnClusterCannotBeRegisteredTwiceUnderAnotherUri() throws Exception {
        Map<String, String> before = snapshot();
        RestResponse r = call("POST", "/east-again", JSON,
                "{\"metadataServiceUri\":\"zk+hierarchical://127.0.0.1:2181/ledgers\"}");
        assertEquals(409, r.status(), String.valueOf(r.body()));
        assertTrue(error(r).contains("same bookie cluster"), error(r));
        assertEquals(before, snapshot());
    }
}
