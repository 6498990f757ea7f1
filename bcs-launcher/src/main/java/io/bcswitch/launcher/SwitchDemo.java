package io.bcswitch.launcher;

import io.bcswitch.audit.VerifyReport;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.switching.StatusReport;
import io.bcswitch.switching.SwitchResult;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.RetentionPolicies;

/**
 * The switch demo on a started cluster: load, register, precheck, switch, wait for the cutover and the migration,
 * drain, verify, report. Its exit code says whether every acknowledged message arrived and the switch completed.
 */
final class SwitchDemo {
    private static final long STATUS_POLL_MS = 200;
    private static final long SEND_TIMEOUT_MS = TopicLoad.SEND_TIMEOUT_MS;
    private static final long CUTOVER_TIMEOUT_MS = 60_000;
    private static final long DRAIN_TIMEOUT_MS = 30_000;

    private final DemoCluster cluster;
    private final Options options;
    private final PrintStream out;
    private final DemoConsole console;
    private final DemoLedgers ledgers;
    private final Rest rest;

    // what the clients and the status saw, read by the report at the end
    private final AtomicReference<TopicLoad.Phase> phase = new AtomicReference<>(TopicLoad.Phase.BEFORE);
    private final Latencies[] latencies = Stream.of(TopicLoad.Phase.values())
            .map(p -> new Latencies()).toArray(Latencies[]::new);
    private final List<TopicLoad> loads = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private Rest.Reply switchReply;
    private long cutoverNanos = -1;
    private StatusReport lastStatus;
    private MigrationState migration;
    private VerifyReport verifyReport;
    private long buildStartNanos = -1;
    private long buildEndNanos = -1;

    SwitchDemo(DemoCluster cluster, Options options, PrintStream out) {
        this.cluster = cluster;
        this.options = options;
        this.out = out;
        this.console = new DemoConsole(out);
        this.ledgers = new DemoLedgers(options, out);
        this.rest = new Rest(cluster.access().broker(0).webServiceUrl());
    }

