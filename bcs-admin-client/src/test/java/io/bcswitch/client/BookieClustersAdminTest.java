package io.bcswitch.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pulsar.client.api.Authentication;
import org.apache.pulsar.client.api.AuthenticationDataProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client against a scripted HTTP server: request shape, decoding, and error mapping. */
class BookieClustersAdminTest {
    private HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private volatile int status = 200;
    private volatile String body = "{}";
    private volatile String contentType = "application/json";

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            String sent = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String query = ex.getRequestURI().getRawQuery();
            requests.add(ex.getRequestMethod() + " " + ex.getRequestURI().getRawPath()
                    + (query == null ? "" : "?" + query) + " "
                    + ex.getRequestHeaders().getFirst("Authorization") + " "
                    + ex.getRequestHeaders().getFirst("Content-Type") + " " + sent);
            byte[] out = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", contentType);
            ex.sendResponseHeaders(status, out.length);
            ex.getResponseBody().write(out);
            ex.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private BookieClustersAdmin admin() {
        return BookieClustersAdmin.builder().serviceUrl("http://127.0.0.1:" + server.getAddress().getPort() + "/")
                .authToken("t0k3n").build();
    }

    @Test
    void requestsCarryPathBodyAndCredentials() throws Exception {
        body = "{\"name\":\"cluster-b\",\"metadataServiceUri\":\"zk+hierarchical://b:2181/ledgers\","
                + "\"status\":\"STANDBY\",\"registeredAt\":5,\"formatVersion\":1,\"futureField\":[1]}";
        BookieCluster c = admin().register("cluster-b", "zk+hierarchical://b:2181/ledgers");
        assertEquals(new BookieCluster("cluster-b", "zk+hierarchical://b:2181/ledgers", "STANDBY", 5), c);
        assertEquals("POST /admin/v2/bookie-clusters/cluster-b Bearer t0k3n application/json "
                + "{\"metadataServiceUri\":\"zk+hierarchical://b:2181/ledgers\"}", requests.get(0));
        body = "[]";
        admin().list();
        assertTrue(requests.get(1).startsWith("GET /admin/v2/bookie-clusters/ Bearer t0k3n"), requests.get(1));
        body = "{}";
        admin().unregister("a b");
        assertTrue(requests.get(2).startsWith("DELETE /admin/v2/bookie-clusters/a%20b "), requests.get(2));
    }

    @Test
    void statusDecodesAndToleratesUnknownFields() throws Exception {
        body = "{\"activeCluster\":\"b\",\"epoch\":1,\"directive\":{\"formatVersion\":1,\"target\":\"b\","
                + "\"origin\":\"a\",\"epoch\":1,\"ts\":7,\"firstLedgerId\":4294967296},\"bootstrap\":{},"
                + "\"ranges\":[{\"cluster\":\"a\",\"firstLedgerId\":0,\"epoch\":0,\"since\":1}],\"clusters\":[],"
                + "\"brokers\":[{\"formatVersion\":1,\"broker\":\"x\",\"appliedEpoch\":1,\"activeCluster\":\"b\","
                + "\"topicsTotal\":3,\"topicsMoved\":3,\"topicsFailed\":0,\"startedAt\":1,\"finishedAt\":2}],"
                + "\"cutoverComplete\":true,\"pendingBrokers\":[]}";
        Status s = admin().status();
        assertEquals("b", s.activeCluster());
        assertEquals(4294967296L, s.directive().firstLedgerId());
        assertTrue(s.brokers().get(0).done());
        assertTrue(s.cutoverComplete());
        // an older broker without pendingBrokers still decodes
        body = body.replace(",\"pendingBrokers\":[]", "");
        assertEquals(null, admin().status().pendingBrokers());
    }

