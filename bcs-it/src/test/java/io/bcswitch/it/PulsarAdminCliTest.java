package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.PulsarAdminCli;
import io.bcswitch.it.support.PulsarAdminCli.Result;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Tokens;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code pulsar-admin bookie-clusters ...} run as an operator runs it: the real pulsar-admin entry point
 * in its own process, the extension NAR in its extensions directory, token authentication on. Checks
 * what each command prints and its exit status.
 */
class PulsarAdminCliTest extends ClusterTestBase {
    private static final Tokens TOKENS = new Tokens();
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() throws Exception {
        cluster = TOKENS.secure(twoBookieClusters()
                .bookieCluster("cluster-c", 1)
                // every drain report, cleanup and verify called without --async becomes an operation at once, as
                // one over a large cluster does after 30 s: what these commands print below is what the CLI got by
                // following the operation to its end
                .brokerConfig(p -> p.setProperty(io.bcswitch.config.ConfigKey.OPERATION_AFTER_SECONDS.fullName(),
                        "0")))
                .start();
    }

    private static Map<String, String> snapshot() throws Exception {
        return Registry.registryAndManagedLedgers(cluster);
    }

    /** pulsar-admin exited 1 and said {@code text} (on either stream). */
    static void failsWith(Result r, String text) {
        assertEquals(1, r.exit(), r.all());
        assertTrue(r.all().contains(text), "expected '" + text + "' in: " + r.all());
    }

