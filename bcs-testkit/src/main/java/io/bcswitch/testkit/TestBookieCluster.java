package io.bcswitch.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.bookkeeper.client.BookKeeperAdmin;
import org.apache.bookkeeper.client.DefaultEnsemblePlacementPolicy;
import org.apache.bookkeeper.common.allocator.PoolingPolicy;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.util.BookKeeperConstants;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One BookKeeper cluster of the fixture: its own ledgers root {@code /bk/<name>/ledgers} in the
 * shared ZooKeeper, initialised with {@link BookKeeperAdmin#initNewCluster}, and its own bookies.
 *
 * <p>The metadata service URI is {@code zk+hierarchical://127.0.0.1:<port>/bk/<name>/ledgers}:
 * BookKeeper's own ZooKeeper driver with {@code HierarchicalLedgerManagerFactory}, whose ids come
 * from {@code LongZkLedgerIdGenerator}.
 *
 * <p>A cluster built with {@code TestCluster.Builder#bookieClusterWithOwnZooKeeper} keeps its ledgers
 * root and bookie registrations in a ZooKeeper server of its own instead (same root, URI
 * {@code zk+hierarchical://127.0.0.1:<its own port>/bk/<name>/ledgers}); that metadata service can be
 * stopped and restarted with {@link #stopMetadataService()} and {@link #startMetadataService()}.
 */
public final class TestBookieCluster {

    private static final Logger LOG = LoggerFactory.getLogger(TestBookieCluster.class);
    private static final Duration REGISTRATION_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration METADATA_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    private final String name;
    private final String ledgersRoot;
    private final String metadataServiceUri;
    private final List<TestBookie> bookies;
    /** Fixture-owned client of the metadata ZooKeeper; replaced after a restart of an own server. */
    private volatile ZooKeeper zk;
    /** The cluster's own ZooKeeper server, or null when it lives in the shared one. */
    private final OwnZooKeeper own;

    private TestBookieCluster(String name, String ledgersRoot, String metadataServiceUri,
                              List<TestBookie> bookies, ZooKeeper zk, OwnZooKeeper own) {
        this.name = name;
        this.ledgersRoot = ledgersRoot;
        this.metadataServiceUri = metadataServiceUri;
        this.bookies = bookies;
        this.zk = zk;
        this.own = own;
    }

    /** A ZooKeeper server owned by one bookie cluster: fixed port and data directory. */
    private static final class OwnZooKeeper {
        final Path dataDir;
        final int port;
        TestZooKeeper server; // null while stopped

        OwnZooKeeper(Path dataDir, TestZooKeeper server) {
            this.dataDir = dataDir;
            this.server = server;
            this.port = server.port();
        }
    }

    /**
     * Initialises the cluster metadata and starts its bookies.
     *
     * @param zk fixture-owned client, used to create parent znodes and to watch registrations
     * @param ports the fixture's ports, from which the bookies' are taken
     */
    static TestBookieCluster create(String name, int bookieCount, String zkConnectString, ZooKeeper zk,
                                    Path dataDir, Ports ports) throws Exception {
        return create(name, bookieCount, zkConnectString, zk, dataDir, null, ports);
    }

    /**
     * Starts a ZooKeeper server of the cluster's own (data under {@code dataDir/zookeeper}), then
     * initialises the cluster metadata in it and starts the bookies. The cluster owns the server
     * and its client; {@link #closeMetadataService()} stops them.
     */
    static TestBookieCluster createWithOwnZooKeeper(String name, int bookieCount, Path dataDir, Ports ports,
                                                    Duration connectTimeout) throws Exception {
        Path zkDir = dataDir.resolve("zookeeper");
        TestZooKeeper server = TestZooKeeper.start(zkDir, ports.take(1)[0]);
        ZooKeeper client = null;
        try {
            client = server.connect(connectTimeout);
            return create(name, bookieCount, server.connectString(), client, dataDir,
                    new OwnZooKeeper(zkDir, server), ports);
        } catch (Exception | Error e) {
            if (client != null) {
                client.close();
            }
            server.close();
            throw e;
        }
    }

    private static TestBookieCluster create(String name, int bookieCount, String zkConnectString, ZooKeeper zk,
                                            Path dataDir, OwnZooKeeper own, Ports ports) throws Exception {
        String ledgersRoot = "/bk/" + name + "/ledgers";
        String uri = "zk+hierarchical://" + zkConnectString + ledgersRoot;

        String parent = ledgersRoot.substring(0, ledgersRoot.lastIndexOf('/'));
        TestZooKeeper.createParents(zk, parent);
        ServerConfiguration initConf = new ServerConfiguration();
        initConf.setMetadataServiceUri(uri);
        if (!BookKeeperAdmin.initNewCluster(initConf)) {
            throw new IllegalStateException("Ledgers root " + ledgersRoot + " already exists");
        }

        List<TestBookie> bookies = new ArrayList<>(bookieCount);
        int[] bookiePorts = ports.take(bookieCount);
        for (int i = 0; i < bookieCount; i++) {
            bookies.add(new TestBookie(name, i, bookiePorts[i], uri, dataDir.resolve("bookie-" + i)));
        }
        TestBookieCluster cluster = new TestBookieCluster(name, ledgersRoot, uri,
                Collections.unmodifiableList(bookies), zk, own);
        try {
            cluster.startBookies();
        } catch (Exception | Error e) {
            cluster.stopBookies();
            throw e;
        }
        return cluster;
    }

    /** The name given to {@code TestCluster.Builder#bookieCluster}. */
    public String name() {
        return name;
    }

    /** {@code zk+hierarchical://127.0.0.1:<port>/bk/<name>/ledgers}. */
    public String metadataServiceUri() {
        return metadataServiceUri;
    }

    /** {@code /bk/<name>/ledgers}. */
    public String ledgersRoot() {
        return ledgersRoot;
    }

    public int bookieCount() {
        return bookies.size();
    }

    /** The {@code i}-th bookie (0-based), for single-bookie faults. */
    public TestBookie bookie(int i) {
        return bookies.get(i);
    }

    public List<TestBookie> bookies() {
        return bookies;
    }

    /**
     * A client configuration for this cluster: lean, unpooled, random placement (the default
     * rack-aware policy only logs that there is no topology script).
     */
    public ClientConfiguration clientConfiguration() {
        ClientConfiguration conf = new ClientConfiguration();
        conf.setMetadataServiceUri(metadataServiceUri);
        conf.setEnsemblePlacementPolicy(DefaultEnsemblePlacementPolicy.class);
        conf.setAllocatorPoolingPolicy(PoolingPolicy.UnpooledHeap);
        conf.setNumWorkerThreads(1);
        conf.setNumIOThreads(1);
        return conf;
    }

    /** A new {@link BookKeeperAdmin} (with its own BookKeeper client) on this cluster; the caller closes it. */
    public BookKeeperAdmin newAdmin() throws Exception {
        return new BookKeeperAdmin(clientConfiguration());
    }

    /** Ids of all ledgers that currently exist on this cluster (read from its ledger manager). */
    public Set<Long> ledgerIds() throws Exception {
        Set<Long> ids = new TreeSet<>();
        try (BookKeeperAdmin admin = newAdmin()) {
            for (Long id : admin.listLedgers()) {
                ids.add(id);
            }
        }
        return ids;
    }

    /** Whether this cluster has a ZooKeeper server of its own (else it lives in the shared one). */
    public boolean hasOwnMetadataService() {
        return own != null;
    }

    /** Whether the cluster's own ZooKeeper server runs (always true for a cluster on the shared one). */
    public synchronized boolean isMetadataServiceRunning() {
        return own == null || own.server != null;
    }

    /**
     * Stops this cluster's own ZooKeeper server (its data stays on disk), as if the metadata service
     * of the cluster died. Running bookies are left alone: stop them first for a clean disaster.
     * No-op when already stopped.
     *
     * @throws IllegalStateException when the cluster lives in the shared ZooKeeper
     */
    public synchronized void stopMetadataService() {
        requireOwnZooKeeper();
        if (own.server == null) {
            return;
        }
        closeClient();
        own.server.close();
        own.server = null;
        LOG.info("Bookie cluster {}: metadata service (ZooKeeper port {}) stopped", name, own.port);
    }

    /**
     * Restarts this cluster's own ZooKeeper server on its old port with its old data (ledgers,
     * id generator, cookies, client sessions). No-op when it runs.
     *
     * @throws IllegalStateException when the cluster lives in the shared ZooKeeper
     */
    public synchronized void startMetadataService() throws Exception {
        requireOwnZooKeeper();
        if (own.server != null) {
            return;
        }
        TestZooKeeper server = TestZooKeeper.start(own.dataDir, own.port);
        try {
            zk = server.connect(METADATA_CONNECT_TIMEOUT);
        } catch (Exception | Error e) {
            server.close();
            throw e;
        }
        own.server = server;
        LOG.info("Bookie cluster {}: metadata service (ZooKeeper port {}) started", name, own.port);
    }

    /** Closes the own ZooKeeper's client and server, if any (the data directory stays). Idempotent. */
    synchronized void closeMetadataService() {
        if (own == null) {
            return;
        }
        closeClient();
        if (own.server != null) {
            own.server.close();
            own.server = null;
        }
    }

    private void requireOwnZooKeeper() {
        if (own == null) {
            throw new IllegalStateException("Bookie cluster " + name
                    + " keeps its metadata in the shared ZooKeeper; build it with bookieClusterWithOwnZooKeeper"
                    + " to stop its metadata service");
        }
    }

    private void closeClient() {
        ZooKeeper client = zk;
        if (client == null) {
            return;
        }
        zk = null;
        try {
            client.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops every running bookie of this cluster (gracefully). */
    public void stopBookies() {
        for (int i = bookies.size() - 1; i >= 0; i--) {
            bookies.get(i).stop();
        }
    }

    /**
     * Starts every stopped bookie with its old port and data directories and waits until all of
     * them are registered as writable.
     */
    public void startBookies() throws Exception {
        for (TestBookie bookie : bookies) {
            bookie.start();
        }
        awaitWritableBookies(bookies.size());
    }

    /** Waits until exactly {@code expected} bookies are registered as writable under this root. */
    public void awaitWritableBookies(int expected) throws Exception {
        String available = ledgersRoot + "/" + BookKeeperConstants.AVAILABLE_NODE;
        long deadline = System.nanoTime() + REGISTRATION_TIMEOUT.toNanos();
        int seen = -1;
        while (System.nanoTime() < deadline) {
            ZooKeeper client = zk;
            if (client == null) {
                throw new IllegalStateException("Bookie cluster " + name + ": metadata service is stopped");
            }
            try {
                seen = (int) client.getChildren(available, false).stream()
                        .filter(child -> !BookKeeperConstants.READONLY.equals(child))
                        .count();
            } catch (KeeperException.NoNodeException e) {
                seen = 0;
            } catch (KeeperException.ConnectionLossException e) {
                seen = -1; // a restarted metadata service: the client reconnects
            }
            if (seen == expected) {
                LOG.info("Bookie cluster {}: {} writable bookies registered", name, seen);
                return;
            }
            Thread.sleep(50);
        }
        throw new IOException("Bookie cluster " + name + ": expected " + expected
                + " writable bookies, saw " + seen + " after " + REGISTRATION_TIMEOUT);
    }

    @Override
    public String toString() {
        return "TestBookieCluster[" + name + " " + metadataServiceUri + " " + bookies + "]";
    }
}
