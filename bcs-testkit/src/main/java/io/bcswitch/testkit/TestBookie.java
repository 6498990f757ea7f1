package io.bcswitch.testkit;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.common.allocator.PoolingPolicy;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.proto.BookieServer;
import org.apache.bookkeeper.server.EmbeddedServer;
import org.apache.bookkeeper.server.conf.BookieConfiguration;
import org.apache.bookkeeper.stats.NullStatsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real bookie ({@link EmbeddedServer}) of a {@link TestBookieCluster}.
 *
 * <p>Port, journal and ledger directories are fixed when the fixture is built, so
 * {@link #stop()} followed by {@link #start()} brings back the same bookie (same id, same
 * cookie, same data). Lifecycle methods are meant to be called from the test thread.
 */
public final class TestBookie {

    private static final Logger LOG = LoggerFactory.getLogger(TestBookie.class);

    private final String clusterName;
    private final int index;
    private final int port;
    private final String metadataServiceUri;
    private final Path journalDir;
    private final Path ledgerDir;

    private volatile EmbeddedServer server;

    TestBookie(String clusterName, int index, int port, String metadataServiceUri, Path dataDir) {
        this.clusterName = clusterName;
        this.index = index;
        this.port = port;
        this.metadataServiceUri = metadataServiceUri;
        this.journalDir = dataDir.resolve("journal");
        this.ledgerDir = dataDir.resolve("ledgers");
    }

    /** The bookie port, fixed for the fixture's lifetime. */
    public int port() {
        return port;
    }

    /** The bookie id as registered in ZooKeeper: {@code 127.0.0.1:<port>}. */
    public String bookieId() {
        return "127.0.0.1:" + port;
    }

    /** Name of the bookie cluster this bookie belongs to. */
    public String clusterName() {
        return clusterName;
    }

    public boolean isRunning() {
        EmbeddedServer s = server;
        return s != null && s.getBookieService().getServer().isRunning();
    }

    /**
     * Starts the bookie; no-op when it already runs. Returns once the bookie serves requests and
     * has registered itself (BookieImpl registers synchronously during start).
     */
    public synchronized void start() throws Exception {
        if (server != null) {
            return;
        }
        Files.createDirectories(journalDir);
        Files.createDirectories(ledgerDir);
        EmbeddedServer s = EmbeddedServer.builder(new BookieConfiguration(serverConfiguration()))
                .statsProvider(new NullStatsProvider())
                .build();
        try {
            s.getLifecycleComponentStack().start();
            BookieServer bookieServer = s.getBookieService().getServer();
            if (!bookieServer.isRunning()) {
                throw new IllegalStateException("Bookie " + bookieId() + " of " + clusterName
                        + " did not come up (exit code " + bookieServer.getExitCode() + ")");
            }
        } catch (Exception | Error e) {
            closeQuietly(s);
            throw e;
        }
        server = s;
        LOG.info("Bookie {} of {} started", bookieId(), clusterName);
    }

