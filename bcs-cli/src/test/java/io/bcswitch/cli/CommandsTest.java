package io.bcswitch.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pulsar.admin.cli.extensions.CommandExecutionContext;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Commands as pulsar-admin runs them (parsed parameters in, printout and exception out) against a scripted API. */
class CommandsTest {
    private static final String VIOLATIONS = "{\"ok\":false,\"checkedAt\":1796006825000,\"deep\":true,"
            + "\"referencedLedgers\":12,\"clusters\":[\"cluster-a\",\"cluster-b\"],\"relocations\":3,\"violations\":["
            + "{\"check\":\"COPY_DIFFERS\",\"ledgerId\":4294967297,\"cluster\":\"cluster-b\","
            + "\"referencedBy\":\"tenant/ns/persistent/t/sub\",\"detail\":\"the entries differ\"},"
            + "{\"check\":\"BROKER_NOT_FOLLOWING\",\"ledgerId\":null,\"cluster\":\"broker-2:8080\","
            + "\"referencedBy\":null,\"detail\":\"live broker does not follow switch epoch 2\"}],\"unchecked\":[]}";
    private static final String OK = "{\"ok\":true,\"checkedAt\":1,\"deep\":false,\"referencedLedgers\":5,"
            + "\"clusters\":[\"cluster-a\"],\"relocations\":0,\"violations\":[],"
            + "\"unchecked\":[\"ledgers of bookie cluster 'cluster-c' could not be listed: timeout\"]}";

