package io.bcswitch.launcher;

import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.Json;
import io.bcswitch.switching.StatusReport;
import io.bcswitch.switching.SwitchResult;
import io.bcswitch.testkit.TestBookieCluster;
import io.bcswitch.testkit.TestCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.RetentionPolicies;

/**
 * Standalone launcher: one in-process ZooKeeper, bookie clusters {@code cluster-a} and
 * {@code cluster-b}, and one broker with the bookie-cluster-switch plugin and its REST servlet,
 * writing to {@code cluster-a}. With {@code --serve} it stays up for manual use; otherwise it runs
 * a live switch to {@code cluster-b} under load and reports what the clients saw.
 */
public final class Launcher {

    static final String CLUSTER_A = "cluster-a";
    static final String CLUSTER_B = "cluster-b";
    private static final long START_TIMEOUT_MS = 180_000;
    private static final long STATUS_POLL_MS = 200;
    private static final long SEND_TIMEOUT_MS = TopicLoad.SEND_TIMEOUT_MS;
    private static final long CUTOVER_TIMEOUT_MS = 60_000;
    private static final long DRAIN_TIMEOUT_MS = 30_000;
    private static final int BODY_CHARS = 600;
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

    private final Options options;
    private final PrintStream out = System.out;
    private TestCluster cluster;
    private boolean closed;

