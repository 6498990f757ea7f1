package io.bcswitch.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One standalone ZooKeeper server inside the test JVM, listening on a free loopback port.
 *
 * <p>No four-letter-word commands and no admin server are needed: nothing probes it, every
 * component connects with a normal client.
 */
final class TestZooKeeper implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TestZooKeeper.class);

    /** Sessions may last 2..20 ticks: 4 s .. 40 s, enough for the broker's 30 s default. */
    private static final int TICK_TIME_MS = 2000;

    private final ZooKeeperServer server;
    private final ServerCnxnFactory connectionFactory;
    private final int port;

    private TestZooKeeper(ZooKeeperServer server, ServerCnxnFactory connectionFactory) {
        this.server = server;
        this.connectionFactory = connectionFactory;
        this.port = connectionFactory.getLocalPort();
    }

    /**
     * Starts a server keeping snapshots and transaction logs under {@code dataDir}, listening on
     * {@code port} (one of the fixture's {@link Ports}). Starting again on the port and data
     * directory of a stopped server brings back its data and sessions.
     */
    static TestZooKeeper start(Path dataDir, int port) throws IOException, InterruptedException {
        Path snapshots = Files.createDirectories(dataDir.resolve("snapshots"));
        Path txnLogs = Files.createDirectories(dataDir.resolve("txnlogs"));
        ZooKeeperServer server = new ZooKeeperServer(snapshots.toFile(), txnLogs.toFile(), TICK_TIME_MS);
        // 0 max connections per client address means unlimited (every client here comes from 127.0.0.1).
        ServerCnxnFactory factory = ServerCnxnFactory.createFactory(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        try {
            factory.startup(server);
        } catch (IOException | InterruptedException | RuntimeException e) {
            factory.shutdown();
            server.shutdown();
            throw e;
        }
        TestZooKeeper zk = new TestZooKeeper(server, factory);
        LOG.info("ZooKeeper started on {}", zk.connectString());
        return zk;
    }

    int port() {
        return port;
    }

    /** {@code 127.0.0.1:<port>}. */
    String connectString() {
        return "127.0.0.1:" + port;
    }

    /** Sessions the server holds now (every ZooKeeper client of every broker, bookie and tool). */
    int sessions() {
        return (int) server.getZKDatabase().getSessionCount();
    }

    /** Watches the server holds now, over every session. */
    int watches() {
        return server.getZKDatabase().getDataTree().getWatchCount();
    }

    /** A new connected client; the caller closes it. */
    ZooKeeper connect(Duration timeout) throws IOException, InterruptedException {
        return connect(connectString(), timeout);
    }

    /** A new client connected to {@code connectString}; the caller closes it. */
    static ZooKeeper connect(String connectString, Duration timeout) throws IOException, InterruptedException {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connectString, (int) timeout.toMillis(), event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            zk.close();
            throw new IOException("Could not connect to ZooKeeper at " + connectString + " within " + timeout);
        }
        return zk;
    }

    /** Creates every missing znode of {@code path} (persistent, empty, open ACL). */
    static void createParents(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        StringBuilder current = new StringBuilder();
        for (String part : path.split("/")) {
            if (part.isEmpty()) {
                continue;
            }
            current.append('/').append(part);
            try {
                zk.create(current.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException alreadyThere) {
                // fine: another cluster shares the prefix
            }
        }
    }

    private boolean closed;

    /** Stops the server (its data stays on disk). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        connectionFactory.shutdown();
        server.shutdown();
        LOG.info("ZooKeeper on port {} stopped", port);
    }
}