    @Test
    void statusDecodesTheNewerFieldsAsThePluginWritesThem() throws Exception {
        // written by the plugin's Jackson mapper from its records (StatusReport, BrokerCutoverRecord with
        // NON_EMPTY: a broker with nothing open has no openHandles/openLedgers and no activationError)
        body = "{\"activeCluster\":\"cluster-b\",\"epoch\":2,\"directive\":null,\"bootstrap\":{},\"ranges\":[],"
                + "\"clusters\":[{\"formatVersion\":1,\"name\":\"cluster-b\","
                + "\"metadataServiceUri\":\"zk+hierarchical://b:2181/ledgers\",\"status\":\"ACTIVE\","
                + "\"registeredAt\":5,\"instanceId\":\"4d2b-inst\"}],"
                + "\"brokers\":[{\"formatVersion\":1,\"broker\":\"broker-1:8080\",\"appliedEpoch\":2,"
                + "\"activeCluster\":\"cluster-b\",\"topicsTotal\":10,\"topicsMoved\":4,\"topicsFailed\":0,"
                + "\"startedAt\":1,\"finishedAt\":0,\"activationError\":\"cannot reach cluster-b\","
                + "\"activationAttempts\":3,\"openHandles\":{\"cluster-a\":2},\"openLedgers\":{\"cluster-a\":[7,9]}},"
                + "{\"formatVersion\":1,\"broker\":\"broker-2:8080\",\"appliedEpoch\":2,\"activeCluster\":\"cluster-b\","
                + "\"topicsTotal\":0,\"topicsMoved\":0,\"topicsFailed\":0,\"startedAt\":1,\"finishedAt\":2,"
                + "\"activationAttempts\":0}],"
                + "\"cutoverComplete\":false,\"pendingBrokers\":[\"broker-1:8080\"],"
                + "\"migration\":{\"formatVersion\":1,\"switchEpoch\":2,\"target\":\"cluster-b\","
                + "\"phase\":\"ROLLING_BACK\",\"owner\":\"broker-1:8080\",\"startedAt\":5,\"updatedAt\":5,"
                + "\"finishedAt\":0,\"planned\":0,\"copied\":0,\"alreadyPresent\":0,\"promoted\":0,\"failed\":0,"
                + "\"skipped\":0,\"collisions\":0,\"bytesCopied\":0,\"issues\":[],\"built\":[],"
                + "\"pendingDeletions\":[],\"deleteAfterRelocationEpoch\":0,\"originalsDeleted\":0,\"copies\":4,"
                + "\"rollbackTo\":\"cluster-a\",\"rollbackError\":\"precheck failed\",\"rollbackFlipEpoch\":0,"
                + "\"pendingDeletionCount\":3,\"notPromoted\":1},"
                + "\"relocationEpoch\":0,\"relocationPendingBrokers\":[],\"brokersWithoutRecord\":[\"broker-3:8080\"]}";
        Status s = admin().status();
        assertEquals(List.of("broker-3:8080"), s.brokersWithoutRecord());
        assertEquals("4d2b-inst", s.clusters().get(0).instanceId());
        BrokerProgress b1 = s.brokers().get(0);
        assertEquals("cannot reach cluster-b", b1.activationError());
        assertEquals(3, b1.activationAttempts());
        assertEquals(Map.of("cluster-a", 2), b1.openHandles());
        assertEquals(Map.of("cluster-a", List.of(7L, 9L)), b1.openLedgers());
        BrokerProgress b2 = s.brokers().get(1);
        assertNull(b2.activationError());
        assertEquals(Map.of(), b2.openHandles(), "left out when empty, read as none");
        assertEquals(Map.of(), b2.openLedgers());
        Migration m = s.migration();
        assertEquals("ROLLING_BACK", m.phase());
        assertEquals("cluster-a", m.rollbackTo());
        assertEquals("precheck failed", m.rollbackError());
        assertEquals(4, m.copies());
        assertEquals(3, m.pendingDeletionCount());
        assertEquals(1, m.notPromoted());
        // an older broker without the field
        body = body.replace(",\"brokersWithoutRecord\":[\"broker-3:8080\"]", "");
        assertNull(admin().status().brokersWithoutRecord());
    }

    @Test
    void drainAndCleanupDecodeOpenHandlesAndNotes() throws Exception {
        body = "{\"cluster\":\"cluster-a\",\"active\":false,\"status\":\"STANDBY\",\"empty\":false,\"ledgers\":1,"
                + "\"bytes\":480,\"byKind\":[],\"openLedgers\":0,\"dataLedgers\":[],\"switchOffAfter\":null,"
                + "\"note\":\"note\",\"openHandles\":{\"broker-1:8080\":2}}";
        DrainReport d = admin().drainReport("cluster-a");
        assertEquals(Map.of("broker-1:8080", 2), d.openHandles());
        assertEquals("GET /admin/v2/bookie-clusters/drain/cluster-a", requests.get(0).split(" Bearer")[0]);
        body = "{\"dryRun\":true,\"srcCluster\":\"cluster-a\",\"targets\":[],\"deleted\":0,\"kept\":2,"
                + "\"errors\":[],\"deprecated\":false,\"notes\":[\"ledger 7 is open on broker-1:8080; kept\"]}";
        CleanupResult r = admin().cleanup("cluster-a", true, 0, false);
        assertEquals(List.of("ledger 7 is open on broker-1:8080; kept"), r.notes());
    }