    @Test
    void everyCommandPrintsWhatAnOperatorNeedsAndFailsWithAReason() throws Exception {
        String web = cluster.broker(0).webServiceUrl();
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        String uriC = cluster.bookieCluster("cluster-c").metadataServiceUri();
        try (PulsarAdminCli cli = new PulsarAdminCli(web, "token:" + TOKENS.admin);
             PulsarAdminCli app = new PulsarAdminCli(web, "token:" + TOKENS.app);
             PulsarAdminCli anonymous = new PulsarAdminCli(web, (String) null)) {
            Result help = cli.run("bookie-clusters", "--help");
            assertEquals(0, help.exit(), help.all());
            for (String c : List.of("list", "get", "register", "unregister", "precheck", "switch", "status",
                    "drain-report", "cleanup-targets", "cleanup", "retry-migration", "rollback", "close-client",
                    "operation", "get-tuning", "set-tuning", "set-read-mode", "list-cleanup-targets")) {
                assertTrue(help.stdout().contains("  " + c + " "), c + " in help: " + help.stdout());
            }
            Result switchHelp = cli.run("bookie-clusters", "switch", "--help");
            assertTrue(switchHelp.stdout().contains("--yes") && switchHelp.stdout().contains("confirmation"));

            Result list = cli.run("bookie-clusters", "list");
            assertEquals(0, list.exit(), list.all());
            assertTrue(list.stdout().startsWith("NAME "), list.stdout());
            assertTrue(list.stdout().lines().anyMatch(l -> l.startsWith("cluster-a") && l.contains("ACTIVE")));
            JsonNode listJson = JSON.readTree(cli.run("bookie-clusters", "list", "--output", "json").stdout());
            assertEquals("cluster-a", listJson.get(0).get("name").asText());

            // a topic whose schema version 0 is registered on cluster-a (version 1 follows on cluster-b)
            String typed = "persistent://" + cluster.createTenant("cli") + "/typed";
            try (org.apache.pulsar.client.api.PulsarClient client = cluster.newClient();
                 var p = client.newProducer(org.apache.pulsar.client.api.Schema.JSON(SchemaRoutingTest.V1.class))
                         .topic(typed).create()) {
                p.send(new SchemaRoutingTest.V1(1));
            }
            Result reg = cli.run("bookie-clusters", "register", "cluster-b", "--metadata-service-uri", uriB);
            assertEquals(0, reg.exit(), reg.all());
            assertTrue(reg.stdout().contains("Registered bookie cluster 'cluster-b' as STANDBY"), reg.stdout());
            Map<String, String> before = snapshot();
            failsWith(cli.run("bookie-clusters", "register", "cluster-b", "-u", uriC), "already registered");
            failsWith(cli.run("bookie-clusters", "register", "bad name", "-u", uriC), "must match");
            failsWith(cli.run("bookie-clusters", "get", "cluster-x"), "not registered");
            failsWith(cli.run("bookie-clusters", "list", "-o", "yaml"), "--output must be text or json");
            failsWith(cli.run("bookie-clusters", "get"), "a bookie cluster name is required (first argument or --name)");
            failsWith(app.run("bookie-clusters", "list"), "super-user");
            failsWith(anonymous.run("bookie-clusters", "list"), "401");
            assertEquals(before, snapshot(), "refused commands change nothing");

            // pacing changed at run time, and back to broker.conf's
            failsWith(cli.run("bookie-clusters", "set-tuning"), "nothing to change");
            failsWith(cli.run("bookie-clusters", "set-tuning", "--cutover-topics-per-second", "0"), ">= 0.1");
            failsWith(cli.run("bookie-clusters", "set-tuning", "--reset", "promoteBatchSize"), "unknown field");
            assertEquals(before, snapshot(), "refused tuning changes nothing");
            Result tuned = cli.run("bookie-clusters", "set-tuning", "--migration-concurrency", "6",
                    "--migration-bytes-per-second", "2000000");
            assertEquals(0, tuned.exit(), tuned.all());
            assertTrue(tuned.stdout().contains("changed to 6") && tuned.stdout().contains("changed to 2000000"),
                    tuned.stdout());
            Result reset = cli.run("bookie-clusters", "set-tuning", "--reset",
                    "migrationConcurrency,migrationBytesPerSecond");
            assertEquals(0, reset.exit(), reset.all());
            Result tuning = cli.run("bookie-clusters", "get-tuning");
            assertEquals(0, tuning.exit(), tuning.all());
            assertTrue(tuning.stdout().lines().filter(l -> l.contains("(not changed)")).count() == 3, tuning.stdout());
            before = snapshot();

            Result get = cli.run("bookie-clusters", "get", "cluster-b");
            assertEquals(0, get.exit(), get.all());
            assertTrue(get.stdout().contains("STANDBY") && get.stdout().contains(uriB), get.stdout());

            Result pre = cli.run("bookie-clusters", "precheck", "cluster-b");
            assertEquals(0, pre.exit(), pre.all());
            assertTrue(pre.stdout().contains("Precheck for switching to 'cluster-b': OK"), pre.stdout());
            assertTrue(pre.stdout().contains("source  cluster-a"), pre.stdout());
            // cluster-c has one bookie, fewer than the ensemble size: precheck prints why and fails
            assertEquals(0, cli.run("bookie-clusters", "register", "cluster-c", "-u", uriC).exit());
            Result preC = cli.run("bookie-clusters", "precheck", "cluster-c");
            failsWith(preC, "writable bookies");
            assertTrue(preC.stdout().contains("NOT OK"), preC.stdout());

            // switch asks first; anything but yes changes nothing
            before = snapshot();
            Result no = cli.runWithInput("n\n", "bookie-clusters", "switch", "cluster-b");
            failsWith(no, "not confirmed");
            assertTrue(no.stdout().contains("[y/N]"), no.stdout());
            failsWith(cli.run("bookie-clusters", "switch", "cluster-b"), "not confirmed");
            failsWith(cli.run("bookie-clusters", "switch", "cluster-c", "--yes"), "precheck failed");
            assertEquals(before, snapshot(), "an unconfirmed or refused switch changes nothing");

            Result sw = cli.runWithInput("y\n", "bookie-clusters", "switch", "cluster-b");
            assertEquals(0, sw.exit(), sw.all());
            assertTrue(sw.stdout().contains("Switched: new ledgers are created on 'cluster-b' (epoch 1"), sw.stdout());
            failsWith(cli.run("bookie-clusters", "switch", "cluster-b", "--yes"), "already active");

            Result status = awaitCutover(cli);
            assertTrue(status.stdout().contains("Active bookie cluster: cluster-b"), status.stdout());
            assertTrue(status.stdout().contains("Cutover:               complete"), status.stdout());
            assertTrue(status.stdout().lines().anyMatch(l -> l.trim().startsWith("1") && l.contains("cluster-b")
                    && l.contains("4294967296")), "range table row of epoch 1: " + status.stdout());
            assertTrue(status.stdout().contains("[####################] done"), status.stdout());
            JsonNode statusJson = JSON.readTree(cli.run("bookie-clusters", "status", "-o", "json").stdout());
            assertEquals("cluster-b", statusJson.get("activeCluster").asText());
            assertEquals(2, statusJson.get("ranges").size());

            failsWith(cli.run("bookie-clusters", "unregister", "cluster-b"), "active cluster");
            try (org.apache.pulsar.client.api.PulsarClient client = cluster.newClient();
                 var p = client.newProducer(org.apache.pulsar.client.api.Schema.JSON(SchemaRoutingTest.V2.class))
                         .topic(typed).create()) {
                p.send(new SchemaRoutingTest.V2(2, "on B"));
            }
            // both schema versions resolve through pulsar-admin: v0 registered on A, v1 on B
            Result v0 = cli.run("schemas", "get", typed, "--version", "0");
            assertEquals(0, v0.exit(), v0.all());
            assertTrue(v0.stdout().contains("\"id\"") && !v0.stdout().contains("note"), v0.stdout());
            Result v1 = cli.run("schemas", "get", typed, "--version", "1");
            assertEquals(0, v1.exit(), v1.all());
            assertTrue(v1.stdout().contains("note"), v1.stdout());

            // after the switch: the migration, the drain report, cleanup guarded by the rollback window
            long deadline = System.nanoTime() + 60_000_000_000L;
            Result migrated;
            do {
                migrated = cli.run("bookie-clusters", "status");
            } while (!migrated.stdout().contains(": DONE") && System.nanoTime() < deadline);
            // DONE, not DONE_WITH_FAILURES
            assertTrue(migrated.stdout().contains("Migration of switch epoch 1 to 'cluster-b': DONE (on "),
                    migrated.stdout());
            Result retry = cli.run("bookie-clusters", "retry-migration");
            assertEquals(0, retry.exit(), retry.all());
            assertTrue(retry.stdout().startsWith("Migration of switch epoch 1 to 'cluster-b' runs again (BUILD on "),
                    retry.stdout());
            do {
                migrated = cli.run("bookie-clusters", "status");
            } while (!migrated.stdout().contains(": DONE") && System.nanoTime() < deadline);
            assertTrue(migrated.stdout().contains("Migration of switch epoch 1 to 'cluster-b': DONE (on "),
                    migrated.stdout());
            // the invariants: none broken (copies compared entry by entry)
            Result verify = cli.run("bookie-clusters", "verify", "--deep");
            for (int i = 0; i < 30 && verify.exit() != 0; i++) { // a broker may still be applying the last epoch
                Thread.sleep(1000);
                verify = cli.run("bookie-clusters", "verify", "--deep");
            }
            org.slf4j.LoggerFactory.getLogger(PulsarAdminCliTest.class).info("CLI verify --deep:\n{}", verify.stdout());
            assertEquals(0, verify.exit(), verify.all());
            assertTrue(verify.stdout().startsWith("OK: no violation"), verify.stdout());
            // a ledger nothing explains under an id of the brokers' (another user of cluster-c made it, say): named,
            // and pulsar-admin exits non-zero
            long someId = cluster.bookieCluster("cluster-a").ledgerIds().stream().min(Long::compare).orElseThrow();
            try (var bkB = org.apache.bookkeeper.client.BookKeeper.forConfig(
                    cluster.bookieCluster("cluster-c").clientConfiguration()).build()) {
                bkB.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                        .withPassword(new byte[0]).makeAdv().withLedgerId(someId).execute().get().close();
                Result broken = cli.run("bookie-clusters", "verify");
                org.slf4j.LoggerFactory.getLogger(PulsarAdminCliTest.class).info("CLI verify with a foreign "
                        + "ledger:\n{}{}", broken.stdout(), broken.stderr());
                assertNotEquals(0, broken.exit(), broken.all());
                assertTrue(broken.stdout().contains("UNEXPLAINED_COPY ledger=" + someId + " cluster=cluster-c"),
                        broken.stdout());
                bkB.newDeleteLedgerOp().withLedgerId(someId).execute().get();
            }
            Result drain = cli.run("bookie-clusters", "drain-report", "cluster-a");
            assertEquals(0, drain.exit(), drain.all());
            assertTrue(drain.stdout().startsWith("Bookie cluster 'cluster-a' (STANDBY)"), drain.stdout());
            assertEquals(0, cli.run("bookie-clusters", "cleanup-targets", "cluster-a").exit());
            failsWith(cli.run("bookie-clusters", "cleanup", "--src-cluster", "cluster-a", "--dry-run", "false"),
                    "rollback window");
            Result dry = cli.run("bookie-clusters", "cleanup", "--src-cluster", "cluster-a", "--force");
            assertEquals(0, dry.exit(), dry.all());
            assertTrue(dry.stdout().startsWith("Dry run: would delete"), dry.stdout());
            // the same as an operation: started at once, followed with 'operation'
            Result started = cli.run("bookie-clusters", "cleanup", "--src-cluster", "cluster-a", "--force", "--async");
            assertEquals(0, started.exit(), started.all());
            assertTrue(started.stdout().startsWith("Started operation cleanup-"), started.stdout());
            String opId = started.stdout().split(" ")[2];
            Result op = cli.run("bookie-clusters", "operation", opId);
            for (int i = 0; i < 30 && op.stdout().contains(", RUNNING,"); i++) {
                Thread.sleep(500);
                op = cli.run("bookie-clusters", "operation", opId);
            }
            assertEquals(0, op.exit(), op.all());
            assertTrue(op.stdout().contains(", DONE,") && op.stdout().contains("Dry run: would delete"), op.stdout());
            Result ops = cli.run("bookie-clusters", "operation");
            assertEquals(0, ops.exit(), ops.all());
            assertTrue(ops.stdout().lines().anyMatch(l -> l.startsWith(opId) && l.contains(" DONE ")), ops.stdout());
            for (String became : List.of("verify-", "drain-")) {
                assertTrue(ops.stdout().lines().anyMatch(l -> l.startsWith(became) && l.contains(" DONE ")),
                        "the synchronous " + became + " calls became operations: " + ops.stdout());
            }
            assertTrue(ops.stdout().lines().anyMatch(l -> l.startsWith("cleanup-") && l.contains(" FAILED ")),
                    "the refused cleanup ended FAILED, and the CLI said why: " + ops.stdout());
            failsWith(cli.run("bookie-clusters", "operation", "cleanup-0-0"), "no operation");
            failsWith(cli.run("bookie-clusters", "close-client", "cluster-b"), "active");
            Result unreg = cli.run("bookie-clusters", "unregister", "cluster-c");
            assertEquals(0, unreg.exit(), unreg.all());
            assertTrue(unreg.stdout().contains("Unregistered bookie cluster 'cluster-c'"), unreg.stdout());
            assertEquals(2, JSON.readTree(cli.run("bookie-clusters", "list", "-o", "json").stdout()).size());

            // rollback inside the window
            failsWith(cli.run("bookie-clusters", "rollback"), "not confirmed");
            Result rb = cli.run("bookie-clusters", "rollback", "--yes");
            assertEquals(0, rb.exit(), rb.all());
            assertTrue(rb.stdout().startsWith("Rolled back switch epoch 1: new ledgers are created on 'cluster-a' "
                    + "again (epoch 2"), rb.stdout());

            pipCommandLines(cli, uriC);
        }
    }

