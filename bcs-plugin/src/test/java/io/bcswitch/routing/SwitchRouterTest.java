package io.bcswitch.routing;

import static io.bcswitch.concurrent.TestWaits.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.routing.LedgerRouter.Target;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.bookkeeper.client.BcsForwardingBookKeeper;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.BKException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SwitchRouterTest {
    private static final long B_START = 2L << 32;
    private static final long C_START = 4L << 32;

    /** An unconnected client standing in for one cluster's BookKeeper client. */
    static final class DummyClient extends BcsForwardingBookKeeper {
        final String cluster;
        final int generation;
        volatile boolean closed;

        DummyClient(String cluster, int generation) {
            this.cluster = cluster;
            this.generation = generation;
        }

        @Override
        public void close() {
            closed = true;
        }

        @Override
        public String toString() {
            return "client(" + cluster + "#" + generation + ")";
        }
    }

    /** Builds dummy clients; a cluster can be told to fail its next builds. */
    static final class FakeFactory implements ClusterClientPool.ClientFactory {
        final List<String> builds = new CopyOnWriteArrayList<>();
        final List<DummyClient> built = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> failNext = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> throwNext = new ConcurrentHashMap<>();

        @Override
        public CompletableFuture<BookKeeper> create(String cluster) {
            builds.add(cluster);
            if (throwNext.getOrDefault(cluster, new AtomicInteger()).getAndDecrement() > 0) {
                throw new IllegalStateException("cannot even start building " + cluster);
            }
            if (failNext.getOrDefault(cluster, new AtomicInteger()).getAndDecrement() > 0) {
                return CompletableFuture.failedFuture(new IllegalStateException("zk of " + cluster + " is down"));
            }
            DummyClient c = new DummyClient(cluster, (int) builds.stream().filter(cluster::equals).count());
            built.add(c);
            return CompletableFuture.completedFuture(c);
        }

        long buildsOf(String cluster) {
            return builds.stream().filter(cluster::equals).count();
        }
    }

    private FakeFactory factory;
    private ClusterClientPool pool;
    private AtomicReference<Ownership> view;
    private AtomicReference<Ownership> latest;
    private AtomicInteger refreshes;
    private SwitchRouter router;

    @BeforeEach
    void setUp() {
        factory = new FakeFactory();
        pool = new ClusterClientPool("test", factory);
        RangeTable ab = RangeTable.bootstrap("a", 0).with(new IdRange("b", B_START, 1, 0));
        view = new AtomicReference<>(new Ownership(ab, "b", 1));
        latest = new AtomicReference<>(view.get());
        refreshes = new AtomicInteger();
        router = new SwitchRouter(view::get, () -> {
            refreshes.incrementAndGet();
            view.set(latest.get());
            return CompletableFuture.completedFuture(latest.get());
        }, pool);
    }


    private static DummyClient client(Target t) {
        return (DummyClient) t.client();
    }

    @Test
    void createsGoToTheActiveCluster() throws Exception {
        Target t = get(router.forCreate());
        assertEquals("b", t.cluster());
        assertEquals("b", client(t).cluster);
        assertSame(t.client(), get(router.forCreate()).client());
        assertEquals(1, factory.buildsOf("b"));

        view.set(new Ownership(view.get().ranges(), "a", 2));
        Target a = get(router.forCreate());
        assertEquals("a", a.cluster());
        assertEquals("a", client(a).cluster);
        assertEquals(0, refreshes.get(), "creates never need a refresh");
    }

    @Test
    void ledgerIdsRouteToTheirOwner() throws Exception {
        for (long id : new long[] {0, 1, 12345, Integer.MAX_VALUE, B_START - 1}) {
            Target t = get(router.forLedger(id));
            assertEquals("a", t.cluster(), "ledger " + id);
            assertEquals("a", client(t).cluster);
        }
        assertEquals(0, refreshes.get(), "ids below the newest range are routed from the local view");
        Target b = get(router.forLedger(B_START + 7));
        assertEquals("b", b.cluster());
        assertEquals("b", client(b).cluster);
        assertEquals(1, factory.buildsOf("a"));
        assertEquals(1, factory.buildsOf("b"));
    }

    @Test
    void idsAboveTheNewestRangesHighOrderBitsRefreshTheView() throws Exception {
        // another broker already switched to c and created ledgers there
        latest.set(new Ownership(view.get().ranges().with(new IdRange("c", C_START, 2, 0)), "c", 2));

        // b's own ids (its range's high-order bits): no newer range can hold them, no refresh
        Target b = get(router.forLedger(B_START));
        assertEquals(0, refreshes.get());
        assertEquals("b", b.cluster());

        Target c = get(router.forLedger(C_START + 1));
        assertEquals(1, refreshes.get());
        assertEquals("c", c.cluster());
        assertEquals("c", client(c).cluster);

        // the refreshed view is now the local one
        get(router.forLedger(B_START + 1));
        get(router.forLedger(C_START + 2));
        get(router.forLedger(5));
        assertEquals(1, refreshes.get());
    }

    /**
     * A broker that applied directive 3 (to d) before it read the range table again knows ranges of epochs 0, 1 and
     * 3: epoch 2's (c) lies between b's and d's. An id there is not b's until the view says so: it refreshes it, and
     * fails retryably when it cannot (found by AgentSafetyTest, where the agent's view had that gap for a moment).
     */
    @Test
    void anIdBetweenTheRangesOfEpochsThatAreNotConsecutiveRefreshesTheView() throws Exception {
        long dStart = C_START + (1L << 32);
        RangeTable withGap = view.get().ranges().with(new IdRange("d", dStart, 3, 0));
        view.set(new Ownership(withGap, "d", 3));
        latest.set(new Ownership(withGap.with(new IdRange("c", C_START, 2, 0)), "d", 3));
        assertEquals("b", get(router.forLedger(B_START + 5)).cluster(), "b's own high-order bits: b's");
        assertEquals("d", get(router.forLedger(dStart + 1)).cluster());
        assertEquals(0, refreshes.get());
        assertEquals("c", get(router.forLedger(C_START + 1)).cluster(), "not guessed to be b's");
        assertEquals(1, refreshes.get());

        view.set(new Ownership(withGap, "d", 3));
        router = new SwitchRouter(view::get, () -> CompletableFuture.failedFuture(new IllegalStateException(
                "metadata store unavailable")), pool);
        UnroutableLedgerException u = assertInstanceOf(UnroutableLedgerException.class,
                TestWaits.failure(router.forLedger(C_START + 1)));
        assertEquals(BKException.Code.MetaStoreException, u.getCode(), "retryable, never 'no such ledger'");
    }

    @Test
    void anIdAboveEveryKnownRangeFailsRetryablyWhenTheRangesCannotBeRead() throws Exception {
        // a broker cut off from the metadata store: it cannot learn which cluster issued C_START + 1
        router = new SwitchRouter(view::get, () -> CompletableFuture.failedFuture(new IllegalStateException(
                "metadata store unavailable")), pool);
        UnroutableLedgerException u = assertInstanceOf(UnroutableLedgerException.class,
                TestWaits.failure(router.forLedger(C_START + 1)));
        assertEquals(BKException.Code.MetaStoreException, u.getCode(), "retryable, never 'no such ledger'");
        assertTrue(u.getMessage().contains("ledger " + (C_START + 1)), u.getMessage());
        assertEquals("b", get(router.forLedger(B_START + 3)).cluster(), "known ranges still route");
    }

    @Test
    void emptyViewAlwaysRefreshes() throws Exception {
        view.set(new Ownership(new RangeTable(1, List.of()), "a", 0));
        latest.set(new Ownership(RangeTable.bootstrap("a", 0), "a", 0));
        assertEquals("a", get(router.forLedger(3)).cluster());
        assertEquals(1, refreshes.get());
    }

    @Test
    void unknownIdsFailNamingTheId() {
        for (long id : new long[] {-1, -42, Long.MIN_VALUE}) {
            Throwable t = TestWaits.failure(router.forLedger(id));
            UnroutableLedgerException u = assertInstanceOf(UnroutableLedgerException.class, t);
            assertTrue(u.getMessage().contains("ledger " + id + " "), u.getMessage());
            assertEquals(BKException.Code.IllegalOpException, u.getCode());
        }
        // an id below the first known range has no owner either
        view.set(new Ownership(new RangeTable(1, List.of(new IdRange("b", B_START, 1, 0))), "b", 1));
        UnroutableLedgerException u = assertInstanceOf(UnroutableLedgerException.class, TestWaits.failure(router.forLedger(9)));
        assertTrue(u.getMessage().contains("ledger 9 "), u.getMessage());
        assertTrue(factory.builds.isEmpty(), "no client is built for an unroutable id: " + factory.builds);
    }

    @Test
    void aFailedClientBuildIsRetriedOnTheNextCall() throws Exception {
        // the pool itself retries a build that has already failed once within the same call, so make the
        // first call's attempts all fail
        factory.failNext.put("a", new AtomicInteger(2));
        UnroutableLedgerException u = assertInstanceOf(UnroutableLedgerException.class,
                TestWaits.failure(router.forLedger(5)));
        assertEquals(BKException.Code.MetaStoreException, u.getCode());
        assertTrue(u.getMessage().contains("ledger 5") && u.getMessage().contains("bookie-cluster=a")
                && u.getMessage().contains("zk of a is down"), u.getMessage());

        long failedBuilds = factory.buildsOf("a");
        Target t = get(router.forLedger(5));
        assertEquals("a", client(t).cluster);
        assertEquals(failedBuilds + 1, factory.buildsOf("a"), "the next call builds again");
        get(router.forLedger(6));
        assertSame(t.client(), get(router.forLedger(7)).client());
        assertEquals(failedBuilds + 1, factory.buildsOf("a"), "a working client is kept");

        factory.throwNext.put("b", new AtomicInteger(2));
        UnroutableLedgerException c = assertInstanceOf(UnroutableLedgerException.class, TestWaits.failure(router.forCreate()));
        assertEquals(BKException.Code.MetaStoreException, c.getCode());
        assertTrue(c.getMessage().contains("bookie-cluster=b (active)"), c.getMessage());
        assertEquals("b", get(router.forCreate()).cluster());
        assertEquals(3, factory.buildsOf("b"));
    }

    @Test
    void aBuildThatFailsLaterIsRetriedToo() throws Exception {
        CompletableFuture<BookKeeper> pending = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        ClusterClientPool p = new ClusterClientPool("late", cluster -> calls.incrementAndGet() == 1
                ? pending : CompletableFuture.completedFuture(new DummyClient(cluster, 2)));
        CompletableFuture<BookKeeper> first = p.get("a");
        assertSame(first, p.get("a"), "a build in progress is shared");
        pending.completeExceptionally(new IllegalStateException("timed out"));
        assertTrue(first.isCompletedExceptionally());
        assertEquals(2, ((DummyClient) p.get("a").get()).generation);
        assertEquals(2, calls.get());
    }

    @Test
    void renewReplacesTheClientCreatesGoThroughAndReadsStayOnTheClusterClient() throws Exception {
        DummyClient old = client(get(router.forLedger(B_START + 1)));
        assertSame(old, get(router.forCreate()).client(), "until the first renewal one client does both");
        BookKeeper fresh = get(pool.renew("b"));
        assertNotSame(old, fresh);
        assertSame(fresh, get(router.forCreate()).client(), "creates take the new range");
        assertSame(old, get(router.forLedger(B_START + 2)).client(), "reads never need a new range");
        assertFalse(old.closed, "handles opened through it stay usable");

        // a failed renew leaves the current client in place
        factory.failNext.put("b", new AtomicInteger(1));
        assertInstanceOf(IllegalStateException.class, TestWaits.failure(pool.renew("b")));
        assertSame(fresh, get(router.forCreate()).client());

        // renew of a cluster without a client yet installs one for creates
        DummyClient c = (DummyClient) get(pool.renew("c"));
        assertSame(c, get(pool.forCreate("c")));
        DummyClient a = (DummyClient) get(pool.get("a"));
        assertEquals(List.of("a", "b", "c"), pool.clusters().stream().sorted().toList());

        DummyClient cReads = (DummyClient) get(pool.get("c"));
        pool.close();
        assertTrue(old.closed && ((DummyClient) fresh).closed && c.closed && a.closed && cReads.closed);
        IllegalStateException closed = assertInstanceOf(IllegalStateException.class, TestWaits.failure(pool.get("a")));
        assertTrue(closed.getMessage().contains("test"), closed.getMessage());
        assertInstanceOf(UnroutableLedgerException.class, TestWaits.failure(router.forCreate()));
    }

    @Test
    void aClientStillBeingBuiltWhenRenewedIsClosedWithThePool() throws Exception {
        CompletableFuture<BookKeeper> slow = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        ClusterClientPool p = new ClusterClientPool("race", cluster -> calls.incrementAndGet() == 1
                ? slow : CompletableFuture.completedFuture(new DummyClient(cluster, 2)));
        CompletableFuture<BookKeeper> first = p.get("a");
        DummyClient renewed = (DummyClient) p.renew("a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        DummyClient late = new DummyClient("a", 1);
        slow.complete(late);
        assertSame(late, first.get());
        assertSame(renewed, p.forCreate("a").get());
        assertSame(late, p.get("a").get(), "the cluster's client for reads");
        p.close();
        assertTrue(renewed.closed);
        assertTrue(late.closed, "the client built before the renew leaked");
    }

    @Test
    void onlyReadsOfAClusterThatIsNotActiveAreBoundedAndTheBoundFollowsASwitch() {
        SwitchRouter bounded = new SwitchRouter(view::get, () -> CompletableFuture.completedFuture(view.get()), pool,
                5000);
        assertEquals(0, bounded.readTimeoutMillis("b"), "the active cluster: BookKeeper's timeouts");
        assertEquals(5000, bounded.readTimeoutMillis("a"));
        view.set(new Ownership(view.get().ranges().with(new IdRange("a", 2 * B_START, 2, 0)), "a", 2));
        assertEquals(0, bounded.readTimeoutMillis("a"), "switched back to a");
        assertEquals(5000, bounded.readTimeoutMillis("b"));
        assertEquals(0, router.readTimeoutMillis("a"), "0 configured: never bounded");
    }

    @Test
    void theOriginalOfARelocatedLedgerIsReadThroughItsIssuersClient() throws Exception {
        long relocated = 7;          // issued by a, its home is now its copy on b
        long notRelocated = 8;       // issued by a, still at home there
        long homeIsIssuer = B_START + 2; // relocated to b, which issued it: no other original
        view.set(view.get().withRelocations(java.util.Map.of(relocated, "b", homeIsIssuer, "b"), 1));
        LedgerRouter.Target original = get(router.originalOf(relocated)).orElseThrow();
        assertEquals("a", original.cluster());
        assertEquals("a", ((DummyClient) original.client()).cluster);
        assertEquals(java.util.Optional.empty(), get(router.originalOf(notRelocated)));
        assertEquals(java.util.Optional.empty(), get(router.originalOf(homeIsIssuer)));
        assertEquals(java.util.Optional.empty(), get(router.originalOf(-5L << 40)), "no range issued it");
        // the issuer's client cannot be built (the pool tries twice): no original to fall back to, not a failure
        ClusterClientPool failing = new ClusterClientPool("failing", c -> CompletableFuture.failedFuture(
                new IllegalStateException("no bookies")));
        SwitchRouter withFailing = new SwitchRouter(view::get, () -> CompletableFuture.completedFuture(view.get()),
                failing);
        assertEquals(java.util.Optional.empty(), get(withFailing.originalOf(relocated)));
        failing.close();
    }

    @Test
    void everyOtherClusterThatIssuedARangeMayHoldACopyOfAMovedLedger() throws Exception {
        long c0 = 3L << 32;
        view.set(new Ownership(view.get().ranges().with(new IdRange("c", c0, 2, 0)).with(new IdRange("a", 4L << 32,
                3, 0)), "a", 3));
        long movedTwice = 7;            // issued by a, moved to b, then to c: b may hold a copy
        long backHome = B_START + 2;    // issued by b, moved away and back: a and c may hold copies
        long neverMoved = 8;
        view.set(view.get().withRelocations(java.util.Map.of(movedTwice, "c", backHome, "b"), 1));
        assertEquals(List.of("b"), get(router.copyHoldersOf(movedTwice)).stream().map(Target::cluster).toList());
        assertEquals("b", ((DummyClient) get(router.copyHoldersOf(movedTwice)).get(0).client()).cluster);
        assertEquals(List.of("a", "c"), get(router.copyHoldersOf(backHome)).stream().map(Target::cluster).sorted()
                .toList());
        assertEquals(List.of(), get(router.copyHoldersOf(neverMoved)), "never moved: no copy anywhere");
        // a cluster whose client cannot be built (the pool tries twice) is left out, not a failure
        ClusterClientPool failing = new ClusterClientPool("failing", c -> c.equals("b")
                ? CompletableFuture.failedFuture(new IllegalStateException("no bookies")) : factory.create(c));
        SwitchRouter withFailing = new SwitchRouter(view::get, () -> CompletableFuture.completedFuture(view.get()),
                failing);
        assertEquals(List.of(), get(withFailing.copyHoldersOf(movedTwice)));
        failing.close();
    }

    @Test
    void aRetiredClusterIsNotReopenedToLookForCopiesOrOriginals() throws Exception {
        view.set(new Ownership(view.get().ranges().with(new IdRange("c", 3L << 32, 2, 0)), "c", 3));
        long movedTwice = 7;            // issued by a, moved to b, then to c: b may hold a copy, a the original
        view.set(view.get().withRelocations(java.util.Map.of(movedTwice, "c"), 1));
        assertEquals(List.of("b"), get(router.copyHoldersOf(movedTwice)).stream().map(Target::cluster).toList());
        // both retired (DEPRECATED, their clients closed): the deletion of a moved ledger must not build their
        // clients again, one per deleted ledger, towards bookies that may be switched off
        pool.closeClient("a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        pool.closeClient("b").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        view.set(view.get().withRetired(java.util.Set.of("a", "b")));
        List<String> before = List.copyOf(factory.builds);
        assertEquals(List.of(), get(router.copyHoldersOf(movedTwice)));
        assertEquals(java.util.Optional.empty(), get(router.originalOf(movedTwice)));
        assertEquals(before, factory.builds, "no client is built for a retired cluster");
        // one no longer retired (a switch to it undid its DEPRECATED) is asked again
        view.set(view.get().withRetired(java.util.Set.of("a")));
        assertEquals(List.of("b"), get(router.copyHoldersOf(movedTwice)).stream().map(Target::cluster).toList());
    }

    @Test
    void ownershipViewsKeepWhatTheyDoNotReplace() {
        java.util.Set<String> retired = java.util.Set.of("a");
        Ownership o = view.get().withRelocations(java.util.Map.of(7L, "b"), 3).withRetired(retired);
        RangeTable more = o.ranges().with(new IdRange("c", 4L << 32, 2, 0));
        Ownership ranged = o.withRanges(more);
        assertEquals(new Ownership(more, "b", 1, java.util.Map.of(7L, "b"), 3, retired), ranged);
        Ownership active = o.withActive(more, "c", 2);
        assertEquals(new Ownership(more, "c", 2, java.util.Map.of(7L, "b"), 3, retired), active);
        assertEquals(java.util.Optional.of("b"), active.owner(7));
        assertEquals(java.util.Optional.of("c"), active.owner((4L << 32) + 1));
        assertEquals(retired, active.withRelocations(java.util.Map.of(), 4).retired());
    }

    @Test
    void theRetiredClustersAreTheDeprecatedOnesButTheActiveOne() {
        List<io.bcswitch.registry.BookieClusterRecord> clusters = new java.util.ArrayList<>();
        for (String c : List.of("a", "b", "c", "d")) {
            clusters.add(new io.bcswitch.registry.BookieClusterRecord(1, c, "zk+hierarchical://" + c + ":2181/ledgers",
                    c.equals("c") ? io.bcswitch.registry.ClusterStatus.STANDBY
                            : io.bcswitch.registry.ClusterStatus.DEPRECATED, 1));
        }
        // b is active: a DEPRECATED that lost to a switch to it is being undone
        assertEquals(java.util.Set.of("a", "d"), view.get().withRetiredOf(clusters).retired());
        assertEquals(java.util.Set.of(), view.get().withRetiredOf(List.of()).retired());
    }
}
