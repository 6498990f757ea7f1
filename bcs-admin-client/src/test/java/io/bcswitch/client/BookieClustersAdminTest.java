package io.bcswitch.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
            requests.add(ex.getRequestMethod() + " " + ex.getRequestURI().getRawPath() + " "
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
    void unreachableBrokerIsStatusZero() {
        BookieClustersAdmin dead = BookieClustersAdmin.builder().serviceUrl("http://127.0.0.1:1").build();
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class, dead::status);
        assertEquals(0, e.status());
        assertTrue(e.getMessage().startsWith("cannot reach http://127.0.0.1:1/admin/v2/bookie-clusters"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BookieClustersAdmin.builder().build());
        assertEquals(Map.of(), Map.of());
    }
}
