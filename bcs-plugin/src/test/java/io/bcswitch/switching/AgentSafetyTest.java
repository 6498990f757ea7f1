package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.routing.ClusterClientPool;
import io.bcswitch.routing.LedgerRouter;
import io.bcswitch.routing.SwitchRouter;
import io.bcswitch.routing.UnroutableLedgerException;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A broker's agent and router on an in-memory metadata store, in the sequences where a broker used to guess:
 * a directive it never saw (only the newest directive is kept; the ranges of the ones in between are only in
 * the range table), a directive read that fails, and an activation that fails once.
 */
class AgentSafetyTest {
    private static final long B = 1L << 32;
    private static final long C = 2L << 32;
    private static final long D = 3L << 32;

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private BrokerSwitchAgent agent;
    private ClusterClientPool pool;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0).with(new IdRange("b", B, 1, 0)), -1)
                .get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 0, B), -1).get();
        // clients are never used: routing decisions only
        pool = new ClusterClientPool("test", cluster -> CompletableFuture.completedFuture(null));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (agent != null) {
            agent.close();
        }
        pool.close();
        store.close();
    }

    private BrokerSwitchAgent startAgent(ClientActivation activation) throws Exception {
        agent = new BrokerSwitchAgent(registry, new SwitchConfig("/bcs", "", 50, true, 10), activation, o -> { },
                new BrokerPresence(registry, () -> "broker-1", Clock.systemUTC()), Clock.systemUTC(),
                io.bcswitch.concurrent.FastRetries.FACTORY);
        agent.start("zk:unused").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        return agent;
    }

    private <T> void set(String path, T value) throws Exception {
        @SuppressWarnings("unchecked")
        Class<T> type = (Class<T>) value.getClass();
        registry.update(path, type, cur -> java.util.Optional.of(value)).get();
    }

    private SwitchRouter router() {
        return new SwitchRouter(agent::ownership, agent::refresh, pool);
    }

    private void awaitActiveEpoch(long epoch) throws Exception {
        TestWaits.until("epoch " + epoch + " active on the broker", () -> agent.ownership().activeEpoch() >= epoch);
    }

    @Test
    void aRangeKnownOnlyFromTheRangeTableIsRoutedToTheClusterThatIssuedIt() throws Exception {
        startAgent(cluster -> CompletableFuture.completedFuture(null));
        // while this broker was cut off, c became active (epoch 2) and then d (epoch 3): the directive node
        // now says epoch 3; epoch 2's range is only in the range table
        set(registry.paths().ranges(), RangeTable.bootstrap("a", 0).with(new IdRange("b", B, 1, 0))
                .with(new IdRange("c", C, 2, 0)));
        set(registry.paths().switchTarget(), new SwitchDirective(1, "d", "c", 3, 0, D));
        awaitActiveEpoch(3);
        assertEquals("c", router().forLedger(C + 5).get(TestWaits.SECONDS, TimeUnit.SECONDS).cluster(),
                "a ledger c issued is read from c, not from b");
        assertEquals("c", agent.ownership().owner(C + 5).orElseThrow());
    }

    @Test
    void anIdAboveEveryKnownRangeIsNeverRoutedToAGuessedCluster() throws Exception {
        startAgent(cluster -> CompletableFuture.completedFuture(null));
        LedgerRouter router = router();
        assertEquals("b", router.forLedger(B + 1).get(TestWaits.SECONDS, TimeUnit.SECONDS).cluster());
        // the metadata store is gone (a broker cut off from it): an id above b's range may be another cluster's
        store.close();
        try {
            LedgerRouter.Target t = router.forLedger(C + 7).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            fail("ledger " + (C + 7) + " was routed to " + t.cluster() + " although no range is known to cover it");
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof UnroutableLedgerException, String.valueOf(e.getCause()));
            int code = ((UnroutableLedgerException) e.getCause()).getCode();
            assertTrue(code != org.apache.bookkeeper.client.api.BKException.Code.NoSuchLedgerExistsException
                    && code != org.apache.bookkeeper.client.api.BKException.Code
                    .NoSuchLedgerExistsOnMetadataServerException, "a retryable error, never 'no such ledger'");
        }
    }

    @Test
    void anActivationThatFailsIsRetriedUntilItWorks() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        startAgent(cluster -> cluster.equals("c") && calls.incrementAndGet() <= 2
                ? CompletableFuture.failedFuture(new IllegalStateException("cannot build c's client (try "
                + calls.get() + ")"))
                : CompletableFuture.completedFuture(null));
        set(registry.paths().ranges(), RangeTable.bootstrap("a", 0).with(new IdRange("b", B, 1, 0))
                .with(new IdRange("c", C, 2, 0)));
        set(registry.paths().switchTarget(), new SwitchDirective(1, "c", "b", 2, 0, C));
        awaitActiveEpoch(2);
        assertEquals("c", agent.ownership().activeCluster());
        assertEquals(3, calls.get(), "two failed attempts, then one that worked");
    }
}
