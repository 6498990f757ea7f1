package io.bcswitch.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A call the broker answers with 202 (it ran longer than the broker's {@code operationAfterSeconds} and continues as
 * an operation) is followed to the operation's end: its answer is the call's, its error the call's error.
 */
class OperationFollowingTest {
    private HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger polls = new AtomicInteger();
    /** what GET /operations/{id} answers once the operation ended */
    private volatile String ended;
    /** how many polls answer 503 first (a broker restarting behind a proxy) */
    private final AtomicInteger failingPolls = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            String path = ex.getRequestURI().getRawPath();
            requests.add(ex.getRequestMethod() + " " + path);
            int status;
            String body;
            if (path.endsWith("/operations/drain-1") && failingPolls.getAndDecrement() > 0) {
                status = 503;
                body = "{\"reason\":\"metadata store not available\"}";
            } else if (path.endsWith("/operations/drain-1")) {
                status = 200;
                body = polls.incrementAndGet() < 2 ? operation("RUNNING", "null", "null") : ended;
            } else {
                status = 202;
                body = operation("RUNNING", "null", "null");
            }
            byte[] out = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
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

    private static String operation(String state, String httpStatus, String result) {
        return "{\"id\":\"drain-1\",\"operation\":\"drain\",\"parameters\":{\"cluster\":\"cluster-a\"},"
                + "\"broker\":\"b1:8080\",\"state\":\"" + state + "\",\"startedAt\":5,\"httpStatus\":" + httpStatus
                + ",\"result\":" + result + "}";
    }

    private BookieClustersAdmin admin() {
        return BookieClustersAdmin.builder().serviceUrl("http://127.0.0.1:" + server.getAddress().getPort()).build();
    }

    @Test
    void theOperationsAnswerIsTheCallsAnswer() throws Exception {
        ended = operation("DONE", "200", "{\"cluster\":\"cluster-a\",\"ledgers\":3}");
        DrainReport d = admin().drainReport("cluster-a");
        assertEquals("cluster-a", d.cluster());
        assertEquals(3, d.ledgers());
        assertEquals(List.of("GET /admin/v2/bookie-clusters/drain/cluster-a",
                "GET /admin/v2/bookie-clusters/operations/drain-1",
                "GET /admin/v2/bookie-clusters/operations/drain-1"), requests, "polled until it ended");
        // asked for the operation itself (async), the 202 is the answer
        assertEquals("RUNNING", admin().startDrainReportAsync("cluster-a").get().state());
    }

    @Test
    void theOperationsErrorIsTheCallsError() {
        ended = operation("FAILED", "409", "{\"reason\":\"inside the rollback window\"}");
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                () -> admin().drainReport("cluster-a"));
        assertEquals(409, e.status());
        assertTrue(e.getMessage().contains("inside the rollback window"), e.getMessage());
    }

    @Test
    void aLostOperationFailsTheCallSayingSo() {
        ended = operation("LOST", "null", "null");
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                () -> admin().drainReport("cluster-a"));
        assertEquals(503, e.status());
        assertTrue(e.getMessage().contains("drain-1") && e.getMessage().contains("LOST"), e.getMessage());
    }

    @Test
    void aFewFailedPollsAreRiddenOutAndTooManyFailTheCallNamingTheOperation() throws Exception {
        ended = operation("DONE", "200", "{\"cluster\":\"cluster-a\",\"ledgers\":3}");
        failingPolls.set(AdminHttp.POLL_FAILURES - 1);
        assertEquals(3, admin().drainReport("cluster-a").ledgers());
        polls.set(0);
        failingPolls.set(AdminHttp.POLL_FAILURES);
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                () -> admin().drainReport("cluster-a"));
        assertEquals(503, e.status());
        assertTrue(e.getMessage().contains("following operation drain-1"), e.getMessage());
    }

    @Test
    void anEndedOperationWithoutItsResultFailsTheCallInsteadOfAnsweringNothing() {
        ended = operation("DONE", "200", "null"); // as a broker of an older version answers a result kept in chunks
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                () -> admin().drainReport("cluster-a"));
        assertTrue(e.getMessage().contains("gave no result"), e.getMessage());
    }

    @Test
    void anOperationStillRunningAfterTheOperationTimeoutFailsTheCallNamingIt() {
        ended = operation("RUNNING", "null", "null");
        BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                () -> BookieClustersAdmin.builder().serviceUrl("http://127.0.0.1:" + server.getAddress().getPort())
                        .operationTimeout(java.time.Duration.ofMillis(1500)).build().drainReport("cluster-a"));
        assertEquals(504, e.status());
        assertTrue(e.getMessage().contains("drain-1") && e.getMessage().contains("still running"), e.getMessage());
    }
}
