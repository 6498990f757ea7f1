package io.bcswitch.adapter;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.testkit.TestCluster;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.common.allocator.PoolingPolicy;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The test bed of the ledger copier's tests: two real bookie clusters of one bookie each, no broker, and a client of
 * each configured as the plugin's migration clients are.
 */
abstract class CopierTestBase extends ClusterTestBase {
    static final byte[] PWD = "pwd".getBytes(StandardCharsets.UTF_8);
    static BookKeeper a;
    static BookKeeper b;
    /** The copier's executor for calls that block. */
    static ExecutorService io;

    @BeforeAll
    static void startClusters() throws Exception {
        cluster = TestCluster.builder().bookieCluster("cluster-a", 1).bookieCluster("cluster-b", 1).brokers(0).start();
        a = migrationClient("cluster-a", PoolingPolicy.PooledDirect, true);
        b = migrationClient("cluster-b", PoolingPolicy.PooledDirect, true);
        io = Executors.newSingleThreadExecutor();
    }

    @AfterAll
    static void closeClients() throws Exception {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        if (io != null) {
            io.shutdownNow();
        }
    }

    /**
     * A client of {@code cluster} as a broker builds the migration's: by default a broker's BookKeeper clients use
     * the v2 wire protocol and Pulsar's pooled direct buffers (the suites' JVMs run with unpooled heap buffers, so the
     * allocator is set here: a copy that mishandled pooled buffers passed every test once).
     */
    static BookKeeper migrationClient(String cluster, PoolingPolicy pooling, boolean v2WireProtocol)
            throws Exception {
        ClientConfiguration c = CopierTestBase.cluster.bookieCluster(cluster).clientConfiguration()
                .setStoreSystemtimeAsLedgerCreationTime(true);
        c.setAllocatorPoolingPolicy(pooling);
        c.setUseV2WireProtocol(v2WireProtocol);
        return BookKeeper.forConfig(c).build();
    }

    static String entry(int i) {
        return "entry-" + i;
    }

    /** A closed ledger on cluster-a with {@code entries} entries, {@link #entry} each. */
    static long sourceLedger(int entries) throws Exception {
        try (WriteHandle w = a.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                .withDigestType(DigestType.CRC32C).withPassword(PWD).execute().get()) {
            for (int i = 0; i < entries; i++) {
                w.append(entry(i).getBytes(StandardCharsets.UTF_8));
            }
            return w.getId();
        }
    }

    static boolean isOnB(long id) throws Exception {
        return cluster.bookieCluster("cluster-b").ledgerIds().contains(id);
    }
}
