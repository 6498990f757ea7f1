package io.bcswitch.adapter;

import static io.bcswitch.concurrent.TestWaits.get;
import static io.bcswitch.adapter.InMemoryBookKeeper.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.routing.LedgerRouter;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper.DigestType;
import org.apache.bookkeeper.client.BookieInfoReader.BookieInfo;
import org.apache.bookkeeper.client.ClientContext;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.ListLedgersResultBuilder;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.meta.LedgerManagerFactory;
import org.apache.bookkeeper.meta.MetadataClientDriver;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.proto.BookieAddressResolver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The routing client the managed ledgers get, over in-memory clusters: each of its calls reaches the cluster the
 * router names (creates the active one, everything on a ledger the ledger's owner, calls without a ledger the active
 * one), and it closes what it owns once.
 */
class RoutingBookKeeperTest {
    /** No ledger is a compacted view. */
    private static final java.util.function.LongPredicate NONE = id -> false;

    /** What the calls without a ledger id answer with on the active cluster: things only compared by identity. */
    private static <T> T sentinel(Class<T> type) {
        return type.cast(Proxy.newProxyInstance(RoutingBookKeeperTest.class.getClassLoader(), new Class<?>[] {type},
                (proxy, m, args) -> switch (m.getName()) {
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> type.getSimpleName();
                    default -> throw new UnsupportedOperationException(m.getName());
                }));
    }

    /** An in-memory cluster that also answers the calls without a ledger id, with sentinels. */
    private static final class Active extends InMemoryBookKeeper {
        final ListLedgersResultBuilder list = sentinel(ListLedgersResultBuilder.class);
        final LedgerManager ledgerManager = sentinel(LedgerManager.class);
        final LedgerManagerFactory factory = sentinel(LedgerManagerFactory.class);
        final MetadataClientDriver driver = sentinel(MetadataClientDriver.class);
        final BookieAddressResolver resolver = sentinel(BookieAddressResolver.class);
        final ClientContext context = sentinel(ClientContext.class);
        final Map<BookieId, BookieInfo> bookies = new HashMap<>();

        @Override
        public ListLedgersResultBuilder newListLedgersOp() {
            return list;
        }

        @Override
        public LedgerManager getLedgerManager() {
            return ledgerManager;
        }

        @Override
        public LedgerManagerFactory getLedgerManagerFactory() {
            return factory;
        }

        @Override
        public MetadataClientDriver getMetadataClientDriver() {
            return driver;
        }

        @Override
        public BookieAddressResolver getBookieAddressResolver() {
            return resolver;
        }

        @Override
        public Map<BookieId, BookieInfo> getBookieInfo() {
            return bookies;
        }

        @Override
        public ClientContext getClientCtx() {
            return context;
        }
    }

    private final Active b = new Active();
    private final InMemoryBookKeeper c = new InMemoryBookKeeper();
    private final LedgerHandleTracker tracker = new LedgerHandleTracker();
    private final Map<Long, CompletableFuture<LedgerRouter.Target>> owners = new ConcurrentHashMap<>();
    private volatile CompletableFuture<LedgerRouter.Target> active =
            CompletableFuture.completedFuture(new LedgerRouter.Target("b", b));
    private final LedgerRouter router = new LedgerRouter() {
        @Override
        public CompletableFuture<Target> forCreate() {
            return active;
        }

        @Override
        public CompletableFuture<Target> forLedger(long ledgerId) {
            return owners.getOrDefault(ledgerId, CompletableFuture.failedFuture(
                    BKException.create(BKException.Code.NoSuchLedgerExistsOnMetadataServerException)));
        }
    };
    private final OrderedExecutor pool = OrderedExecutor.newBuilder().name("routing-test").numThreads(1).build();
    private final AtomicInteger closes = new AtomicInteger();
    private final List<String> created = new ArrayList<>();
    private final RoutingBookKeeper routing = new LineRoutingBookKeeper(router, pool, closes::incrementAndGet,
            (ml, id, cluster) -> created.add(ml + " " + id + " " + cluster), tracker);