    /**
     * PIP-477's command lines as its text prints them (the placeholders of its CLI block filled in with this
     * cluster's names): each works, or is refused with the reason docs/pip-477.md gives.
     */
    private static void pipCommandLines(PulsarAdminCli cli, String uriC) throws Exception {
        // what a register, precheck or switch could write (the rollback just before still settles elsewhere:
        // broker records, the migration's state and copies)
        java.util.function.Predicate<String> touched = k -> k.contains("/clusters/") || k.endsWith("/switch-target")
                || k.endsWith("/switch-prepare") || k.endsWith("/ranges") || k.contains("/id-watermarks");
        java.util.concurrent.Callable<Map<String, String>> registry = () -> new java.util.TreeMap<>(
                snapshot().entrySet().stream().filter(e -> touched.test(e.getKey()))
                        .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
        Map<String, String> before = registry.call();
        assertTrue(before.keySet().stream().anyMatch(k -> k.endsWith("/clusters/cluster-b")), before.toString());
        // Phase 1-3 of the PIP, verbatim: its example cluster's metadata service does not exist here
        failsWith(cli.run(("bookie-clusters register --name new-cluster --metadata-service-uri "
                + "zk+null://new-zk:2181/ledgers-v2 --status STANDBY").split(" ")), "cannot read bookie cluster metadata");
        failsWith(cli.run("bookie-clusters precheck --name new-cluster".split(" ")), "not registered");
        failsWith(cli.run("bookie-clusters switch --target new-cluster".split(" ")), "not confirmed");
        // the state diagram's shorthand, verbatim (its URI is an ellipsis)
        failsWith(cli.run("bookie-clusters register --name newCluster --uri … --status STANDBY".split(" ")),
                "metadataServiceUri");
        failsWith(cli.run("bookie-clusters switch --target newCluster".split(" ")), "not confirmed");
        assertEquals(before, registry.call(), "the refused ones change nothing");

        // the CLI block, line by line
        assertEquals(0, cli.run("bookie-clusters list".split(" ")).exit());
        Result get = cli.run("bookie-clusters get --name cluster-b".split(" "));
        assertEquals(0, get.exit(), get.all());
        Result reg = cli.run(("bookie-clusters register --name cluster-c --metadata-service-uri " + uriC
                + " --status STANDBY").split(" "));
        assertEquals(0, reg.exit(), reg.all());
        failsWith(cli.run(("bookie-clusters register --name cluster-d --metadata-service-uri " + uriC
                + " --status ACTIVE").split(" ")), "statuses follow the switch");
        // cluster-c holds nothing: the PIP's close-client retires it (the block's last line, run here where the
        // outcome does not depend on how far the rollback above has got)
        Result closed = cli.run("bookie-clusters close-client --name cluster-c".split(" "));
        assertEquals(0, closed.exit(), closed.all());
        assertTrue(closed.stdout().contains("'cluster-c' is DEPRECATED"), closed.stdout());
        Result unreg = cli.run("bookie-clusters unregister --name cluster-c".split(" "));
        assertEquals(0, unreg.exit(), unreg.all());
        Result pre = cli.run("bookie-clusters precheck --name cluster-b".split(" "));
        assertEquals(0, pre.exit(), pre.all());
        failsWith(cli.run("bookie-clusters switch --target cluster-b".split(" ")), "not confirmed");
        Result status = cli.run("bookie-clusters status".split(" "));
        assertEquals(0, status.exit(), status.all());
        assertTrue(status.stdout().contains("Read mode:             DUAL_READ"), status.stdout());
        Result mode = cli.run("bookie-clusters set-read-mode --mode DUAL_READ".split(" "));
        assertEquals(0, mode.exit(), mode.all());
        failsWith(cli.run("bookie-clusters set-read-mode --mode OLD_CLUSTER_ONLY".split(" ")), "rollback");
        failsWith(cli.run("bookie-clusters set-read-mode --mode NEW_CLUSTER_ONLY".split(" ")), "drain-report");
        Result targets = cli.run("bookie-clusters list-cleanup-targets -o json".split(" "));
        assertEquals(0, targets.exit(), targets.all());
        Result cleanup = cli.run("bookie-clusters cleanup --dry-run --src-cluster cluster-b --max-deletions 5 --force"
                .split(" "));
        assertEquals(0, cleanup.exit(), cleanup.all());
        assertTrue(cleanup.stdout().startsWith("Dry run: would delete"), cleanup.stdout());
        // bare, as Phase 6 writes it: the one cluster with something to delete, or why not
        java.util.Set<String> withTargets = new java.util.TreeSet<>();
        JSON.readTree(targets.stdout()).forEach(t -> withTargets.add(t.get("cluster").asText()));
        // (the rollback above started a new rollback window: without --force even a dry run is refused)
        Result bare = cli.run("bookie-clusters cleanup".split(" "));
        failsWith(bare, withTargets.size() == 1 ? "inside its rollback window"
                : withTargets.isEmpty() ? "nothing to do" : "name one with --src-cluster");
        failsWith(cli.run("bookie-clusters close-client --name oldCluster".split(" ")), "not registered");
        failsWith(cli.run("bookie-clusters close-client --name cluster-a".split(" ")), "is the active cluster");
    }

    private static Result awaitCutover(PulsarAdminCli cli) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            Result r = cli.run("bookie-clusters", "status");
            assertEquals(0, r.exit(), r.all());
            if (r.stdout().contains("Cutover:               complete") || System.nanoTime() > deadline) {
                return r;
            }
            Thread.sleep(200);
        }
    }
}
