package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.Failures;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Versioned;
import io.bcswitch.testkit.TestCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry at the scale of a large broker cluster (150,000 relocated ledgers), on ZooKeeper with its default
 * 1 MB {@code jute.maxbuffer}, through {@link RegistryStore} on a metadata store of its own (no broker): (a)
 * 150,000 relocations are written and all listed back, no listing holding more than a bounded share of them;
 * (b) a migration that made 150,000 copies records them (what a rollback deletes) in bounded chunks and reads them
 * back, its state node staying small; (c) a relocation epoch announcing 150,000 changes stays small (brokers
 * re-read the table instead). None may depend on one metadata node or one response holding every id.
 */
class RegistryScaleTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(RegistryScaleTest.class);
    private static final int LEDGERS = 150_000;
    private static final int IN_FLIGHT = 1_000;
    /** Ledger ids as cluster-a issues them (its range starts at 0), well past the first million. */
    private static final long FIRST_ID = 10_000_000L;
    /** What one metadata node or listing may hold, far below ZooKeeper's 1 MB packet limit. */
    private static final int BOUND_BYTES = 64 * 1024;

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private RegistryPaths paths;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().bookieCluster("cluster-a", 1).brokers(0).start();
    }

    @BeforeEach
    void openStore() throws Exception {
        store = MetadataStoreExtended.create(cluster.metadataStoreUrl(), MetadataStoreConfig.builder().build());
        paths = new RegistryPaths("/admin/bookie-clusters");
        registry = new RegistryStore(new PulsarMetadataPort(store), paths);
    }

    @AfterEach
    void closeStore() throws Exception {
        store.close();
    }

    @Test
    void everyRelocationIsListed() throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < LEDGERS; i += IN_FLIGHT) {
            List<Long> batch = new ArrayList<>();
            for (int j = i; j < Math.min(LEDGERS, i + IN_FLIGHT); j++) {
                batch.add(FIRST_ID + j);
            }
            await(registry.updateRelocations(batch, (id, cur) -> Optional.of(new Relocation(Relocation.FORMAT_VERSION,
                    id, "cluster-b", "cluster-a", "CURSOR", 1, 1_000L))), 60, "writing relocations " + i + "..");
        }
        log.info("SCALE wrote {} relocations in {} ms", LEDGERS, ms(start));

        long listStart = System.nanoTime();
        Map<Long, Relocation> listed = await(registry.listRelocations(), 120,
                "registry.listRelocations() with " + LEDGERS + " relocations");
        log.info("SCALE listed {} relocations in {} ms", listed.size(), ms(listStart));
        assertEquals(LEDGERS, listed.size(), "every relocation is listed");
        assertEquals("cluster-b", listed.get(FIRST_ID + LEDGERS - 1).home());

        // no listing holds more than a bounded share of the table
        int largest = 0;
        for (int shard = 0; shard < RegistryPaths.RELOCATION_SHARDS; shard++) {
            largest = Math.max(largest, store.getChildren(paths.relocations() + "/" + RegistryPaths.shardName(shard))
                    .get(10, TimeUnit.SECONDS).size());
        }
        log.info("SCALE largest relocation directory: {} entries", largest);
        assertTrue(largest * 20 < BOUND_BYTES, "largest relocation directory lists " + largest + " ids");
        assertTrue(store.getChildren(paths.relocations()).get(10, TimeUnit.SECONDS).size()
                <= RegistryPaths.RELOCATION_SHARDS, "the table's own listing is its shard directories");

        // one epoch announcing them all: too many to list, so it lists none (brokers re-read the table)
        registry.bumpRelocationEpoch(1, listed.keySet()).get(10, TimeUnit.SECONDS);
        assertTrue(nodeSize(paths.relocationEpoch()) < BOUND_BYTES);
        assertEquals(null, registry.readRelocationEpochRecord().get(10, TimeUnit.SECONDS).changed());
    }

    @Test
    void aMigrationWithEveryCopyRecordedIsStoredInBoundedNodes() throws Exception {
        List<Long> copies = new ArrayList<>(LEDGERS);
        for (int i = 0; i < LEDGERS; i++) {
            copies.add(FIRST_ID + i);
        }
        long start = System.nanoTime();
        // as a run records them: a few at a time, each write adding to the last chunk
        for (int done = 0; done < LEDGERS; done += 25_000) {
            await(registry.appendCopies(1, 1, copies.subList(done, Math.min(LEDGERS, done + 25_000))), 60,
                    "recording copies from " + done);
        }
        MigrationState state = MigrationState.start(1, "cluster-b", "broker-0", 1_000L)
                .moveTo(Phase.BUILD, 2_000L).edit().progress(LEDGERS, LEDGERS, 0, 0, 0, 0, 0, 0).copies(LEDGERS)
                .updatedAt(3_000L).build();
        String path = paths.orchestrator(1);
        await(registry.write(path, state, -1L), 30, "writing the migration state to " + path);
        Versioned<MigrationState> read = await(registry.read(path, MigrationState.class), 30,
                "reading back " + path);
        var chunks = await(registry.readCopies(1), 60, "reading back the copies");
        log.info("SCALE recorded, wrote and read {} copies in {} ms ({} chunks)", LEDGERS, ms(start), chunks.size());
        assertTrue(read.present(), path + " is stored");
        assertEquals(LEDGERS, read.value().copies());
        List<Long> back = new ArrayList<>();
        chunks.values().forEach(back::addAll);
        assertEquals(copies, back, "every copy id is read back, in order");
        assertTrue(nodeSize(path) < BOUND_BYTES, "the state node stays small");
        for (int n : chunks.keySet()) {
            assertTrue(nodeSize(paths.copiesChunk(1, n)) < BOUND_BYTES, "chunk " + n + " stays small");
        }
    }

    /**
     * (d) An operation's answer of 3 MB (a verify that names thousands of violations, say), three times what one
     * ZooKeeper packet carries by default, is kept in chunks of 256 KB and read back whole; removing it removes them.
     */
    @Test
    void anOperationResultLargerThanAZooKeeperPacketIsKeptInChunks() throws Exception {
        byte[] result = new byte[3 * 1024 * 1024 + 17];
        new java.util.Random(7).nextBytes(result);
        int chunks = await(registry.writeOperationResult("verify-x-1", result, 256 * 1024), 60, "writing");
        assertEquals(13, chunks);
        for (String c : await(registry.children(paths.operationResult("verify-x-1")), 10, "listing")) {
            assertTrue(nodeSize(paths.operationResult("verify-x-1") + "/" + c) <= 256 * 1024, c);
        }
        assertTrue(java.util.Arrays.equals(result, await(registry.readOperationResult("verify-x-1", chunks), 60,
                "reading").orElseThrow()), "read back as written");
        await(registry.deleteOperationResult("verify-x-1"), 60, "removing");
        assertEquals(Boolean.FALSE, await(store.exists(paths.operationResult("verify-x-1")), 10, "exists"));
    }

    private int nodeSize(String path) throws Exception {
        return store.get(path).get(10, TimeUnit.SECONDS).orElseThrow().getValue().length;
    }

    /** The future's value; an assertion failure naming {@code what} when it fails or does not complete. */
    private static <T> T await(Future<T> f, int seconds, String what) throws InterruptedException {
        try {
            return f.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            return fail(what + ": no answer within " + seconds + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            return fail(what + " failed: " + Failures.unwrap(e), e);
        }
    }

    private static long ms(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
