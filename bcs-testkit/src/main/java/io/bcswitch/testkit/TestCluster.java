package io.bcswitch.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.common.policies.data.ClusterData;
import org.apache.pulsar.common.policies.data.TenantInfo;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-process test cluster: one ZooKeeper server, N bookie clusters under separate ledger roots
 * of that ZooKeeper, and M real Pulsar brokers on free loopback ports.
 *
 * <pre>{@code
 * try (TestCluster cluster = TestCluster.builder()
 *         .bookieCluster("cluster-a", 2)
 *         .bookieCluster("cluster-b", 2)
 *         .plugin(false)
 *         .start()) {
 *     String ns = cluster.createTenant("my-test");
 *     try (PulsarClient client = cluster.newClient()) { ... }
 * }
 * }</pre>
 *
 * <p>Layout: broker metadata at the ZooKeeper root ({@code zk:127.0.0.1:<port>}, also the
 * configuration store); bookie cluster {@code <name>} under {@code /bk/<name>/ledgers} with
 * metadata service URI {@code zk+hierarchical://127.0.0.1:<port>/bk/<name>/ledgers}; Pulsar
 * cluster name {@code test} with tenant {@code public} and namespace {@code public/default}.
 * A bookie cluster added with {@link Builder#bookieClusterWithOwnZooKeeper} keeps the same ledgers
 * root in a ZooKeeper server of its own ({@code zk+hierarchical://127.0.0.1:<its port>/bk/<name>/ledgers}),
 * whose failure {@link TestBookieCluster#stopMetadataService()} simulates.
 *
 * <p>Everything lives in one temp directory that {@link #close()} deletes. The fixture holds no
 * static state; several can run in one JVM. Not thread-safe: drive it from the test thread.
 */
public final class TestCluster implements AutoCloseable, PulsarAccess {

    private static final Logger LOG = LoggerFactory.getLogger(TestCluster.class);
    private static final Duration ZK_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    private final Path workDir;
    private final Ports ports = Ports.reserve();
    private final Map<String, TestBookieCluster> bookieClusters = new LinkedHashMap<>();
    private final List<TestBroker> brokers = new ArrayList<>();
    private final List<MetadataLink> links = new ArrayList<>();
    private TestZooKeeper zooKeeper;
    /** The brokers' metadata and configuration store when it is etcd (bookies stay on ZooKeeper); else null. */
    private TestEtcd etcd;
    private ZooKeeper zkClient;
    private TestClients clients;
    private boolean closed;

    private TestCluster(Path workDir) {
        this.workDir = workDir;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code 127.0.0.1:<port>} of the ZooKeeper server. */
    public String zkConnectString() {
        return zooKeeper.connectString();
    }

    /**
     * Sessions the shared ZooKeeper server holds now (brokers' metadata stores, bookies, every BookKeeper client's
     * metadata session): a resource gauge, bounded over a cluster's life when nothing leaks.
     */
    public int zooKeeperSessions() {
        return zooKeeper.sessions();
    }

    /** Watches the shared ZooKeeper server holds now, over every session: a resource gauge like the sessions. */
    public int zooKeeperWatches() {
        return zooKeeper.watches();
    }

    /**
     * The brokers' metadata and configuration store: {@code zk:127.0.0.1:<port>}, or
     * {@code etcd:http://127.0.0.1:<port>} for a cluster started with {@link Builder#brokerMetadataOnEtcd}.
     */
    public String metadataStoreUrl() {
        return etcd != null ? etcd.metadataStoreUrl() : "zk:" + zooKeeper.connectString();
    }

    /** Whether the brokers' metadata store is etcd ({@link Builder#brokerMetadataOnEtcd}). */
    public boolean brokerMetadataOnEtcd() {
        return etcd != null;
    }

    /** The bookie cluster registered under {@code name}. */
    public TestBookieCluster bookieCluster(String name) {
        TestBookieCluster cluster = bookieClusters.get(name);
        if (cluster == null) {
            throw new IllegalArgumentException("No bookie cluster " + name + "; have " + bookieClusters.keySet());
        }
        return cluster;
    }

    @Override
    public String metadataServiceUri(String bookieCluster) {
        return bookieCluster(bookieCluster).metadataServiceUri();
    }

    /** All bookie clusters, in builder order. */
    public List<TestBookieCluster> bookieClusters() {
        return List.copyOf(bookieClusters.values());
    }

    /** The {@code i}-th broker (0-based). */
    @Override
    public TestBroker broker(int i) {
        return brokers.get(i);
    }

    public int brokerCount() {
        return brokers.size();
    }

    /** A copy of the properties broker {@code i} runs with (or will next start with). */
    public Properties brokerProperties(int i) {
        return broker(i).properties();
    }

    /** The fixture's temp directory (ZooKeeper and bookie data). */
    public Path workDir() {
        return workDir;
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

    /**
     * Creates tenant {@code tenant} (allowed on cluster {@code test}) and namespace
     * {@code <tenant>/ns}, so each test can work in its own namespace.
     *
     * @return {@code <tenant>/ns}
     */
    @Override
    public String createTenant(String tenant) throws PulsarAdminException, PulsarClientException {
        return clients.createTenant(tenant);
    }

    /** Cluster {@code test}, tenant {@code public}, namespace {@code public/default}, unless present. */
    private void createClusterMetadata() throws Exception {
        PulsarAdmin admin = clients.admin();
        TestBroker first = broker(0);
        try {
            admin.clusters().createCluster(BrokerProperties.CLUSTER_NAME, ClusterData.builder()
                    .serviceUrl(first.webServiceUrl())
                    .brokerServiceUrl(first.brokerServiceUrl())
                    .build());
        } catch (PulsarAdminException.ConflictException exists) {
            // created by the broker or an earlier run on the same store
        }
        try {
            admin.tenants().createTenant("public",
                    TenantInfo.builder().allowedClusters(Set.of(BrokerProperties.CLUSTER_NAME)).build());
        } catch (PulsarAdminException.ConflictException exists) {
            // fine
        }
        try {
            admin.namespaces().createNamespace("public/default");
        } catch (PulsarAdminException.ConflictException exists) {
            // fine
        }
    }

    /**
     * Closes the clients and admins made by this fixture (side by side), then, in reverse order of creation,
     * brokers, bookies, ZooKeeper; then deletes the temp directory. Errors are logged and the rest is still
     * closed. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long start = System.nanoTime();
        if (clients != null) {
            clients.close();
        }
        for (int i = brokers.size() - 1; i >= 0; i--) {
            closeQuietly("broker " + i, brokers.get(i)::stop);
        }
        links.forEach(l -> closeQuietly("metadata link", l));
        if (etcd != null) {
            closeQuietly("etcd", etcd);
        }
        List<TestBookieCluster> clusters = new ArrayList<>(bookieClusters.values());
        Collections.reverse(clusters);
        for (TestBookieCluster cluster : clusters) {
            closeQuietly("bookie cluster " + cluster.name(), cluster::stopBookies);
        }
        for (TestBookieCluster cluster : clusters) {
            closeQuietly("metadata service of bookie cluster " + cluster.name(), cluster::closeMetadataService);
        }
        if (zkClient != null) {
            closeQuietly("ZooKeeper client", zkClient);
        }
        if (zooKeeper != null) {
            closeQuietly("ZooKeeper", zooKeeper);
        }
        ports.close();
        closeQuietly("temp directory " + workDir, () -> TempDirs.deleteRecursively(workDir));
        LOG.info("Test cluster closed in {} ms", Duration.ofNanos(System.nanoTime() - start).toMillis());
    }

    private static void closeQuietly(String what, AutoCloseable closeable) {
        TestClients.closeQuietly(what, closeable);
    }

    /**
     * Gives each listener a broker is configured to open on "any free port" (0) one of the fixture's ports, so
     * that it comes back on it after a restart.
     */
    private void pinListenPorts(Properties props) {
        for (String key : List.of("brokerServicePort", "brokerServicePortTls", "webServicePort",
                "webServicePortTls")) {
            if ("0".equals(props.getProperty(key, "").trim())) {
                props.setProperty(key, Integer.toString(ports.take(1)[0]));
            }
        }
    }

    /** Collects the shape of the cluster; {@link #start()} builds it. Not reusable after start. */
    public static final class Builder {

        private final Map<String, Integer> bookieClusters = new LinkedHashMap<>();
        private final Set<String> ownZooKeeper = new HashSet<>();
        private int brokers = 1;
        private boolean plugin = true;
        private String brokerBookieCluster;
        private Consumer<Properties> brokerConfig = p -> { };
        private String clientAuthPlugin;
        private String clientAuthParams;
        private boolean metadataLinks;
        private Path etcdBinary;

        private Builder() {
        }

        /**
         * The brokers' metadata and configuration store is a real etcd server ({@code etcdBinary}, see
         * {@link TestEtcd#binary()}) instead of ZooKeeper; the bookie clusters keep their metadata on ZooKeeper.
         * Metadata links ({@link #pausableMetadataLinks()}) then relay to etcd.
         */
        public Builder brokerMetadataOnEtcd(Path etcdBinary) {
            this.etcdBinary = Objects.requireNonNull(etcdBinary, "etcdBinary");
            return this;
        }

        /**
         * Each broker reaches the metadata store through its own {@link MetadataLink}, which
         * {@link TestBroker#metadataLink()} can pause (a partition between that broker and ZooKeeper).
         */
        public Builder pausableMetadataLinks() {
            this.metadataLinks = true;
            return this;
        }

        /**
         * Authentication the fixture's own clients use ({@link #newClient}, {@link #newAdmin}, cluster
         * set-up), for clusters started with authentication enabled through {@link #brokerConfig}.
         */
        public Builder clientAuthentication(String pluginClassName, String params) {
            this.clientAuthPlugin = Objects.requireNonNull(pluginClassName, "pluginClassName");
            this.clientAuthParams = params;
            return this;
        }

        /**
         * Adds a bookie cluster {@code name} with {@code bookies} bookies. Call once per cluster;
         * the first one is the brokers' cluster unless {@link #brokerBookieCluster} says otherwise.
         */
        public Builder bookieCluster(String name, int bookies) {
            Objects.requireNonNull(name, "name");
            if (name.isEmpty() || name.contains("/")) {
                throw new IllegalArgumentException("Bookie cluster name must be a non-empty znode name: " + name);
            }
            if (bookies < 1) {
                throw new IllegalArgumentException("A bookie cluster needs at least one bookie: " + bookies);
            }
            if (bookieClusters.putIfAbsent(name, bookies) != null) {
                throw new IllegalArgumentException("Duplicate bookie cluster " + name);
            }
            return this;
        }

        /**
         * Like {@link #bookieCluster}, but the cluster's metadata (ledgers root {@code /bk/<name>/ledgers},
         * bookie registrations, id generator) lives in a ZooKeeper server of its own, which
         * {@link TestBookieCluster#stopMetadataService()} can stop and
         * {@link TestBookieCluster#startMetadataService()} restart on the same port.
         */
        public Builder bookieClusterWithOwnZooKeeper(String name, int bookies) {
            bookieCluster(name, bookies);
            ownZooKeeper.add(name);
            return this;
        }

        /** Number of brokers (default 1; 0 starts no broker). */
        public Builder brokers(int brokers) {
            if (brokers < 0) {
                throw new IllegalArgumentException("brokers must be >= 0: " + brokers);
            }
            this.brokers = brokers;
            return this;
        }

        /** Whether brokers start with the bookie-cluster-switch storage and servlet (default true). */
        public Builder plugin(boolean plugin) {
            this.plugin = plugin;
            return this;
        }

        /** Which bookie cluster {@code bookkeeperMetadataServiceUri} points at (default: the first). */
        public Builder brokerBookieCluster(String name) {
            this.brokerBookieCluster = Objects.requireNonNull(name, "name");
            return this;
        }

        /** Extra broker properties, applied after all fixture settings; calls accumulate. */
        public Builder brokerConfig(Consumer<Properties> brokerConfig) {
            this.brokerConfig = this.brokerConfig.andThen(Objects.requireNonNull(brokerConfig, "brokerConfig"));
            return this;
        }

        /** Starts ZooKeeper, the bookie clusters and the brokers; on failure closes what started. */
        public TestCluster start() throws Exception {
            if (bookieClusters.isEmpty()) {
                throw new IllegalStateException("Add at least one bookieCluster(name, bookies)");
            }
            String brokerCluster = brokerBookieCluster != null
                    ? brokerBookieCluster : bookieClusters.keySet().iterator().next();
            if (!bookieClusters.containsKey(brokerCluster)) {
                throw new IllegalStateException("brokerBookieCluster " + brokerCluster
                        + " is not one of " + bookieClusters.keySet());
            }

            long startNanos = System.nanoTime();
            TestCluster cluster = new TestCluster(Files.createTempDirectory("bcs-testcluster-"));
            cluster.clients = new TestClients(() -> cluster.broker(0), clientAuthPlugin, clientAuthParams);
            try {
                cluster.zooKeeper = TestZooKeeper.start(cluster.workDir.resolve("zookeeper"),
                        cluster.ports.take(1)[0]);
                cluster.zkClient = cluster.zooKeeper.connect(ZK_CONNECT_TIMEOUT);
                for (Map.Entry<String, Integer> e : bookieClusters.entrySet()) {
                    Path dataDir = cluster.workDir.resolve("bookies").resolve(e.getKey());
                    TestBookieCluster bk = ownZooKeeper.contains(e.getKey())
                            ? TestBookieCluster.createWithOwnZooKeeper(e.getKey(), e.getValue(), dataDir,
                                    cluster.ports, ZK_CONNECT_TIMEOUT)
                            : TestBookieCluster.create(e.getKey(), e.getValue(),
                                    cluster.zooKeeper.connectString(), cluster.zkClient, dataDir, cluster.ports);
                    cluster.bookieClusters.put(e.getKey(), bk);
                }
                if (etcdBinary != null) {
                    cluster.etcd = TestEtcd.start(etcdBinary);
                }
                long bookiesReady = System.nanoTime();

                String servletDir = BrokerProperties.servletDir();
                for (int i = 0; i < brokers; i++) {
                    MetadataLink link = null;
                    if (metadataLinks) {
                        link = MetadataLink.open("metadata-link-" + i, cluster.etcd != null
                                ? "127.0.0.1:" + cluster.etcd.clientPort() : cluster.zooKeeper.connectString());
                        cluster.links.add(link);
                    }
                    String store = link == null ? cluster.metadataStoreUrl()
                            : (cluster.etcd != null ? "etcd:http://" : "zk:") + link.connectString();
                    Properties props = BrokerProperties.base(store, cluster.bookieCluster(brokerCluster));
                    BrokerProperties.applyPlugin(props, plugin, brokerCluster, servletDir);
                    brokerConfig.accept(props);
                    cluster.pinListenPorts(props);
                    cluster.brokers.add(new TestBroker(i, props, brokerCluster, servletDir, link));
                }
                for (TestBroker broker : cluster.brokers) {
                    broker.start();
                    if (broker.index() == 0) {
                        cluster.createClusterMetadata();
                    }
                }
                LOG.info("Test cluster started in {} ms (ZooKeeper + bookies {} ms): {} bookie clusters {}, "
                                + "{} brokers, plugin={}",
                        Duration.ofNanos(System.nanoTime() - startNanos).toMillis(),
                        Duration.ofNanos(bookiesReady - startNanos).toMillis(),
                        bookieClusters.size(), bookieClusters, brokers, plugin);
                return cluster;
            } catch (Exception | Error e) {
                cluster.close();
                throw e;
            }
        }
    }
}