    @AfterEach
    void shutDown() {
        pool.shutdownNow();
    }


    private void ownedBy(long id, String cluster, InMemoryBookKeeper client) {
        owners.put(id, CompletableFuture.completedFuture(new LedgerRouter.Target(cluster, client)));
    }

    private InMemoryBookKeeper.Meta meta(InMemoryBookKeeper client, long id) {
        return client.ledger(id).orElseThrow().meta;
    }

    @Test
    void everyCallbackCreateGoesToTheActiveClusterWithItsArguments() {
        List<Integer> rcs = new ArrayList<>();
        Map<String, byte[]> custom = Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, bytes("t/n/persistent/x"));

        routing.asyncCreateLedger(3, 2, DigestType.CRC32C, bytes("p"), (rc, lh, ctx) -> rcs.add(rc), null);
        routing.asyncCreateLedger(5, 4, 3, DigestType.CRC32C, bytes("p"), (rc, lh, ctx) -> rcs.add(rc), null, custom);
        routing.asyncCreateLedgerAdv(4, 3, 2, DigestType.CRC32C, bytes("p"), (rc, lh, ctx) -> rcs.add(rc), null,
                custom);
        routing.asyncCreateLedgerAdv(77, 3, 3, 1, DigestType.CRC32C, bytes("p"), (rc, lh, ctx) -> rcs.add(rc), null,
                custom);