    /** Runs the demo; 0 when nothing failed. */
    int run() throws Exception {
        String namespace = cluster.access().createTenant("demo");
        PulsarAdmin admin = cluster.access().newAdmin();
        // Keep every ledger so that the report can show where each one lives after the switch.
        admin.namespaces().setRetention(namespace, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.access().newClient();
        try {
            ledgers.create(client, admin, namespace);
            for (int i = 0; i < options.topics; i++) {
                String topic = "persistent://" + namespace + "/topic-" + i;
                admin.topics().createNonPartitionedTopic(topic);
                loads.add(new TopicLoad(client, topic, i, options.rate, phase, latencies));
            }
            console.section(String.format("Demo: %d topics in %s, %d msg/s per topic, subscription '%s' (Exclusive)",
                    options.topics, namespace, options.rate, TopicLoad.SUBSCRIPTION));
            loads.forEach(TopicLoad::start);

            console.phase("before", options.phaseSeconds);
            sleepSeconds(options.phaseSeconds);

            console.section("REST (" + rest.url("") + ")");
            console.show(rest.get("/"));
            String register = Json.writeString(Map.of("metadataServiceUri",
                    cluster.access().metadataServiceUri(Launcher.CLUSTER_B)));
            Rest.Reply reg = rest.post("/" + Launcher.CLUSTER_B, register);
            console.show(reg);
            if (!reg.ok()) {
                failures.add("register " + Launcher.CLUSTER_B + " returned HTTP " + reg.status() + ": "
                        + reg.compact(300));
            }
            Rest.Reply pre = rest.get("/precheck/" + Launcher.CLUSTER_B);
            console.show(pre);
            console.precheck(pre.as(PrecheckReport.class));

            switchUnderLoad();

            phase.set(TopicLoad.Phase.AFTER);
            console.phase("after", options.phaseSeconds);
            sleepSeconds(options.phaseSeconds);

            drain();
            verify();
            Rest.Reply finalStatus = rest.get("/status");
            StatusReport st = finalStatus.as(StatusReport.class);
            if (st != null) {
                lastStatus = st;
            } else {
                warnings.add("final GET /status: HTTP " + finalStatus.status() + " " + finalStatus.compact(300));
            }
            Map<String, Set<Long>> onCluster = new LinkedHashMap<>();
            for (String bk : cluster.bookieClusters()) {
                onCluster.put(bk, cluster.ledgerIds(bk));
            }
            new DemoReport(out, DemoConsole.TIME, STATUS_POLL_MS).print(new DemoReport.Results(loads, latencies,
                    failures, warnings, migration, buildStartNanos, buildEndNanos, verifyReport, switchReply,
                    cutoverNanos, lastStatus), admin, onCluster);
        } finally {
            for (TopicLoad load : loads) {
                load.close();
            }
        }
        return failures.isEmpty() ? 0 : 1;
    }

    /** The switch while the topics publish, then the cutover and the migration's BUILD it starts. */
    private void switchUnderLoad() throws Exception {
        phase.set(TopicLoad.Phase.DURING);
        console.phase("during", -1);
        long switchStart = System.nanoTime();
        switchReply = rest.post("/switch", Json.writeString(Map.of("target", Launcher.CLUSTER_B)));
        console.show(switchReply);
        if (switchReply.ok()) {
            SwitchResult sr = switchReply.as(SwitchResult.class);
            if (sr != null && sr.directive() != null) {
                out.printf("  directive: epoch %d, %s -> %s, first ledger id %d%n", sr.directive().epoch(),
                        sr.directive().origin(), sr.directive().target(), sr.directive().firstLedgerId());
            }
            awaitCutover(switchStart);
            phase.set(TopicLoad.Phase.BUILD);
            console.phase("build (the migration copies the metadata ledgers)", -1);
            awaitMigration();
        } else {
            failures.add("switch returned HTTP " + switchReply.status() + ": " + switchReply.compact(300));
        }
    }

    private void awaitCutover(long switchStart) throws Exception {
        long deadline = switchStart + CUTOVER_TIMEOUT_MS * 1_000_000L;
        String lastLine = null;
        while (true) {
            Rest.Reply r = rest.get("/status");
            double t = (System.nanoTime() - switchStart) / 1e9;
            StatusReport st = r.as(StatusReport.class);
            String line;
            if (st == null) {
                line = "HTTP " + r.status() + " " + r.compact(300);
            } else {
                lastStatus = st;
                line = "epoch " + st.epoch() + ", active " + st.activeCluster() + ", cutoverComplete "
                        + st.cutoverComplete() + "; " + DemoConsole.progress(st.brokers());
            }
            if (!line.equals(lastLine)) {
                out.printf("  status +%5.2fs  %s%n", t, line);
                lastLine = line;
            }
            if (st != null && st.cutoverComplete()) {
                cutoverNanos = System.nanoTime() - switchStart;
                out.printf("  cutover complete %.2f s after the switch call started%n", cutoverNanos / 1e9);
                return;
            }
            if (System.nanoTime() > deadline) {
                failures.add("cutover not complete " + CUTOVER_TIMEOUT_MS / 1000 + " s after the switch; last status: "
                        + line);
                out.println("  cutover NOT complete after " + CUTOVER_TIMEOUT_MS / 1000 + " s");
                return;
            }
            Thread.sleep(STATUS_POLL_MS);
        }
    }

    /** Polls status until the migration after the switch has finished; times its BUILD phase. */
    private void awaitMigration() throws Exception {
        long start = System.nanoTime();
        long deadline = start + 300_000_000_000L;
        String lastLine = null;
        while (System.nanoTime() < deadline) {
            StatusReport st = rest.get("/status").as(StatusReport.class);
            var m = st == null ? null : st.migration();
            if (m != null) {
                migration = m;
                var ph = m.phase();
                if (buildStartNanos < 0 && ph != Phase.PENDING) {
                    buildStartNanos = System.nanoTime();
                }
                if (buildEndNanos < 0 && buildStartNanos >= 0 && ph != Phase.BUILD && ph != Phase.PENDING) {
                    buildEndNanos = System.nanoTime();
                }
                String line = ph + ": " + m.copied() + " copied, " + m.alreadyPresent() + " present, "
                        + m.promoted() + "/" + m.planned() + " promoted, " + m.bytesCopied() + " bytes";
                if (!line.equals(lastLine)) {
                    out.printf("  migration +%5.2fs  %s%n", (System.nanoTime() - start) / 1e9, line);
                    lastLine = line;
                }
                if (ph.terminal()) {
                    if (ph != Phase.DONE) {
                        warnings.add("migration ended " + ph + ": " + m.issues());
                    }
                    return;
                }
            }
            Thread.sleep(100);
        }
        failures.add("migration not finished 300 s after the cutover");
    }

    private void drain() throws InterruptedException {
        console.section("Drain");
        long t0 = System.currentTimeMillis();
        for (TopicLoad load : loads) {
            load.stopProducing();
        }
        phase.set(TopicLoad.Phase.DRAIN);
        // sends time out after 30 s, so every outstanding send should complete within that
        while (loads.stream().mapToLong(TopicLoad::inFlight).sum() > 0
                && System.currentTimeMillis() - t0 < SEND_TIMEOUT_MS + 5_000) {
            Thread.sleep(20);
        }
        long pending = loads.stream().mapToLong(TopicLoad::inFlight).sum();
        out.printf("  producers stopped in %d ms (%d sends still outstanding)%n",
                System.currentTimeMillis() - t0, pending);
        long t1 = System.currentTimeMillis();
        while (!loads.stream().allMatch(TopicLoad::drained) && System.currentTimeMillis() - t1 < DRAIN_TIMEOUT_MS) {
            Thread.sleep(100);
        }
        boolean drained = loads.stream().allMatch(TopicLoad::drained);
        // a moment for late duplicates to show up
        Thread.sleep(500);
        for (TopicLoad load : loads) {
            load.stopConsuming();
        }
        out.printf("  consumers %s after %d ms%n", drained ? "received every acknowledged message"
                : "still missing messages", System.currentTimeMillis() - t1);
    }

    /** The invariants, checked by the plugin itself (GET /verify, deep: copies compared entry by entry). */
    private void verify() throws Exception {
        Rest.Reply verify = rest.get("/verify?deep=true");
        verifyReport = verify.as(VerifyReport.class);
        if (verifyReport == null) {
            failures.add("GET /verify: HTTP " + verify.status() + " " + verify.compact(300));
        } else if (!verifyReport.ok()) {
            failures.add("verify found " + verifyReport.violations().size() + " violation(s): "
                    + verifyReport.violations());
        }
    }

    private static void sleepSeconds(double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }
}