    /**
     * Runs the bookie's garbage collection of deleted ledgers now and waits until {@code ledgerId} is gone from its
     * storage (a fault hook: bookies collect every few minutes by default, and a deleted ledger stays readable from
     * them until then).
     */
    public void forceGarbageCollection(long ledgerId) throws Exception {
        EmbeddedServer s = running("collect garbage on");
        var storage = s.getBookieService().getServer().getBookie().getLedgerStorage();
        storage.forceGC(true, true);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (storage.ledgerExists(ledgerId)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("ledger " + ledgerId + " still on bookie " + bookieId() + " after GC");
            }
            Thread.sleep(100);
        }
    }

    /**
     * Makes the running bookie stop answering while it stays registered and keeps its connections open (a fault
     * hook: a hung or partitioned host, whose requests wait for the client's timeouts instead of failing at once
     * as they do against a stopped bookie).
     */
    public void suspend() {
        running("suspend").getBookieService().getServer().suspendProcessing();
        LOG.info("Bookie {} of {} suspended (registered, not answering)", bookieId(), clusterName);
    }

    /** Lets a {@link #suspend suspended} bookie answer again. */
    public void resume() {
        running("resume").getBookieService().getServer().resumeProcessing();
        LOG.info("Bookie {} of {} resumed", bookieId(), clusterName);
    }

    private EmbeddedServer running(String what) {
        EmbeddedServer s = server;
        if (s == null) {
            throw new IllegalStateException("cannot " + what + " bookie " + bookieId() + " of " + clusterName
                    + ": it is not running");
        }
        return s;
    }

    /** Stops the bookie gracefully (it unregisters from ZooKeeper); no-op when it is stopped. */
    public synchronized void stop() {
        EmbeddedServer s = server;
        if (s == null) {
            return;
        }
        server = null;
        closeQuietly(s);
        LOG.info("Bookie {} of {} stopped", bookieId(), clusterName);
    }

    private void closeQuietly(EmbeddedServer s) {
        try {
            s.getLifecycleComponentStack().close();
        } catch (RuntimeException e) {
            LOG.warn("Error stopping bookie {} of {}", bookieId(), clusterName, e);
        }
    }

    /**
     * A lean bookie: loopback only, unpooled heap buffers, no fsync, one thread per pool, tiny
     * DbLedgerStorage caches (the defaults size the write cache at a quarter of direct memory
     * per bookie and the RocksDB block cache at a tenth), no HTTP server, no autorecovery.
     */
    private ServerConfiguration serverConfiguration() {
        return leanConfiguration(metadataServiceUri, port, journalDir, ledgerDir);
    }

    /**
     * The lean configuration of a bookie on {@code 127.0.0.1:port} (also written to the conf file of a bookie of a
     * {@link ProcessCluster}, so both kinds of fixture run the same bookie).
     */
    static ServerConfiguration leanConfiguration(String metadataServiceUri, int port, Path journalDir,
                                                 Path ledgerDir) {
        ServerConfiguration conf = new ServerConfiguration();
        conf.setMetadataServiceUri(metadataServiceUri);
        conf.setBookiePort(port);
        conf.setAdvertisedAddress("127.0.0.1");
        conf.setAllowLoopback(true);
        loopbackInterfaceName().ifPresent(conf::setListeningInterface);
        conf.setUseHostNameAsBookieID(false);
        // An explicit id also stops cookie validation from reverse-resolving interface names.
        conf.setBookieId("127.0.0.1:" + port);
        conf.setJournalDirName(journalDir.toString());
        conf.setLedgerDirNames(new String[] {ledgerDir.toString()});

        conf.setAllocatorPoolingPolicy(PoolingPolicy.UnpooledHeap);
        conf.setJournalSyncData(false);
        conf.setProperty("journalPreAllocSizeMB", 1);
        conf.setJournalWriteBufferSizeKB(64);
        conf.setJournalMaxMemorySizeMb(16);
        conf.setEntryLogFilePreAllocationEnabled(false);
        // Disk use follows what is live: small journal files (few kept) and entry logs, and a garbage collector
        // that runs often, so that deleted ledgers give their space back within seconds. Benchmarks write
        // gigabytes; with the defaults (2 GB journals, 1 GB entry logs, a collector every 10 minutes) a run fills
        // the disk and the bookie turns read-only.
        conf.setMaxJournalSizeMB(64);
        conf.setMaxBackupJournals(1);
        conf.setEntryLogSizeLimit(64L * 1024 * 1024);
        conf.setGcWaitTime(10_000);
        // Dropping journal pages from the page cache reads FileDescriptor.fd by reflection; without
        // --add-opens java.base/java.io that fails with "assert false" under -ea (surefire's
        // default) and the journal thread's handler then calls System.exit.
        conf.setJournalRemovePagesFromCache(false);

        conf.setServerNumIOThreads(1);
        conf.setNumAddWorkerThreads(1);
        conf.setNumReadWorkerThreads(1);
        conf.setNumHighPriorityWorkerThreads(1);
        conf.setNumJournalCallbackThreads(1);

        conf.setLedgerStorageClass(DbLedgerStorage.class.getName());
        conf.setProperty(DbLedgerStorage.WRITE_CACHE_MAX_SIZE_MB, 4);
        conf.setProperty(DbLedgerStorage.READ_AHEAD_CACHE_MAX_SIZE_MB, 4);
        conf.setProperty("dbStorage_rocksDB_blockCacheSize", 4L * 1024 * 1024);
        conf.setProperty("dbStorage_rocksDB_writeBufferSizeMB", 1);
        conf.setProperty("dbStorage_rocksDB_sstSizeInMB", 4);
        conf.setProperty("dbStorage_rocksDB_lz4CompressionEnabled", false);
        conf.setProperty("dbStorage_rocksDB_logLevel", "error");

        conf.setHttpServerEnabled(false);
        conf.setAutoRecoveryDaemonEnabled(false);
        conf.setStatsProviderClass(NullStatsProvider.class);
        // Shared CI disks can be fuller than the 95 % default that turns bookies read-only.
        conf.setDiskUsageWarnThreshold(0.98f);
        conf.setDiskUsageThreshold(0.99f);
        return conf;
    }

    /** "lo" on Linux; binding to it keeps the bookie off external interfaces. */
    private static java.util.Optional<String> loopbackInterfaceName() {
        try {
            NetworkInterface nic = NetworkInterface.getByInetAddress(InetAddress.getLoopbackAddress());
            return nic == null ? java.util.Optional.empty() : java.util.Optional.of(nic.getName());
        } catch (SocketException e) {
            return java.util.Optional.empty();
        }
    }

    @Override
    public String toString() {
        return "TestBookie[" + clusterName + "#" + index + " " + bookieId() + (isRunning() ? "" : " stopped") + "]";
    }
}