    private HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private volatile String body = "{}";
    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            String query = ex.getRequestURI().getRawQuery();
            requests.add(ex.getRequestMethod() + " " + ex.getRequestURI().getRawPath()
                    + (query == null ? "" : "?" + query) + " "
                    + new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            byte[] out = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
            ex.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    /** Runs {@code name} with {@code params} as pulsar-admin would hand them over. */
    private void run(String name, Map<String, Object> params) throws Exception {
        CustomCommand c = BookieClustersCommandFactory.commands(new PrintStream(printed, true, StandardCharsets.UTF_8),
                new ByteArrayInputStream(new byte[0])).stream().filter(x -> x.name().equals(name)).findFirst()
                .orElseThrow();
        c.execute(new HashMap<>(params), context());
    }

    /** Only what AdminConnection asks of pulsar-admin: its URL, and no credentials. */
    private CommandExecutionContext context() {
        String url = "http://127.0.0.1:" + server.getAddress().getPort();
        PulsarAdmin admin = (PulsarAdmin) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {PulsarAdmin.class}, (proxy, m, args) -> {
                    if (m.getName().equals("getServiceUrl")) {
                        return url;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
        return new CommandExecutionContext() {
            @Override
            public PulsarAdmin getPulsarAdmin() {
                return admin;
            }

            @Override
            public Properties getConfiguration() {
                return new Properties();
            }
        };
    }

    private String printed() {
        return printed.toString(StandardCharsets.UTF_8);
    }

    @Test
    void verifyWithViolationsPrintsTheReportThenFails() {
        body = VIOLATIONS;
        PulsarAdminException e = assertThrows(PulsarAdminException.class, () -> run("verify", Map.of("--deep", true)));
        assertEquals("error: verify found 2 violation(s)", e.getHttpError());
        assertEquals("GET /admin/v2/bookie-clusters/verify?deep=true ", requests.get(0));
        assertTrue(printed().startsWith("VIOLATIONS: 2 "), printed());
        assertTrue(printed().contains("  COPY_DIFFERS ledger=4294967297 cluster=cluster-b"), printed());
    }

    @Test
    void verifyWithViolationsFailsInJsonToo() {
        body = VIOLATIONS;
        PulsarAdminException e = assertThrows(PulsarAdminException.class,
                () -> run("verify", Map.of(AdminCommand.OUTPUT, "json")));
        assertEquals("error: verify found 2 violation(s)", e.getHttpError());
        assertEquals("GET /admin/v2/bookie-clusters/verify ", requests.get(0));
        assertTrue(printed().startsWith("{") && printed().contains("\"check\" : \"COPY_DIFFERS\""), printed());
    }

    @Test
    void verifyWithoutViolationSucceedsAlthoughSomethingWasNotChecked() throws Exception {
        body = OK;
        run("verify", Map.of());
        assertEquals("OK: no violation (5 referenced ledgers on 1 clusters, 0 relocations checked)\n"
                + "Not checked: ledgers of bookie cluster 'cluster-c' could not be listed: timeout\n", printed());
    }

    @Test
    void switchSendsAllowUnknownSourceIdsOnlyWithTheFlag() throws Exception {
        body = "{\"directive\":{\"target\":\"cluster-b\",\"origin\":\"cluster-a\",\"epoch\":1,\"ts\":7,"
                + "\"firstLedgerId\":4294967296}}";
        run("switch", Map.of(Params.CLUSTER, "cluster-b", "--yes", true));
        assertEquals("POST /admin/v2/bookie-clusters/switch {\"target\":\"cluster-b\"}", requests.get(0));
        run("switch", Map.of(Params.CLUSTER, "cluster-b", "--yes", true,
                "--allow-unknown-source-ids", true));
        assertEquals("POST /admin/v2/bookie-clusters/switch {\"target\":\"cluster-b\",\"allowUnknownSourceIds\":true}",
                requests.get(1));
        assertTrue(printed().startsWith("Switched: new ledgers are created on 'cluster-b' (epoch 1"), printed());
    }

    @Test
    void switchFlagIsDescribedInTheHelp() throws Exception {
        CustomCommand c = BookieClustersCommandFactory.commands(System.out, System.in).stream()
                .filter(x -> x.name().equals("switch")).findFirst().orElseThrow();
        var flag = c.parameters().stream().filter(p -> p.getNames().contains("--allow-unknown-source-ids"))
                .findFirst().orElseThrow();
        assertEquals("switch although the active cluster's metadata cannot be read and nothing records which "
                + "ledger ids it issued (the new range may overlap them)", flag.getDescription());
    }

    @Test
    void setTuningSendsOnlyWhatIsGivenAndNullForAReset() throws Exception {
        body = "{\"effective\":{\"migrationBytesPerSecond\":5000000,\"migrationConcurrency\":8,"
                + "\"cutoverTopicsPerSecond\":150.0},\"brokerConf\":{\"migrationBytesPerSecond\":1048576,"
                + "\"migrationConcurrency\":4,\"cutoverTopicsPerSecond\":150.0},\"stored\":{\"formatVersion\":1,"
                + "\"migrationBytesPerSecond\":5000000,\"migrationConcurrency\":8,\"updatedAt\":3}}";
        run("set-tuning", Map.of("--migration-bytes-per-second", "5000000", "--migration-concurrency", "8",
                "--reset", "cutoverTopicsPerSecond"));
        assertEquals("POST /admin/v2/bookie-clusters/tuning {\"migrationBytesPerSecond\":5000000,"
                + "\"migrationConcurrency\":8,\"cutoverTopicsPerSecond\":null}", requests.get(0));
        assertTrue(printed().contains("  migrationConcurrency     8              broker.conf 4              changed to 8\n"),
                printed());
        run("get-tuning", Map.of());
        assertEquals("GET /admin/v2/bookie-clusters/tuning ", requests.get(1));
    }

    @Test
    void setTuningWithNothingOrABadNumberSendsNothing() {
        for (Map<String, Object> bad : List.<Map<String, Object>>of(Map.of(),
                Map.of("--migration-concurrency", "many"), Map.of("--migration-concurrency", "0"),
                Map.of("--cutover-topics-per-second", "fast"))) {
            PulsarAdminException e = assertThrows(PulsarAdminException.class, () -> run("set-tuning", bad));
            assertTrue(e.getHttpError().startsWith("error: "), e.getHttpError());
        }
        assertTrue(requests.isEmpty(), "nothing sent: " + requests);
    }

    // ---- PIP-477's forms ----

    @Test
    void theClusterIsTheFirstArgumentOrNameAndSwitchTakesTarget() throws Exception {
        body = "{\"name\":\"cluster-b\",\"metadataServiceUri\":\"zk://b:2181/ledgers\",\"status\":\"STANDBY\"}";
        run("get", Map.of(Params.NAME, "cluster-b"));
        run("get", Map.of(Params.CLUSTER, List.of("cluster-b")));
        run("get", Map.of(Params.CLUSTER, List.of("cluster-b"), Params.NAME, "cluster-b"));
        assertEquals(List.of("GET /admin/v2/bookie-clusters/cluster-b ", "GET /admin/v2/bookie-clusters/cluster-b ",
                "GET /admin/v2/bookie-clusters/cluster-b "), requests);
        PulsarAdminException two = assertThrows(PulsarAdminException.class,
                () -> run("precheck", Map.of(Params.CLUSTER, "cluster-b", Params.NAME, "cluster-c")));
        assertTrue(two.getHttpError().contains("two bookie clusters named"), two.getHttpError());
        PulsarAdminException none = assertThrows(PulsarAdminException.class, () -> run("unregister", Map.of()));
        assertTrue(none.getHttpError().contains("a bookie cluster name is required (first argument or --name)"),
                none.getHttpError());
        assertEquals(3, requests.size(), "nothing sent for the refused ones: " + requests);

        body = "{\"directive\":{\"target\":\"cluster-b\",\"origin\":\"cluster-a\",\"epoch\":1,\"ts\":7,"
                + "\"firstLedgerId\":4294967296}}";
        run("switch", Map.of(Params.TARGET, "cluster-b", "--yes", true));
        assertEquals("POST /admin/v2/bookie-clusters/switch {\"target\":\"cluster-b\"}", requests.get(3));
    }

    @Test
    void registerTakesStatusStandbyOnly() throws Exception {
        body = "{\"name\":\"cluster-b\",\"metadataServiceUri\":\"zk://b:2181/ledgers\",\"status\":\"STANDBY\"}";
        run("register", Map.of(Params.NAME, "cluster-b", "--metadata-service-uri", "zk://b:2181/ledgers",
                "--status", "STANDBY"));
        assertEquals("POST /admin/v2/bookie-clusters/cluster-b {\"metadataServiceUri\":\"zk://b:2181/ledgers\","
                + "\"status\":\"STANDBY\"}", requests.get(0));
        PulsarAdminException active = assertThrows(PulsarAdminException.class, () -> run("register",
                Map.of(Params.NAME, "cluster-b", "--metadata-service-uri", "zk://b:2181/ledgers", "--status",
                        "ACTIVE")));
        assertTrue(active.getHttpError().contains("statuses follow the switch"), active.getHttpError());
        assertEquals(1, requests.size(), "nothing sent for ACTIVE: " + requests);
    }

    @Test
    void setReadModeAndListCleanupTargetsAreThePipsWords() throws Exception {
        body = "{\"readMode\":\"DUAL_READ\"}";
        run("set-read-mode", Map.of("--mode", "DUAL_READ"));
        assertEquals("POST /admin/v2/bookie-clusters/read-mode {\"mode\":\"DUAL_READ\"}", requests.get(0));
        assertTrue(printed().startsWith("Read mode: DUAL_READ"), printed());
        body = "[]";
        run("list-cleanup-targets", Map.of());
        assertEquals("GET /admin/v2/bookie-clusters/cleanup-targets ", requests.get(1));
    }

    @Test
    void cleanupIsADryRunUnlessDeleteIsGiven() throws Exception {
        body = "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"deleted\":0,\"targets\":[],\"errors\":[]}";
        run("cleanup", Map.of("--src-cluster", "cluster-a", "--delete", true));
        assertTrue(requests.get(0).contains("\"dryRun\":false"), requests.get(0));
        run("cleanup", Map.of("--src-cluster", "cluster-a", "--dry-run", true));
        assertTrue(requests.get(1).contains("\"dryRun\":true"), requests.get(1));
        run("cleanup", Map.of("--src-cluster", "cluster-a"));
        assertTrue(requests.get(2).contains("\"dryRun\":true"), requests.get(2));
        // the earlier spelling: pulsar-admin hands the value of '--dry-run false' over as a stray word
        run("cleanup", Map.of("--src-cluster", "cluster-a", "--dry-run", true, "dry-run-value", List.of("false")));
        assertTrue(requests.get(3).contains("\"dryRun\":false"), requests.get(3));
        for (Map<String, Object> bad : List.<Map<String, Object>>of(
                Map.of("--src-cluster", "cluster-a", "--dry-run", true, "--delete", true),
                Map.of("--src-cluster", "cluster-a", "dry-run-value", List.of("now")))) {
            PulsarAdminException e = assertThrows(PulsarAdminException.class, () -> run("cleanup", bad));
            assertTrue(e.getHttpError().startsWith("error: "), e.getHttpError());
        }
        assertEquals(4, requests.size(), "nothing sent for the contradictions: " + requests);
    }

    @Test
    void cleanupWithoutSrcClusterTakesTheOnlyClusterWithTargets() {
        var a = new io.bcswitch.client.CleanupTarget(1, "cluster-a", "RELOCATED");
        var a2 = new io.bcswitch.client.CleanupTarget(2, "cluster-a", "UNREFERENCED");
        var c = new io.bcswitch.client.CleanupTarget(3, "cluster-c", "RELOCATED");
        assertEquals("cluster-a", CleanupCommands.onlyClusterWithTargets(List.of(a, a2)));
        IllegalArgumentException several = assertThrows(IllegalArgumentException.class,
                () -> CleanupCommands.onlyClusterWithTargets(List.of(a, c)));
        assertTrue(several.getMessage().contains("cluster-a, cluster-c"), several.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> CleanupCommands.onlyClusterWithTargets(List.of()));
        assertTrue(none.getMessage().contains("nothing to do"), none.getMessage());
    }
}
