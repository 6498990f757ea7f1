package io.bcswitch.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.routing.SwitchRouterTest.DummyClient;
import io.bcswitch.routing.SwitchRouterTest.FakeFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Clients prepared ahead of a switch: used by the switch they were built for, and by nothing else. */
class ClusterClientPoolTest {
    private static final long KEY = 4L << 32;
    private static final long OTHER_KEY = 6L << 32;

    private FakeFactory factory;
    private ClusterClientPool pool;

    @BeforeEach
    void setUp() {
        factory = new FakeFactory();
        pool = new ClusterClientPool("test", factory);
    }

    @AfterEach
    void tearDown() {
        pool.close();
    }

    private DummyClient inUse(String cluster) throws Exception {
        return (DummyClient) pool.forCreate(cluster).get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aPreparedClientIsNotUsedBeforeTheSwitchAndIsTheOneTheSwitchUses() throws Exception {
        DummyClient before = inUse("b");
        DummyClient prepared = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertNotSame(before, prepared);
        assertSame(before, inUse("b"), "until the switch, creates keep going through the client in use");

        pool.renew("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertSame(prepared, inUse("b"), "the switch uses the client prepared for its range");
        assertEquals(2, factory.buildsOf("b"), "nothing built at the switch");
        assertFalse(prepared.closed);
        assertFalse(before.closed, "the replaced client stays open for the handles opened through it");
    }

    @Test
    void aSwitchToAnotherRangeNeverUsesAClientPreparedForAnEarlierOne() throws Exception {
        DummyClient stale = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.renew("b", OTHER_KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertNotSame(stale, inUse("b"), "a client prepared for another range would issue ids of that range");
        assertTrue(stale.closed, "the unused prepared client is closed");
    }

    @Test
    void preparingAnotherRangeClosesTheClientPreparedBefore() throws Exception {
        DummyClient first = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient second = (DummyClient) pool.prepare("b", OTHER_KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(first.closed);
        assertSame(second, pool.prepare("b", OTHER_KEY)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS), "preparing twice builds once");
        pool.renew("b", OTHER_KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertSame(second, inUse("b"));
    }

    @Test
    void aPreparationThatFailedIsReplacedByAFreshClientAtTheSwitch() throws Exception {
        factory.failNext.put("b", new AtomicInteger(1));
        assertTrue(pool.prepare("b", KEY).handle((c, e) -> e != null).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        pool.renew("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("b", inUse("b").cluster);
        assertEquals(2, factory.buildsOf("b"));
    }

    @Test
    void anAnnouncementThatArrivesAfterItsSwitchWasAppliedBuildsNothing() throws Exception {
        pool.renew("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient used = inUse("b");
        assertSame(used, pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals(1, factory.buildsOf("b"));
    }

    @Test
    void closingThePoolClosesAPreparedClient() throws Exception {
        DummyClient prepared = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.close();
        assertTrue(prepared.closed);
    }

    @Test
    void onlyOnePreparedClientIsKeptWhateverItsCluster() throws Exception {
        // an announcement of a switch to b that never came, then one to c
        DummyClient forB = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient forC = (DummyClient) pool.prepare("c", OTHER_KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(forB.closed, "the client prepared for b's abandoned switch is closed");
        pool.renew("c", OTHER_KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertSame(forC, inUse("c"));
    }

    @Test
    void anUnusedPreparedClientIsClosedOnTheCloserNeverOnTheCallersThread() throws Exception {
        java.util.List<Runnable> closes = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ClusterClientPool p = new ClusterClientPool("closer", factory, closes::add)) {
            DummyClient stale = (DummyClient) p.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            p.renew("b", OTHER_KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertFalse(stale.closed, "not closed by the thread that applies the switch");
            assertEquals(1, closes.size());
            closes.forEach(Runnable::run);
            assertTrue(stale.closed);
        }
    }

    @Test
    void closeClientClosesTheClusterClientsAndTheNextGetBuildsANewOne() throws Exception {
        DummyClient b = inUse("b");
        DummyClient c = inUse("c");
        DummyClient preparedForB = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.closeClient("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(b.closed, "the client in use");
        assertTrue(preparedForB.closed, "the client prepared for b");
        assertFalse(c.closed, "another cluster's client");
        assertEquals(java.util.List.of("c"), pool.clusters());
        DummyClient again = inUse("b");
        assertNotSame(b, again);
        assertFalse(again.closed);
        assertEquals(3, factory.buildsOf("b"));
        pool.closeClient("nothing-here").get(TestWaits.SECONDS, TimeUnit.SECONDS); // no client: nothing to do
    }

    /**
     * Found by the sequence explorer (seed -4966829370179537111): two cleanups of a DEPRECATED cluster at once; the
     * first one's end deprecated the cluster again and its clients were closed while the second listed the
     * cluster's ledgers through the migration's client ("Ledger manager is closed", a 500). A client an operation
     * holds is taken out of use at once and closed when the last operation is over.
     */
    @Test
    void aClientAnOperationHoldsIsClosedWhenTheOperationIsOver() throws Exception {
        ClusterClientPool.Lease first = pool.lease("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        ClusterClientPool.Lease second = pool.lease("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient held = (DummyClient) first.client();
        assertSame(held, second.client());
        pool.closeClient("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertFalse(held.closed, "two operations still run through it");
        DummyClient fresh = inUse("b");
        assertNotSame(held, fresh, "out of use: the next operation gets a new client");
        first.release();
        first.release(); // a second release of the same lease counts once
        assertFalse(held.closed, "one operation still runs through it");
        second.release();
        assertTrue(held.closed, "closed once the last operation is over");
        assertFalse(fresh.closed);

        ClusterClientPool.Lease idle = pool.lease("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        idle.release();
        pool.closeClient("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(((DummyClient) idle.client()).closed, "a client no operation holds is closed at once");

        ClusterClientPool.Lease atShutdown = pool.lease("c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.closeClient("c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.close();
        assertTrue(((DummyClient) atShutdown.client()).closed, "the pool's close closes a held client too");
    }

    @Test
    void closeClientLeavesAClientPreparedForAnotherCluster() throws Exception {
        inUse("b");
        DummyClient forC = (DummyClient) pool.prepare("c", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.closeClient("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertFalse(forC.closed);
        pool.renew("c", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertSame(forC, inUse("c"), "still the one the switch uses");
    }

    @Test
    void aClusterWhoseClientWasClosedIsPreparedAfreshForTheRangeItHadBefore() throws Exception {
        pool.renew("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient closed = inUse("b");
        pool.closeClient("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient prepared = (DummyClient) pool.prepare("b", KEY).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertNotSame(closed, prepared, "never the closed client the earlier switch used");
        assertFalse(prepared.closed);
    }

    @Test
    void renewingWithoutARangeReplacesTheClientInUseAndKeepsTheOldOneOpenUntilThePoolCloses() throws Exception {
        DummyClient first = inUse("b");
        DummyClient fresh = (DummyClient) pool.renew("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertNotSame(first, fresh);
        assertSame(fresh, inUse("b"));
        assertFalse(first.closed, "handles opened through it may still be read");
        pool.close();
        assertTrue(first.closed);
        assertTrue(fresh.closed);
        assertTrue(pool.get("b").isCompletedExceptionally(), "a closed pool builds nothing");
        assertTrue(pool.prepare("b", KEY).isCompletedExceptionally(), "a closed pool prepares nothing");
    }

    @Test
    void closingThePoolClosesAClientStillBeingBuiltOnceItExists() throws Exception {
        java.util.concurrent.CompletableFuture<org.apache.bookkeeper.client.BookKeeper> building =
                new java.util.concurrent.CompletableFuture<>();
        try (ClusterClientPool p = new ClusterClientPool("slow", cluster -> building)) {
            java.util.concurrent.CompletableFuture<org.apache.bookkeeper.client.BookKeeper> got = p.get("b");
            p.close();
            DummyClient late = new DummyClient("b", 1);
            building.complete(late);
            assertTrue(late.closed);
            assertSame(late, got.get(TestWaits.SECONDS, TimeUnit.SECONDS));
        }
    }

    @Test
    void aReplacedClientIsClosedOnceItsGraceIsOverAndNothingIsOpenThroughIt() throws Exception {
        java.util.Set<org.apache.bookkeeper.client.BookKeeper> used = java.util.concurrent.ConcurrentHashMap.newKeySet();
        long[] now = {0};
        java.util.List<Runnable> closes = new java.util.ArrayList<>();
        try (ClusterClientPool p = new ClusterClientPool("test", factory, closes::add,
                c -> used.contains(c) ? "a writer" : null, 100, () -> now[0])) {
            DummyClient readsB = (DummyClient) p.get("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            DummyClient first = (DummyClient) p.renew("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            DummyClient writer = (DummyClient) p.renew("c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(0, p.retiredCount(), "a first renewal replaces no creator: b's client keeps its reads");
            p.renew("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            p.renew("c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            used.add(writer);
            assertEquals(2, p.retiredCount());

            now[0] = 99;
            assertEquals(0, p.closeIdleRetired(), "within the grace: an operation routed to it may still run");
            now[0] = 100;
            assertEquals(1, p.closeIdleRetired(), "b's replaced client: nothing open through it");
            assertFalse(first.closed, "closed on the closer, not on the caller's thread");
            closes.forEach(Runnable::run);
            assertTrue(first.closed);
            assertFalse(writer.closed, "c's replaced client: a ledger created through it is still written");
            assertEquals(1, p.retiredCount());

            used.remove(writer);
            closes.clear();
            assertEquals(1, p.closeIdleRetired());
            closes.forEach(Runnable::run);
            assertTrue(writer.closed);
            assertEquals(0, p.retiredCount());
            assertEquals(0, p.closeIdleRetired(), "each is closed once");
            assertFalse(((DummyClient) p.forCreate("b").get(TestWaits.SECONDS, TimeUnit.SECONDS)).closed,
                    "the client in use for creates is never a retired one");
            assertSame(readsB, p.get("b").get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertFalse(readsB.closed, "nor is the cluster's client for reads");
        }
    }

    @Test
    void whatIsStillRetiredWhenThePoolClosesIsClosedWithIt() throws Exception {
        java.util.List<Runnable> closes = new java.util.ArrayList<>();
        ClusterClientPool p = new ClusterClientPool("test", factory, closes::add, c -> "a reader", 0, () -> 0);
        p.get("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient first = (DummyClient) p.renew("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        p.renew("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(0, p.closeIdleRetired(), "in use");
        p.close();
        assertTrue(first.closed);
        assertEquals(0, p.retiredCount());
    }
}