    @Test
    void verifyAsksDeepOnlyWhenToldAndDecodesTheReport() throws Exception {
        // as the plugin writes io.bcswitch.audit.VerifyReport
        body = "{\"ok\":false,\"checkedAt\":1796006825000,\"deep\":true,\"referencedLedgers\":12,"
                + "\"clusters\":[\"cluster-a\",\"cluster-b\"],\"relocations\":3,\"violations\":["
                + "{\"check\":\"COPY_DIFFERS\",\"ledgerId\":4294967297,\"cluster\":\"cluster-b\","
                + "\"referencedBy\":\"tenant/ns/persistent/t/sub\",\"detail\":\"the entries differ\"},"
                + "{\"check\":\"BROKER_NOT_FOLLOWING\",\"ledgerId\":null,\"cluster\":\"broker-2:8080\","
                + "\"referencedBy\":null,\"detail\":\"live broker does not follow switch epoch 2\"}],"
                + "\"unchecked\":[\"ledgers of bookie cluster 'cluster-c' could not be listed: timeout\"]}";
        VerifyReport v = admin().verify(true);
        assertTrue(requests.get(0).startsWith("GET /admin/v2/bookie-clusters/verify?deep=true Bearer t0k3n"),
                requests.get(0));
        assertFalse(v.ok());
        assertTrue(v.deep());
        assertEquals(1796006825000L, v.checkedAt());
        assertEquals(12, v.referencedLedgers());
        assertEquals(List.of("cluster-a", "cluster-b"), v.clusters());
        assertEquals(3, v.relocations());
        assertEquals(new VerifyReport.Violation("COPY_DIFFERS", 4294967297L, "cluster-b", "tenant/ns/persistent/t/sub",
                "the entries differ"), v.violations().get(0));
        assertNull(v.violations().get(1).ledgerId());
        assertNull(v.violations().get(1).referencedBy());
        assertEquals(List.of("ledgers of bookie cluster 'cluster-c' could not be listed: timeout"), v.unchecked());

        body = "{\"ok\":true,\"checkedAt\":1,\"deep\":false,\"referencedLedgers\":0,\"clusters\":[],"
                + "\"relocations\":0,\"violations\":[],\"unchecked\":[]}";
        assertTrue(admin().verifyAsync(false).get().ok());
        assertTrue(requests.get(1).startsWith("GET /admin/v2/bookie-clusters/verify Bearer "), requests.get(1));
    }

    @Test
    void switchSendsAllowUnknownSourceIdsOnlyWhenSet() throws Exception {
        body = "{\"directive\":{\"target\":\"b\",\"origin\":\"a\",\"epoch\":1,\"ts\":7,\"firstLedgerId\":4294967296}}";
        admin().switchTo("b");
        assertTrue(requests.get(0).endsWith(" application/json {\"target\":\"b\"}"), requests.get(0));
        admin().switchTo("b", false);
        assertTrue(requests.get(1).endsWith(" application/json {\"target\":\"b\"}"), requests.get(1));
        SwitchOutcome o = admin().switchTo("b", true);
        assertEquals("POST /admin/v2/bookie-clusters/switch Bearer t0k3n application/json "
                + "{\"target\":\"b\",\"allowUnknownSourceIds\":true}", requests.get(2));
        assertEquals(4294967296L, o.directive().firstLedgerId());
    }

