package io.bcswitch.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A test cluster of separate processes started from Pulsar installations, the way production runs: one ZooKeeper
 * server, N bookie clusters (each bookie a JVM started with BookKeeper's server main and a conf file of its own) and
 * M brokers (each a JVM started with Pulsar's broker starter and {@code --broker-conf}, from an installation of its
 * own, with the plugin installed from its distribution archive or not).
 *
 * <pre>{@code
 * try (ProcessCluster cluster = ProcessCluster.builder()
 *         .bookieCluster("cluster-a", 2)
 *         .bookieCluster("cluster-b", 2)
 *         .brokers(2)
 *         .plugin(distribution)       // the unpacked distribution archive; without it the brokers are stock
 *         .start()) {
 *     cluster.broker(0).kill();       // SIGKILL
 * }
 * }</pre>
 *
 * <p>The set-up is the operator's: Pulsar's cluster metadata setup with the first bookie cluster as the existing
 * BookKeeper cluster, each bookie cluster initialised by BookKeeper's shell ({@code initnewcluster}) under
 * {@code /bk/<name>/ledgers} of the one ZooKeeper (its parents created with ZooKeeper's own shell). Every process
 * writes its own log under the log directory (default {@code target/process-cluster/<time>/}), which is kept;
 * everything else lives in a temp directory that {@link #close()} deletes. {@link #close()} kills every process the
 * fixture started, also after a failed test, and so does a shutdown hook if the test JVM is stopped first; a
 * {@link NodeReaper} does it, and deletes the temp directory, if the test JVM dies without either (a fork timeout's
 * halt, {@code kill -9}).
 */
public final class ProcessCluster implements AutoCloseable, PulsarAccess {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessCluster.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(120);
    /** What Pulsar's start scripts pass to every JVM on Java 17 (module opens its libraries need). */
    private static final List<String> COMMON_JVM_OPTIONS = List.of(
            "--add-opens", "java.base/java.io=ALL-UNNAMED",
            "--add-opens", "java.base/java.util.zip=ALL-UNNAMED",
            "--add-opens", "java.base/sun.net=ALL-UNNAMED",
            "--add-opens", "java.management/sun.management=ALL-UNNAMED",
            "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.platform=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-Dio.netty.leakDetection.level=disabled");

    /** Collector and compiler of a test JVM: small and quick to start, not how a production JVM runs. */
    public static final List<String> LEAN_JVM = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    /**
     * Collector and compiler of a broker as Pulsar's start script runs it on Java 17 ({@code PULSAR_GC} in
     * {@code conf/pulsar_env.sh}: ZGC, and the full JIT compiler since nothing limits it), for measurements that
     * compare what production runs.
     */
    public static final List<String> PULSAR_DEFAULT_JVM = List.of("-XX:+UseZGC", "-XX:+PerfDisableSharedMem",
            "-XX:+AlwaysPreTouch");

    private final Path workDir;
    private final Path logDir;
    private final PulsarInstallation tools;
    private final Ports ports = Ports.reserve();
    private final Map<String, List<NodeProcess>> bookies = new LinkedHashMap<>();
    /** The port of each bookie of each cluster (its identity: a restarted bookie comes back on it). */
    private final Map<String, int[]> bookiePorts = new LinkedHashMap<>();
    private final Map<String, String> bookieUris = new LinkedHashMap<>();
    private final List<ProcessBroker> brokers = new ArrayList<>();
    private final Thread killOnExit;
    private final NodeReaper reaper;
    private NodeProcess zooKeeper;
    private int zkPort;
    private TestClients clients;
    private boolean closed;

    private ProcessCluster(Path workDir, Path logDir, PulsarInstallation tools, NodeReaper reaper) {
        this.workDir = workDir;
        this.logDir = logDir;
        this.tools = tools;
        this.reaper = reaper;
        this.killOnExit = new Thread(this::killAll, "process-cluster-kill-on-exit");
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code zk:127.0.0.1:<port>}: the brokers' metadata and configuration store. */
    public String metadataStoreUrl() {
        return "zk:127.0.0.1:" + zkPort;
    }

    public String zkConnectString() {
        return "127.0.0.1:" + zkPort;
    }

    /** {@code zk+hierarchical://127.0.0.1:<port>/bk/<name>/ledgers} */
    @Override
    public String metadataServiceUri(String bookieCluster) {
        String uri = bookieUris.get(bookieCluster);
        if (uri == null) {
            throw new IllegalArgumentException("No bookie cluster " + bookieCluster + "; have " + bookieUris.keySet());
        }
        return uri;
    }

    /** The bookie clusters' names, the brokers' first. */
    public List<String> bookieClusterNames() {
        return List.copyOf(bookies.keySet());
    }

    /** The bookie JVMs of {@code bookieCluster}. */
    public List<NodeProcess> bookies(String bookieCluster) {
        metadataServiceUri(bookieCluster);
        return Collections.unmodifiableList(bookies.get(bookieCluster));
    }

    /** Bookies the supervisor started again after they exited by themselves, with how often (none: empty). */
    public Map<String, Integer> supervisorRestarts() {
        Map<String, Integer> out = new TreeMap<>();
        bookies.values().forEach(list -> list.stream().filter(p -> p.restartsBySupervisor() > 0)
                .forEach(p -> out.put(p.name(), p.restartsBySupervisor())));
        return out;
    }

    /** The ZooKeeper server's JVM. */
    public NodeProcess zooKeeper() {
        return zooKeeper;
    }

    /** Starts the ZooKeeper server again (after a kill or stop) on its port and data, and waits until it listens. */
    public void restartZooKeeper() throws IOException, InterruptedException {
        zooKeeper.restart();
        zooKeeper.awaitPort(zkPort, START_TIMEOUT);
    }

    @Override
    public ProcessBroker broker(int i) {
        return brokers.get(i);
    }

    public int brokerCount() {
        return brokers.size();
    }

    /** Every port reserved for the cluster's processes (ZooKeeper, bookies, brokers and their extra listeners). */
    public List<Integer> reservedPorts() {
        return ports.held();
    }

    /** The temp directory of the cluster's data, configuration and installations ({@link #close()} deletes it). */
    public Path workDir() {
        return workDir;
    }

    /** Where each process's log file is (kept after {@link #close()}). */
    public Path logDir() {
        return logDir;
    }

    /** A client against broker 0; closed by {@link #close()} if the caller has not done so. */
    @Override
    public PulsarClient newClient() throws PulsarClientException {
        return clients.newClient();
    }

    /** An admin client against broker 0; closed by {@link #close()} if the caller has not done so. */
    @Override
    public PulsarAdmin newAdmin() throws PulsarClientException {
        return clients.newAdmin();
    }

    /** Creates tenant {@code tenant} and namespace {@code <tenant>/ns}; returns the namespace. */
    @Override
    public String createTenant(String tenant) throws PulsarAdminException, PulsarClientException {
        return clients.createTenant(tenant);
    }

    /** A ZooKeeper client of the test (to read what the cluster wrote); the caller closes it. */
    public ZooKeeper connectZooKeeper() throws IOException, InterruptedException {
        return TestZooKeeper.connect(zkConnectString(), START_TIMEOUT);
    }

    private void startZooKeeper() throws IOException, InterruptedException {
        zkPort = ports.take(1)[0];
        Path data = Files.createDirectories(workDir.resolve("zookeeper"));
        Path conf = tools.conf("zookeeper.conf");
        Files.write(conf, List.of("tickTime=2000", "initLimit=10", "syncLimit=5", "dataDir=" + data,
                "clientPort=" + zkPort, "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                "maxClientCnxns=0", "autopurge.purgeInterval=0", "forceSync=no"));
        zooKeeper = NodeProcess.start("zookeeper", javaCommand(tools, "128m",
                List.of("-Dzookeeper.4lw.commands.whitelist=*"),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", List.of(conf.toString())), tools.home(),
                logDir.resolve("zookeeper.log"), reaper);
        zooKeeper.awaitPort(zkPort, START_TIMEOUT);
        awaitZooKeeperSession();
    }

    /**
     * Waits until a client gets a session. A standalone ZooKeeper server listens before it serves, and a connection
     * in between ends in a NullPointerException in its worker ("zkDb is null"); once (a benchmark's smoke run,
     * 2026-12-07) its clients then got no session for 90 s. A server that gives none within 30 s is started again, once.
     */
    private void awaitZooKeeperSession() throws IOException, InterruptedException {
        try (ZooKeeper zk = TestZooKeeper.connect(zkConnectString(), Duration.ofSeconds(30))) {
            return;
        } catch (IOException noSession) {
            LOG.warn("ZooKeeper on port {} gives no session after 30 s: starting it again (log {})", zkPort,
                    logDir.resolve("zookeeper.log"), noSession);
        }
        zooKeeper.kill();
        zooKeeper.restart();
        zooKeeper.awaitPort(zkPort, START_TIMEOUT);
        TestZooKeeper.connect(zkConnectString(), START_TIMEOUT).close();
    }

    /**
     * Initialises bookie cluster {@code name} under {@code /bk/<name>/ledgers} with BookKeeper's shell
     * ({@code initnewcluster}); returns the running shell (the clusters are set up side by side).
     */
    private NodeProcess initBookieCluster(String name, ZooKeeper zk) throws Exception {
        String uri = "zk+hierarchical://" + zkConnectString() + "/bk/" + name + "/ledgers";
        // the shell creates the ledgers root, not its parents
        TestZooKeeper.createParents(zk, "/bk/" + name);
        Path conf = tools.conf("bk-init-" + name + ".conf");
        Files.write(conf, List.of("metadataServiceUri=" + uri));
        bookieUris.put(name, uri);
        bookies.put(name, new ArrayList<>());
        return NodeProcess.start("bookkeeper-shell initnewcluster " + name, javaCommand(tools, "128m", List.of(),
                "org.apache.bookkeeper.bookie.BookieShell", List.of("-conf", conf.toString(), "initnewcluster")),
                tools.home(), logDir.resolve("setup-" + name + ".log"), reaper);
    }

    private void startBookies(String name, int count) throws IOException, InterruptedException {
        int[] ports = this.ports.take(count);
        bookiePorts.put(name, ports);
        for (int i = 0; i < count; i++) {
            Path dir = workDir.resolve("bookies").resolve(name).resolve(Integer.toString(i));
            ServerConfiguration c = TestBookie.leanConfiguration(bookieUris.get(name), ports[i],
                    dir.resolve("journal"), dir.resolve("ledgers"));
            Files.createDirectories(dir);
            Path conf = dir.resolve("bk_server.conf");
            Files.write(conf, confLines(c));
            NodeProcess bookie = NodeProcess.start(name + "-bookie-" + i, javaCommand(tools, "256m",
                    List.of("-XX:MaxDirectMemorySize=128m"), "org.apache.bookkeeper.server.Main",
                    List.of("--conf", conf.toString())), tools.home(),
                    logDir.resolve(name + "-bookie-" + i + ".log"), reaper).supervised();
            bookies.get(name).add(bookie);
        }
        for (int i = 0; i < count; i++) {
            bookies.get(name).get(i).awaitPort(ports[i], START_TIMEOUT);
        }
    }

    /**
     * Restarts the bookies of {@code name} one at a time, each back on its port and registered writable before the
     * next goes down (an operator's rolling restart).
     */
    public void rollingRestartBookies(String name) throws Exception {
        List<NodeProcess> nodes = bookies.get(name);
        if (nodes == null) {
            throw new IllegalArgumentException("no bookie cluster " + name + " in " + bookies.keySet());
        }
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i).restart();
            nodes.get(i).awaitPort(bookiePorts.get(name)[i], START_TIMEOUT);
            awaitBookiesRegistered();
        }
    }

    /** Waits until every bookie of every cluster is registered writable under its cluster's ledgers root. */
    private void awaitBookiesRegistered() throws Exception {
        try (ZooKeeper zk = connectZooKeeper()) {
            for (Map.Entry<String, List<NodeProcess>> e : bookies.entrySet()) {
                String available = "/bk/" + e.getKey() + "/ledgers/available";
                long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
                while (true) {
                    int writable = zk.exists(available, false) == null ? 0
                            : (int) zk.getChildren(available, false).stream().filter(c -> !c.equals("readonly"))
                            .count();
                    if (writable >= e.getValue().size()) {
                        break;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(writable + " of " + e.getValue().size() + " bookies of "
                                + e.getKey() + " registered after " + START_TIMEOUT + " (logs: " + logDir + ")");
                    }
                    Thread.sleep(200);
                }
            }
        }
    }

    /** A bookie configuration as a conf file's lines (arrays comma-separated, as BookKeeper reads them). */
    private static List<String> confLines(ServerConfiguration c) {
        Map<String, String> out = new TreeMap<>();
        c.getKeys().forEachRemaining(k -> {
            Object v = c.getProperty(k);
            String s = v instanceof Object[] a ? String.join(",", java.util.Arrays.stream(a).map(String::valueOf)
                    .toList()) : v instanceof List<?> l ? String.join(",", l.stream().map(String::valueOf).toList())
                    : String.valueOf(v);
            out.put(k, s);
        });
        List<String> lines = new ArrayList<>();
        out.forEach((k, v) -> lines.add(k + "=" + v));
        return lines;
    }

    private static List<String> javaCommand(PulsarInstallation installation, String heap, List<String> extra,
                                            String main, List<String> args) {
        return NodeProcess.javaCommand(installation.lib(), jvmOptions(installation, heap, LEAN_JVM, extra), main,
                args);
    }

    /**
     * A bounded heap, the options every Pulsar JVM gets, its collector and compiler, logging to standard output, temp
     * files in the install.
     */
    private static List<String> jvmOptions(PulsarInstallation installation, String heap, List<String> gcAndJit,
                                           List<String> extra) {
        List<String> opts = new ArrayList<>(List.of("-Xms" + heap, "-Xmx" + heap));
        opts.addAll(COMMON_JVM_OPTIONS);
        opts.addAll(gcAndJit);
        opts.add("-Dlog4j2.configurationFile=" + installation.conf("log4j2.properties"));
        opts.add("-Djava.io.tmpdir=" + installation.home().resolve("data"));
        opts.addAll(extra);
        return opts;
    }

    /** Every process, at once, without waiting for anything (the shutdown hook and the last step of close). */
    private void killAll() {
        for (ProcessBroker b : brokers) {
            if (b.process() != null) {
                b.process().destroyNow();
            }
        }
        bookies.values().forEach(list -> list.forEach(NodeProcess::destroyNow));
        if (zooKeeper != null) {
            zooKeeper.destroyNow();
        }
    }

    /**
     * Closes the fixture's clients, kills every broker, bookie and ZooKeeper it started (nothing is kept, so
     * nothing needs a polite stop) and deletes the temp directory; the logs stay. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (clients != null) {
            clients.close();
        }
        for (int i = brokers.size() - 1; i >= 0; i--) {
            ProcessBroker b = brokers.get(i);
            TestClients.closeQuietly("broker " + i, b::close);
        }
        bookies.values().forEach(list -> list.forEach(p -> TestClients.closeQuietly(p.name(), p)));
        if (zooKeeper != null) {
            TestClients.closeQuietly("zookeeper", zooKeeper);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs (or ran) anyway
        }
        ports.close();
        TestClients.closeQuietly("temp directory " + workDir, () -> TempDirs.deleteRecursively(workDir));
        TestClients.closeQuietly("node reaper", reaper);
        LOG.info("Process cluster closed; logs in {}", logDir);
    }

    /** Collects the shape of the cluster; {@link #start()} builds it. */
    public static final class Builder {
        private final Map<String, Integer> bookieClusters = new LinkedHashMap<>();
        private int brokers = 1;
        private Path distribution;
        private Path archive;
        private Path serverLib;
        private Path logDir;
        private String brokerHeap = "384m";
        private List<String> brokerJvm = LEAN_JVM;
        private int[] firstBrokerPorts;
        private final Map<String, String> brokerConfig = new LinkedHashMap<>();
        private final List<String> brokerPortSettings = new ArrayList<>();

        private Builder() {
        }

        /** Adds bookie cluster {@code name} with {@code bookies} bookie processes; the first is the brokers'. */
        public Builder bookieCluster(String name, int bookies) {
            Objects.requireNonNull(name, "name");
            if (bookies < 1 || bookieClusters.putIfAbsent(name, bookies) != null) {
                throw new IllegalArgumentException("bookie cluster " + name + ": a new name and at least one bookie");
            }
            return this;
        }

        public Builder brokers(int brokers) {
            this.brokers = brokers;
            return this;
        }

        /**
         * Installs the plugin on every broker from this unpacked distribution archive before the first start
         * (default: stock brokers; {@link ProcessBroker#installation()} installs it later, broker by broker).
         */
        public Builder plugin(Path distribution) {
            this.distribution = distribution;
            return this;
        }

        /**
         * Installs the plugin on every broker from this distribution archive, unpacked into the fixture's own
         * temporary directory (deleted with it) at the start; instead of {@link #plugin}.
         */
        public Builder pluginArchive(Path archive) {
            this.archive = Objects.requireNonNull(archive, "archive");
            return this;
        }

        /** The release's runtime jars (default: {@code bcs-it-pulsar-server/target/lib} of this checkout). */
        public Builder serverLib(Path serverLib) {
            this.serverLib = serverLib;
            return this;
        }

        /** Where the processes' logs go (default {@code target/process-cluster/<time>} under the working directory). */
        public Builder logDir(Path logDir) {
            this.logDir = logDir;
            return this;
        }

        /** A broker setting for every broker (the last lines of each broker.conf); calls accumulate. */
        public Builder brokerConfig(String key, String value) {
            brokerConfig.put(key, value);
            return this;
        }

        /**
         * A broker setting whose value is a port of the broker's own (a listener an extension opens beside the
         * broker's): the fixture reserves one per broker and writes {@code key=<port>} into its broker.conf;
         * {@link ProcessBroker#setting} reads it back.
         */
        public Builder brokerPortSetting(String key) {
            brokerPortSettings.add(Objects.requireNonNull(key, "key"));
            return this;
        }

        /**
         * The first broker's service and web ports (default: ports the fixture reserves, like every other's), for a
         * cluster a person uses by hand on ports they know; the caller checks that they are free.
         */
        public Builder firstBrokerPorts(int servicePort, int webPort) {
            this.firstBrokerPorts = new int[] {servicePort, webPort};
            return this;
        }

        /** Each broker JVM's heap (default 384m). */
        public Builder brokerHeap(String heap) {
            this.brokerHeap = heap;
            return this;
        }

        /**
         * Each broker JVM's collector and compiler options (default {@link #LEAN_JVM}; {@link #PULSAR_DEFAULT_JVM}
         * for a measurement of what production runs). ZooKeeper and the bookies stay lean.
         */
        public Builder brokerJvm(List<String> gcAndJit) {
            this.brokerJvm = List.copyOf(gcAndJit);
            return this;
        }

        /** Starts ZooKeeper, sets the cluster up, starts the bookies and the brokers; on failure kills them all. */
        public ProcessCluster start() throws Exception {
            if (bookieClusters.isEmpty()) {
                throw new IllegalStateException("Add at least one bookieCluster(name, bookies)");
            }
            if (archive != null && distribution != null) {
                throw new IllegalStateException("plugin(unpacked distribution) or pluginArchive(archive), not both");
            }
            long startNanos = System.nanoTime();
            Path lib = serverLib != null ? serverLib : Checkout.moduleTarget("bcs-it-pulsar-server").resolve("lib");
            Path logs = logDir != null ? logDir : Path.of("target", "process-cluster",
                    LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS")));
            Files.createDirectories(logs);
            Path work = Files.createTempDirectory("bcs-processcluster-");
            PulsarInstallation tools = PulsarInstallation.layOut(work.resolve("pulsar-tools"), lib);
            ProcessCluster cluster = new ProcessCluster(work, logs.toAbsolutePath(), tools,
                    NodeReaper.start(work, logs.resolve("node-reaper.log")));
            Runtime.getRuntime().addShutdownHook(cluster.killOnExit);
            cluster.clients = new TestClients(() -> cluster.broker(0), null, null);
            try {
                Path plugin = archive != null ? Distribution.unpack(archive, work.resolve("plugin")) : distribution;
                cluster.startZooKeeper();
                String first = bookieClusters.keySet().iterator().next();
                int[] ports = cluster.ports.take(2 * Math.max(1, brokers));
                if (firstBrokerPorts != null) {
                    System.arraycopy(firstBrokerPorts, 0, ports, 0, 2);
                }
                // the one-shot set-up tools side by side: each is a JVM start more than work
                List<NodeProcess> setup = new ArrayList<>();
                try (ZooKeeper zk = cluster.connectZooKeeper()) {
                    for (String name : bookieClusters.keySet()) {
                        setup.add(cluster.initBookieCluster(name, zk));
                    }
                }
                setup.add(NodeProcess.start("cluster-metadata-setup", javaCommand(cluster.tools, "256m", List.of(),
                        "org.apache.pulsar.PulsarClusterMetadataSetup", List.of(
                                "--cluster", BrokerProperties.CLUSTER_NAME,
                                "--metadata-store", cluster.metadataStoreUrl(),
                                "--configuration-metadata-store", cluster.metadataStoreUrl(),
                                "--web-service-url", "http://127.0.0.1:" + ports[1],
                                "--broker-service-url", "pulsar://127.0.0.1:" + ports[0],
                                "--existing-bk-metadata-service-uri", cluster.metadataServiceUri(first))),
                        cluster.tools.home(), logs.resolve("setup.log"), cluster.reaper));
                try {
                    for (NodeProcess tool : setup) {
                        tool.awaitSuccess(TOOL_TIMEOUT);
                    }
                } finally {
                    for (NodeProcess tool : setup) {
                        tool.close(); // the others, when one failed
                    }
                }
                for (Map.Entry<String, Integer> e : bookieClusters.entrySet()) {
                    cluster.startBookies(e.getKey(), e.getValue());
                }
                cluster.awaitBookiesRegistered();
                long bookiesReady = System.nanoTime();
                int bookiesOfFirst = bookieClusters.get(first);
                for (int i = 0; i < brokers; i++) {
                    PulsarInstallation home = PulsarInstallation.layOut(work.resolve("broker-" + i), lib);
                    if (plugin != null) {
                        home.installPlugin(plugin);
                    }
                    Properties stock = BrokerProperties.base(cluster.metadataStoreUrl(),
                            cluster.metadataServiceUri(first), bookiesOfFirst);
                    stock.setProperty("brokerServicePort", Integer.toString(ports[2 * i]));
                    stock.setProperty("webServicePort", Integer.toString(ports[2 * i + 1]));
                    List<String> opts = jvmOptions(home, brokerHeap, brokerJvm,
                            List.of("-XX:MaxDirectMemorySize=256m"));
                    Map<String, String> settings = new LinkedHashMap<>(brokerConfig);
                    for (String key : brokerPortSettings) {
                        settings.put(key, Integer.toString(cluster.ports.take(1)[0]));
                    }
                    cluster.brokers.add(new ProcessBroker(i, home, stock, first, settings, opts,
                            logs.resolve("broker-" + i + ".log"), ports[2 * i], ports[2 * i + 1], cluster.reaper));
                }
                for (ProcessBroker b : cluster.brokers) {
                    b.launch();
                }
                for (ProcessBroker b : cluster.brokers) {
                    b.awaitReady();
                }
                LOG.info("Process cluster started in {} ms (ZooKeeper, set-up and bookies {} ms): bookie clusters {},"
                                + " {} brokers, plugin {}; logs in {}",
                        Duration.ofNanos(System.nanoTime() - startNanos).toMillis(),
                        Duration.ofNanos(bookiesReady - startNanos).toMillis(), bookieClusters, brokers,
                        plugin != null ? plugin.getFileName() : "none", cluster.logDir);
                return cluster;
            } catch (Exception | Error e) {
                cluster.close();
                throw e;
            }
        }
    }
}