    private Launcher(Options options) {
        this.options = options;
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(Options.usage());
            System.exit(2);
            return;
        }
        if (options.help) {
            System.out.println(Options.usage());
            return;
        }
        quietJulLogging();
        Launcher launcher = new Launcher(options);
        int code;
        try {
            code = launcher.run();
        } catch (Throwable t) {
            System.out.flush();
            System.err.println("launcher failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        launcher.closeCluster();
        System.out.flush();
        System.exit(code);
    }

    private int run() throws Exception {
        for (int port : new int[] {options.port, options.webPort}) {
            if (!portFree(port)) {
                System.err.println("error: port " + port + " on 127.0.0.1 is in use; choose others with "
                        + "--port P / --web-port W");
                return 1;
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::closeCluster, "launcher-shutdown"));
        long t0 = System.nanoTime();
        Thread watchdog = startWatchdog();
        TestCluster started = TestCluster.builder()
                .bookieCluster(CLUSTER_A, options.bookies)
                .bookieCluster(CLUSTER_B, options.bookies)
                .brokerBookieCluster(CLUSTER_A)
                .brokers(1)
                .plugin(true)
                .brokerConfig(p -> {
                    p.setProperty("brokerServicePort", Integer.toString(options.port));
                    p.setProperty("webServicePort", Integer.toString(options.webPort));
                    if (options.migrationRate >= 0) {
                        p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(),
                                Long.toString(options.migrationRate));
                    }
                    if (options.migrationConcurrency > 0) {
                        p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_CONCURRENCY.fullName(),
                                Integer.toString(options.migrationConcurrency));
                    }
                })
                .start();
        watchdog.interrupt();
        synchronized (this) {
            cluster = started;
            if (closed) {
                // Ctrl-C arrived while starting
                started.close();
                return 130;
            }
        }
        for (TestBookieCluster bk : cluster.bookieClusters()) {
            out.println("bookie-cluster " + bk.name() + " " + bk.metadataServiceUri());
        }
        out.println("broker-service-url " + cluster.broker(0).brokerServiceUrl());
        out.println("web-service-url " + cluster.broker(0).webServiceUrl());
        out.printf("(started in %.1f s, %d bookies per cluster, broker writes to %s)%n",
                (System.nanoTime() - t0) / 1e9, options.bookies, CLUSTER_A);
        out.flush();
        return options.serve ? serve() : new Demo().run();
    }

    private int serve() throws InterruptedException {
        String web = cluster.broker(0).webServiceUrl();
        String api = web + Rest.BASE_PATH;
        String uriB = cluster.bookieCluster(CLUSTER_B).metadataServiceUri();
        out.println();
        out.println("Serving until Ctrl-C / SIGTERM. Only " + CLUSTER_A + " is registered (ACTIVE). Examples:");
        out.println("  pulsar-admin --admin-url " + web + " topics list public/default");
        out.println("  pulsar-client --url " + cluster.broker(0).brokerServiceUrl()
                + " produce persistent://public/default/t1 -m hello -n 10");
        out.println("  curl -s " + api + "/");
        out.println("  curl -s -X POST -H 'Content-Type: application/json' -d '{\"metadataServiceUri\": \""
                + uriB + "\"}' " + api + "/" + CLUSTER_B);
        out.println("  curl -s " + api + "/precheck/" + CLUSTER_B);
        out.println("  curl -s -X POST -H 'Content-Type: application/json' -d '{\"target\": \"" + CLUSTER_B
                + "\"}' " + api + "/switch");
        out.println("  curl -s " + api + "/status");
        out.flush();
        new CountDownLatch(1).await();
        return 0;
    }

    /**
     * Exits when start-up hangs. Seen when a broker fails to start: closing the half-started
     * PulsarService (TestBroker does so before rethrowing) can wait forever for a Jetty thread pool
     * that was never started, and the start-up error would otherwise leave the launcher hanging.
     */
    private Thread startWatchdog() {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(START_TIMEOUT_MS);
            } catch (InterruptedException started) {
                return;
            }
            System.out.flush();
            System.err.println("error: start-up did not finish within " + START_TIMEOUT_MS / 1000
                    + " s (see the errors logged above); exiting");
            System.exit(1);
        }, "launcher-start-watchdog");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Closes the fixture once, from main or from the shutdown hook. */
    private synchronized void closeCluster() {
        if (closed) {
            return;
        }
        closed = true;
        if (cluster != null) {
            System.err.println("Shutting down ZooKeeper, bookies and broker...");
            cluster.close();
        }
    }

    /**
     * Jersey and OpenTelemetry log through java.util.logging, which is not bridged to log4j on this
     * classpath; keep only its severe messages.
     */
    private static void quietJulLogging() {
        java.util.logging.Logger root = java.util.logging.LogManager.getLogManager().getLogger("");
        root.setLevel(java.util.logging.Level.SEVERE);
        for (java.util.logging.Handler h : root.getHandlers()) {
            h.setLevel(java.util.logging.Level.SEVERE);
        }
    }

    private static boolean portFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The switch demo: load, register, precheck, switch, wait for the cutover, drain, report. */
    private final class Demo {

        private final AtomicReference<TopicLoad.Phase> phase = new AtomicReference<>(TopicLoad.Phase.BEFORE);
        private final Latencies[] latencies = java.util.stream.Stream.of(TopicLoad.Phase.values())
                .map(p -> new Latencies()).toArray(Latencies[]::new);
        private final List<TopicLoad> loads = new ArrayList<>();
        private final List<String> failures = new ArrayList<>();
        private final List<String> warnings = new ArrayList<>();
        private Rest rest;
        private Rest.Reply switchReply;
        private long cutoverNanos = -1;
        private StatusReport lastStatus;

        int run() throws Exception {
            String namespace = cluster.createTenant("demo");
            PulsarAdmin admin = cluster.newAdmin();
            // Keep every ledger so that the report can show where each one lives after the switch.
            admin.namespaces().setRetention(namespace, new RetentionPolicies(-1, -1));
            PulsarClient client = cluster.newClient();
            rest = new Rest(cluster.broker(0).webServiceUrl());
            try {
                createMetadataLedgers(client, admin, namespace);
                for (int i = 0; i < options.topics; i++) {
                    String topic = "persistent://" + namespace + "/topic-" + i;
                    admin.topics().createNonPartitionedTopic(topic);
                    loads.add(new TopicLoad(client, topic, i, options.rate, phase, latencies));
                }
                section(String.format("Demo: %d topics in %s, %d msg/s per topic, subscription '%s' (Exclusive)",
                        options.topics, namespace, options.rate, TopicLoad.SUBSCRIPTION));
                loads.forEach(TopicLoad::start);

                phase("before", options.phaseSeconds);
                sleepSeconds(options.phaseSeconds);

                section("REST (" + rest.url("") + ")");
                show(rest.get("/"));
                String register = Json.writeString(Map.of("metadataServiceUri",
                        cluster.bookieCluster(CLUSTER_B).metadataServiceUri()));
                Rest.Reply reg = rest.post("/" + CLUSTER_B, register);
                show(reg);
                if (!reg.ok()) {
                    failures.add("register " + CLUSTER_B + " returned HTTP " + reg.status() + ": " + reg.compact(300));
                }
                Rest.Reply pre = rest.get("/precheck/" + CLUSTER_B);
                show(pre);
                printPrecheck(pre.as(PrecheckReport.class));

                phase.set(TopicLoad.Phase.DURING);
                phase("during", -1);
                long switchStart = System.nanoTime();
                switchReply = rest.post("/switch", Json.writeString(Map.of("target", CLUSTER_B)));
                show(switchReply);
                if (switchReply.ok()) {
                    SwitchResult sr = switchReply.as(SwitchResult.class);
                    if (sr != null && sr.directive() != null) {
                        out.printf("  directive: epoch %d, %s -> %s, first ledger id %d%n", sr.directive().epoch(),
                                sr.directive().origin(), sr.directive().target(), sr.directive().firstLedgerId());
                    }
                    awaitCutover(switchStart);
                    phase.set(TopicLoad.Phase.BUILD);
                    phase("build (the migration copies the metadata ledgers)", -1);
                    awaitMigration();
                } else {
                    failures.add("switch returned HTTP " + switchReply.status() + ": " + switchReply.compact(300));
                }

                phase.set(TopicLoad.Phase.AFTER);
                phase("after", options.phaseSeconds);
                sleepSeconds(options.phaseSeconds);

                drain();
                // the invariants, checked by the plugin itself (GET /verify, deep: copies compared entry by entry)
                Rest.Reply verify = rest.get("/verify?deep=true");
                verifyReport = verify.as(io.bcswitch.audit.VerifyReport.class);
                if (verifyReport == null) {
                    failures.add("GET /verify: HTTP " + verify.status() + " " + verify.compact(300));
                } else if (!verifyReport.ok()) {
                    failures.add("verify found " + verifyReport.violations().size() + " violation(s): "
                            + verifyReport.violations());
                }
                Rest.Reply finalStatus = rest.get("/status");
                StatusReport st = finalStatus.as(StatusReport.class);
                if (st != null) {
                    lastStatus = st;
                } else {
                    warnings.add("final GET /status: HTTP " + finalStatus.status() + " " + finalStatus.compact(300));
                }
                Map<String, Set<Long>> onCluster = new LinkedHashMap<>();
                for (TestBookieCluster bk : cluster.bookieClusters()) {
                    onCluster.put(bk.name(), bk.ledgerIds());
                }
                new DemoReport(out, TIME, STATUS_POLL_MS).print(new DemoReport.Results(loads, latencies, failures,
                        warnings, migration, buildStartNanos, buildEndNanos, verifyReport, switchReply, cutoverNanos,
                        lastStatus), admin, onCluster);
            } finally {
                for (TopicLoad load : loads) {
                    load.close();
                }
            }
            return failures.isEmpty() ? 0 : 1;
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
                            + st.cutoverComplete() + "; " + progress(st.brokers());
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

        private io.bcswitch.registry.MigrationState migration;
        private io.bcswitch.audit.VerifyReport verifyReport;
        private long buildStartNanos = -1;
        private long buildEndNanos = -1;

        /** Schema ledgers (one per typed topic) and a compacted ledger on cluster-a, for the migration to move. */
        private void createMetadataLedgers(PulsarClient client, PulsarAdmin admin, String namespace) throws Exception {
            if (options.schemaTopics == 0 && options.compactedMb == 0) {
                return;
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < options.schemaTopics; i++) {
                try (var p = client.newProducer(org.apache.pulsar.client.api.Schema.JSON(Sample.class))
                        .topic("persistent://" + namespace + "/typed-" + i).create()) {
                    p.send(new Sample(i, "schema " + i));
                }
            }
            int keys = options.compactedMb * 1024;
            if (keys > 0) {
                String compacted = "persistent://" + namespace + "/compacted";
                String value = "x".repeat(1000);
                try (var p = client.newProducer(org.apache.pulsar.client.api.Schema.STRING).topic(compacted)
                        .batchingMaxMessages(500).create()) {
                    List<java.util.concurrent.CompletableFuture<?>> sends = new ArrayList<>();
                    for (int k = 0; k < keys; k++) {
                        sends.add(p.newMessage().key("key-" + k).value(value).sendAsync());
                    }
                    java.util.concurrent.CompletableFuture.allOf(sends.toArray(
                            java.util.concurrent.CompletableFuture[]::new)).get();
                }
                admin.topics().triggerCompaction(compacted);
                long deadline = System.nanoTime() + 120_000_000_000L;
                while (admin.topics().compactionStatus(compacted).status
                        != org.apache.pulsar.client.admin.LongRunningProcessStatus.Status.SUCCESS
                        && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
            }
            out.printf("  on %s: %d topics with a schema (one schema ledger each) and a compacted topic of %d keys x "
                    + "1 KB, in %.1f s%n", CLUSTER_A, options.schemaTopics, keys, (System.nanoTime() - t0) / 1e9);
        }

        /** Sample record for the typed topics. */
        public static final class Sample {
            public int id;
            public String text;

            public Sample() {
            }

            Sample(int id, String text) {
                this.id = id;
                this.text = text;
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
                    if (buildStartNanos < 0 && ph != io.bcswitch.registry.Phase.PENDING) {
                        buildStartNanos = System.nanoTime();
                    }
                    if (buildEndNanos < 0 && buildStartNanos >= 0 && ph != io.bcswitch.registry.Phase.BUILD
                            && ph != io.bcswitch.registry.Phase.PENDING) {
                        buildEndNanos = System.nanoTime();
                    }
                    String line = ph + ": " + m.copied() + " copied, " + m.alreadyPresent() + " present, "
                            + m.promoted() + "/" + m.planned() + " promoted, " + m.bytesCopied() + " bytes";
                    if (!line.equals(lastLine)) {
                        out.printf("  migration +%5.2fs  %s%n", (System.nanoTime() - start) / 1e9, line);
                        lastLine = line;
                    }
                    if (ph.terminal()) {
                        if (ph != io.bcswitch.registry.Phase.DONE) {
                            warnings.add("migration ended " + ph + ": " + m.issues());
                        }
                        return;
                    }
                }
                Thread.sleep(100);
            }
            failures.add("migration not finished 300 s after the cutover");
        }

        private String progress(List<BrokerCutoverRecord> brokers) {
            if (brokers == null || brokers.isEmpty()) {
                return "no broker progress";
            }
            StringBuilder sb = new StringBuilder();
            for (BrokerCutoverRecord b : brokers) {
                if (sb.length() > 0) {
                    sb.append(" | ");
                }
                sb.append(b.broker()).append(": applied epoch ").append(b.appliedEpoch())
                        .append(" on ").append(b.activeCluster())
                        .append(", moved ").append(b.topicsMoved()).append('/').append(b.topicsTotal())
                        .append(", failed ").append(b.topicsFailed())
                        .append(b.done() ? ", done" : ", running");
            }
            return sb.toString();
        }

        private void drain() throws InterruptedException {
            section("Drain");
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

        private void printPrecheck(PrecheckReport p) {
            if (p == null) {
                return;
            }
            out.printf("  precheck %s -> %s: ok=%s, source reachable=%s, required writable bookies=%d, "
                            + "proposed first ledger id=%d (HOB %d)%n", p.source(), p.target(), p.ok(),
                    p.sourceReachable(), p.requiredWritableBookies(), p.proposedFirstLedgerId(),
                    p.proposedHighOrderBits());
            out.println("    source facts: " + facts(p.sourceFacts()));
            out.println("    target facts: " + facts(p.targetFacts()));
            if (p.problems() != null) {
                for (String problem : p.problems()) {
                    out.println("    problem: " + problem);
                }
            }
            if (p.sourceError() != null) {
                out.println("    source error: " + p.sourceError());
            }
        }

        private String facts(ClusterFacts f) {
            if (f == null) {
                return "-";
            }
            String layout = f.layoutManagerFactory() == null ? "?"
                    : f.layoutManagerFactory().substring(f.layoutManagerFactory().lastIndexOf('.') + 1);
            return String.format("%s, 63-bit ids=%s, max HOB=%d, max ledger id=%d, writable bookies=%d, "
                            + "read-only=%d", layout, f.supports63BitIds(), f.maxHighOrderBits(), f.maxLedgerId(),
                    f.writableBookies(), f.readOnlyBookies());
        }

        private void show(Rest.Reply r) {
            out.println("  " + r);
            out.println("    " + r.compact(BODY_CHARS));
        }

        private void phase(String name, double seconds) {
            section("Phase '" + name + "'" + (seconds > 0 ? String.format(" (%.1f s)", seconds)
                    : " (switch until cutover complete)"));
        }

        private void section(String title) {
            DemoReport.section(out, TIME, title);
        }
    }

    private static void sleepSeconds(double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }
}