    @Test
    void errorsCarryStatusAndTheApisReason() {
        status = 409;
        body = "{\"error\":\"bookie cluster 'b' is already registered\"}";
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                () -> admin().register("b", "zk+hierarchical://b:2181/ledgers"));
        assertEquals(409, e.status());
        assertEquals("bookie cluster 'b' is already registered", e.getMessage());
        status = 401;
        contentType = "text/html";
        body = "<html>Authentication required</html>";
        e = assertThrows(BookieClustersAdminException.class, () -> admin().list());
        assertEquals(401, e.status());
        assertTrue(e.getMessage().contains("authentication required"), e.getMessage());
    }

    @Test
    void longOperationsAreStartedAndPolled() throws Exception {
        status = 202;
        body = "{\"formatVersion\":1,\"id\":\"drain-abc-1\",\"operation\":\"drain\",\"parameters\":"
                + "{\"cluster\":\"a\"},\"broker\":\"b1:8080\",\"state\":\"RUNNING\",\"startedAt\":5}";
        Operation started = admin().startDrainReport("a");
        assertTrue(started.running());
        assertEquals("drain-abc-1", started.id());
        admin().startCleanup("a", true, 0, false);
        admin().startVerify(true);
        status = 200;
        body = "{\"id\":\"drain-abc-1\",\"operation\":\"drain\",\"state\":\"DONE\",\"startedAt\":5,"
                + "\"finishedAt\":9,\"httpStatus\":200,\"result\":{\"bytes\":440}}";
        Operation done = admin().operation("drain-abc-1");
        assertFalse(done.running());
        assertEquals(440, done.result().get("bytes").asInt());
        body = "[]";
        assertEquals(List.of(), admin().operations());
        assertEquals(List.of("GET /admin/v2/bookie-clusters/drain/a?async=true Bearer t0k3n null ",
                "POST /admin/v2/bookie-clusters/cleanup?async=true Bearer t0k3n application/json "
                        + "{\"srcCluster\":\"a\",\"dryRun\":true,\"maxDeletions\":0,\"force\":false}",
                "GET /admin/v2/bookie-clusters/verify?async=true&deep=true Bearer t0k3n null ",
                "GET /admin/v2/bookie-clusters/operations/drain-abc-1 Bearer t0k3n null ",
                "GET /admin/v2/bookie-clusters/operations Bearer t0k3n null "), requests);
    }

    @Test
    void aPulsarAuthenticationPluginSignsEveryRequest() throws Exception {
        String url = "http://127.0.0.1:" + server.getAddress().getPort();
        body = "[]";
        try (var a = BookieClustersAdmin.builder().serviceUrl(url)
                .authentication("org.apache.pulsar.client.impl.auth.AuthenticationToken", "token:p1ugin").build()) {
            a.list();
            a.list();
        }
        assertTrue(requests.get(0).startsWith("GET /admin/v2/bookie-clusters/ Bearer p1ugin "), requests.get(0));
        assertTrue(requests.get(1).startsWith("GET /admin/v2/bookie-clusters/ Bearer p1ugin "), requests.get(1));
        // a plugin the caller built and started is asked for the broker's host, per request
        List<String> hosts = new CopyOnWriteArrayList<>();
        Authentication custom = new Authentication() {
            @Override
            public String getAuthMethodName() {
                return "custom";
            }

            @Override
            public AuthenticationDataProvider getAuthData(String host) {
                hosts.add(host);
                return new AuthenticationDataProvider() {
                    @Override
                    public boolean hasDataForHttp() {
                        return true;
                    }

                    @Override
                    public Set<Map.Entry<String, String>> getHttpHeaders() {
                        return Set.of(Map.entry("Authorization", "Custom " + hosts.size()));
                    }
                };
            }

            @Override
            public void configure(Map<String, String> params) {
            }

            @Override
            public void start() {
            }

            @Override
            public void close() {
            }
        };
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).authentication(custom).build()) {
            a.list();
        }
        assertTrue(requests.get(2).startsWith("GET /admin/v2/bookie-clusters/ Custom "), requests.get(2));
        assertTrue(!hosts.isEmpty() && hosts.stream().allMatch("127.0.0.1"::equals), hosts.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BookieClustersAdmin.builder()
                .serviceUrl(url).authentication("com.example.NoSuchPlugin", "x"));
        assertTrue(e.getMessage().contains("com.example.NoSuchPlugin"), e.getMessage());
    }

    @Test
    void unreachableBrokerIsStatusZero() {
        BookieClustersAdmin dead = BookieClustersAdmin.builder().serviceUrl("http://127.0.0.1:1").build();
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class, dead::status);
        assertEquals(0, e.status());
        assertTrue(e.getMessage().startsWith("cannot reach http://127.0.0.1:1/admin/v2/bookie-clusters"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BookieClustersAdmin.builder().build());
    }
}
