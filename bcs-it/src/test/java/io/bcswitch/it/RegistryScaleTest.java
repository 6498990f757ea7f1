package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import java.util.concurrent.CompletableFuture;
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
 * The registry at the scale of a large broker cluster (150,000 relocated ledgers), on ZooKeeper with
 * its default 1 MB {@code jute.maxbuffer}, through {@link RegistryStore} on a metadata store of its own
 * (no broker): (a) 150,000 relocations written one node each are all listed back by
 * {@code listRelocations()}; (b) a migration state whose {@code built} list holds 150,000 ledger ids is
 * written to and read back from {@code orchestrator/<epoch>}. Neither may depend on one metadata node
 * or one response holding every id.
 */
class RegistryScaleTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(RegistryScaleTest.class);
    private static final int LEDGERS = 150_000;
    private static final int IN_FLIGHT = 1_000;
    /** Ledger ids as cluster-a issues them (its range starts at 0), well past the first million. */
    private static final long FIRST_ID = 10_000_000L;

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
        registry = new RegistryStore(store, paths);
    }

    @AfterEach
    void closeStore() throws Exception {
        store.close();
    }

    @Test
    void everyRelocationIsListed() throws Exception {
        long start = System.nanoTime();
        List<CompletableFuture<Long>> inFlight = new ArrayList<>();
        for (int i = 0; i < LEDGERS; i++) {
            long id = FIRST_ID + i;
            inFlight.add(registry.write(paths.relocation(id),
                    new Relocation(Relocation.FORMAT_VERSION, id, "cluster-b", "cluster-a", "CURSOR", 1, 1_000L + i),
                    -1L));
            if (inFlight.size() == IN_FLIGHT || i == 0) {
                // the first one alone: it creates the parent node
                CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                inFlight.clear();
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        log.info("SCALE wrote {} relocations in {} ms", LEDGERS, ms(start));

        long listStart = System.nanoTime();
        Map<Long, Relocation> listed = await(registry.listRelocations(), 30,
                "registry.listRelocations() with " + LEDGERS + " relocations");
        log.info("SCALE listed {} relocations in {} ms", listed.size(), ms(listStart));
        assertEquals(LEDGERS, listed.size(), "every relocation is listed");
        assertEquals("cluster-b", listed.get(FIRST_ID + LEDGERS - 1).home());
    }

    @Test
    void aMigrationStateWithEveryBuiltIdIsStored() throws Exception {
        List<Long> built = new ArrayList<>(LEDGERS);
        for (int i = 0; i < LEDGERS; i++) {
            built.add(FIRST_ID + i);
        }
        MigrationState state = MigrationState.start(1, "cluster-b", "broker-0", 1_000L).withPhase(Phase.BUILD, 2_000L)
                .withProgress(LEDGERS, LEDGERS, 0, 0, 0, 0, 0, 0, List.of(), built, 3_000L);
        String path = paths.orchestrator(1);
        long start = System.nanoTime();
        await(registry.write(path, state, -1L), 30, "writing a migration state with " + LEDGERS
                + " built ids to " + path);
        Versioned<MigrationState> read = await(registry.read(path, MigrationState.class), 30,
                "reading back " + path);
        log.info("SCALE wrote and read a migration state with {} built ids in {} ms", LEDGERS, ms(start));
        assertTrue(read.present(), path + " is stored");
        assertEquals(built, read.value().built(), "every built id is read back");
    }

    /** The future's value; an assertion failure naming {@code what} when it fails or does not complete. */
    private static <T> T await(Future<T> f, int seconds, String what) throws InterruptedException {
        try {
            return f.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            return fail(what + ": no answer within " + seconds + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            return fail(what + " failed: " + RegistryStore.unwrap(e), e);
        }
    }

    private static long ms(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