        assertEquals(List.of(0, 0, 0, 0), rcs);
        assertEquals(List.of("create 100", "create 101", "create-adv 102", "create-adv-id 77"), b.calls);
        assertEquals(List.of(3, 2, 2), shape(meta(b, 100)), "the ack quorum is the write quorum");
        assertEquals(Map.of(), meta(b, 100).getCustomMetadata());
        assertEquals(List.of(5, 4, 3), shape(meta(b, 101)));
        assertEquals(List.of(4, 3, 2), shape(meta(b, 102)));
        assertEquals(List.of(3, 3, 1), shape(meta(b, 77)));
        assertEquals(List.of("t/n/persistent/x 101 b"), created, "the data ledger the callback API created");
        assertEquals("4 handle(s) open through it: ledger 100 (write), ledger 101 (write), ledger 102 (write), "
                + "ledger 77 (write)", sorted(tracker.openThrough(b, NONE)));
    }

    private static List<Integer> shape(InMemoryBookKeeper.Meta m) {
        return List.of(m.getEnsembleSize(), m.getWriteQuorumSize(), m.getAckQuorumSize());
    }

    /** A tracker's description with its handles in a fixed order (it lists them in no particular order). */
    static String sorted(String described) {
        String prefix = described.substring(0, described.indexOf(": ") + 2);
        List<String> parts = new ArrayList<>(List.of(described.substring(prefix.length()).split(", ")));
        parts.sort(null);
        return prefix + String.join(", ", parts);
    }

    @Test
    void everySyncCreateGoesToTheActiveClusterWithItsArguments() throws Exception {
        Map<String, byte[]> custom = Map.of("k", bytes("v"));

        List<LedgerHandle> handles = List.of(
                routing.createLedger(DigestType.CRC32C, bytes("p")),
                routing.createLedger(4, 3, DigestType.CRC32C, bytes("p")),
                routing.createLedger(5, 4, 3, DigestType.CRC32C, bytes("p")),
                routing.createLedger(5, 4, 2, DigestType.CRC32C, bytes("p"), custom),
                routing.createLedgerAdv(4, 4, 2, DigestType.CRC32C, bytes("p")),
                routing.createLedgerAdv(3, 3, 3, DigestType.CRC32C, bytes("p"), custom),
                routing.createLedgerAdv(77, 2, 2, 1, DigestType.CRC32C, bytes("p"), custom));

        assertEquals(List.of(100L, 101L, 102L, 103L, 104L, 105L, 77L), handles.stream().map(LedgerHandle::getId)
                .toList());
        assertEquals(List.of("create-sync 100", "create-sync 101", "create-sync 102", "create-sync 103",
                "create-adv-sync 104", "create-adv-sync 105", "create-adv-id-sync 77"), b.calls);
        assertEquals(List.of(4, 3, 3), shape(meta(b, 101)));
        assertEquals(List.of(5, 4, 3), shape(meta(b, 102)));
        assertEquals(List.of(5, 4, 2), shape(meta(b, 103)));
        assertTrue(meta(b, 103).getCustomMetadata().containsKey("k"));
        assertEquals(List.of(4, 4, 2), shape(meta(b, 104)));
        assertEquals(List.of(3, 3, 3), shape(meta(b, 105)));
        assertTrue(meta(b, 105).getCustomMetadata().containsKey("k"));
        assertEquals(List.of(2, 2, 1), shape(meta(b, 77)));
        assertTrue(meta(b, 77).getCustomMetadata().containsKey("k"));
        assertTrue(tracker.openThrough(b, NONE).startsWith("7 handle(s) open through it"));
    }

    @Test
    void builderCreatesGoToTheActiveClusterAndTellTheListener() throws Exception {
        Map<String, byte[]> custom = Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, bytes("t/n/persistent/y"));

        assertEquals(9, get(routing.newCreateLedgerOp().withPassword(bytes("p")).withCustomMetadata(custom).makeAdv()
                .withLedgerId(9).execute()).getId());

        assertEquals(List.of("create 9"), b.calls);
        assertEquals(List.of("t/n/persistent/y 9 b"), created);
    }

    @Test
    void everyOpenGoesToTheLedgersOwner() throws Exception {
        c.addClosed(5, bytes("x"));
        ownedBy(5, "c", c);
        List<Integer> rcs = new ArrayList<>();

        routing.asyncOpenLedger(5, DigestType.CRC32C, bytes("secret"), (rc, lh, ctx) -> rcs.add(rc), null);
        routing.asyncOpenLedgerNoRecovery(5, DigestType.CRC32C, bytes("secret"), (rc, lh, ctx) -> rcs.add(rc), null);
        assertSame(c.handle(5), routing.openLedger(5, DigestType.CRC32C, bytes("secret")));
        assertSame(c.handle(5), routing.openLedgerNoRecovery(5, DigestType.CRC32C, bytes("secret")));
        assertEquals(5, get(routing.newOpenLedgerOp().withLedgerId(5).withPassword(bytes("secret"))
                .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).execute()).getId());

        assertEquals(List.of(0, 0), rcs);
        assertEquals(List.of("open-classic 5", "open-classic-norecovery 5", "open-sync 5", "open-sync-norecovery 5",
                "open 5 recovery=false"), c.calls);
        assertEquals(List.of(), b.calls);
    }

    @Test
    void everyDeleteGoesToTheLedgersOwner() throws Exception {
        c.addClosed(5, bytes("x"));
        c.addClosed(6, bytes("x"));
        c.addClosed(7, bytes("x"));
        ownedBy(5, "c", c);
        ownedBy(6, "c", c);
        ownedBy(7, "c", c);
        List<Integer> rcs = new ArrayList<>();
        List<String> pulsarDeleted = new ArrayList<>();
        tracker.onPulsarDeleted((cluster, id) -> pulsarDeleted.add(cluster + " " + id));

        routing.asyncDeleteLedger(5, (rc, ctx) -> rcs.add(rc), null);
        routing.deleteLedger(6);
        get(routing.newDeleteLedgerOp().withLedgerId(7).execute());

        assertEquals(List.of(0), rcs);
        assertEquals(List.of("delete 5", "delete 6", "delete 7"), c.calls);
        assertEquals(List.of("c 5", "c 6", "c 7"), pulsarDeleted);
    }

    @Test
    void metadataAndClosedChecksGoToTheLedgersOwner() throws Exception {
        InMemoryBookKeeper.Meta closed = c.addClosed(5, bytes("x"));
        c.add(6, false, bytes("x"));
        ownedBy(5, "c", c);
        ownedBy(6, "c", c);
        List<String> answers = new ArrayList<>();

        assertSame(closed, get(routing.getLedgerMetadata(5)));
        routing.asyncIsClosed(5, (rc, isClosed, ctx) -> answers.add(rc + " " + isClosed + " " + ctx), "x");
        routing.asyncIsClosed(6, (rc, isClosed, ctx) -> answers.add(rc + " " + isClosed + " " + ctx), "y");
        routing.asyncIsClosed(8, (rc, isClosed, ctx) -> answers.add(rc + " " + isClosed + " " + ctx), "z");
        assertTrue(routing.isClosed(5));
        assertFalse(routing.isClosed(6));

        int noLedger = BKException.Code.NoSuchLedgerExistsOnMetadataServerException;
        assertEquals(List.of("0 true x", "0 false y", noLedger + " false z"), answers,
                "a ledger that cannot be routed: the route's code");
        assertEquals(List.of("metadata 5", "is-closed 5", "is-closed 6", "is-closed-sync 5", "is-closed-sync 6"),
                c.calls);
        assertEquals(noLedger, assertThrows(BKException.class, () -> routing.isClosed(8)).getCode());
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(routing.getLedgerMetadata(8)));
        assertEquals(noLedger, ((BKException) e.getCause()).getCode());
    }

    @Test
    void callsWithoutALedgerIdAnswerForTheActiveCluster() throws Exception {
        assertSame(b.list, routing.newListLedgersOp());
        assertSame(b.ledgerManager, routing.getLedgerManager());
        assertSame(b.factory, routing.getLedgerManagerFactory());
        assertSame(b.driver, routing.getMetadataClientDriver());
        assertSame(b.resolver, routing.getBookieAddressResolver());
        assertSame(b.bookies, routing.getBookieInfo());
        assertSame(b.context, routing.getClientCtx());
        assertSame(b, get(routing.activeClient()));
        assertNotNull(routing.getConf(), "a configuration of its own: the clusters' differ");
        assertSame(pool, routing.getMainWorkerPool());
    }

    @Test
    void withoutAnActiveClientTheyFailSayingSo() {
        active = CompletableFuture.failedFuture(BKException.create(BKException.Code.ZKException));

        IllegalStateException e = assertThrows(IllegalStateException.class, routing::getLedgerManager);
        assertTrue(e.getMessage().startsWith("active bookie cluster has no usable client: "), e.getMessage());
        assertTrue(e.getCause() instanceof BKException);
        assertFalse(Thread.currentThread().isInterrupted());
    }

    @Test
    void anInterruptedWaitForTheActiveClientKeepsTheInterrupt() {
        active = new CompletableFuture<>();
        Thread.currentThread().interrupt();
        try {
            IllegalStateException e = assertThrows(IllegalStateException.class, routing::getLedgerManagerFactory);
            assertTrue(e.getCause() instanceof InterruptedException);
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the caller");
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void closeClosesTheClustersClientsAndThePoolOnce() {
        routing.close();
        routing.close();

        assertEquals(1, closes.get());
        assertTrue(pool.isShutdown());
    }

    @Test
    void aDataLedgerIsOneTaggedWithItsManagedLedgerButNoCursor() {
        assertNull(RoutingBookKeeper.dataLedgerOf(null));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of()));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, new byte[0])));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, bytes("m"),
                RoutingBookKeeper.CURSOR_NAME_PROPERTY, bytes("c"))));
        assertEquals("m", RoutingBookKeeper.dataLedgerOf(Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY,
                bytes("m"))));
    }
}
