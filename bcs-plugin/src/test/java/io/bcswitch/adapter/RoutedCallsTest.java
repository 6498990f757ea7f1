package io.bcswitch.adapter;

import static io.bcswitch.adapter.InMemoryBookKeeper.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.InMemoryBookKeeper.Fault;
import io.bcswitch.routing.LedgerRouter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.LongPredicate;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper.DigestType;
import org.apache.bookkeeper.client.LedgerHandle;
import org.junit.jupiter.api.Test;

/**
 * The routed create, open and delete paths of the routing client, over in-memory clusters: each call reaches the
 * cluster the router names, its handle is tracked there, a route that fails answers with its error code, and a
 * delete lets go of the handles, the original and the migration's copies of the ledger.
 */
class RoutedCallsTest {
    private static final LongPredicate NONE_LONG_LIVED = id -> false;
    private static final Map<String, byte[]> DATA_LEDGER = Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY,
            bytes("t/ns/persistent/x"));

    private final InMemoryBookKeeper a = new InMemoryBookKeeper();
    private final InMemoryBookKeeper b = new InMemoryBookKeeper();
    private final InMemoryBookKeeper c = new InMemoryBookKeeper();
    private final Router router = new Router();
    private final LedgerHandleTracker tracker = new LedgerHandleTracker();
    private final List<String> created = new ArrayList<>();
    private final List<String> pulsarDeleted = new ArrayList<>();
    /** the handles the tests hand to the tracker: it holds them weakly, and one collected would count as closed */
    private final List<Object> held = new ArrayList<>();

    RoutedCallsTest() {
        tracker.onPulsarDeleted((cluster, id) -> pulsarDeleted.add(cluster + " " + id));
    }

    /** Routes creates to {@code active}, each ledger to its owner, and answers the relocation questions. */
    private static final class Router implements LedgerRouter {
        volatile CompletableFuture<Target> active;
        final Map<Long, CompletableFuture<Target>> owners = new ConcurrentHashMap<>();
        volatile CompletableFuture<Optional<Target>> original = CompletableFuture.completedFuture(Optional.empty());
        volatile CompletableFuture<List<Target>> holders = CompletableFuture.completedFuture(List.of());
        /** the ledger ids routes were asked for */
        final List<Long> asked = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<Target> forCreate() {
            return active;
        }

        @Override
        public CompletableFuture<Target> forLedger(long ledgerId) {
            asked.add(ledgerId);
            return owners.getOrDefault(ledgerId, CompletableFuture.failedFuture(
                    BKException.create(BKException.Code.NoSuchLedgerExistsOnMetadataServerException)));
        }

        @Override
        public CompletableFuture<Optional<Target>> originalOf(long ledgerId) {
            return original;
        }

        @Override
        public CompletableFuture<List<Target>> copyHoldersOf(long ledgerId) {
            return holders;
        }

        /** the read timeout of every cluster */
        volatile long readTimeoutMillis;

        @Override
        public long readTimeoutMillis(String cluster) {
            return readTimeoutMillis;
        }
    }

    private static CompletableFuture<LedgerRouter.Target> on(String cluster, InMemoryBookKeeper client) {
        return CompletableFuture.completedFuture(new LedgerRouter.Target(cluster, client));
    }

    /** What a callback was answered with. */
    record Answer(int rc, LedgerHandle handle, Object ctx) {
    }

    private String openThrough(InMemoryBookKeeper client) {
        return tracker.openThrough(client, NONE_LONG_LIVED);
    }

    // ---- RouteLookups ----

    @Test
    void aSyncRouteIsTheTargetOrBookKeepersError() throws Exception {
        LedgerRouter.Target t = new LedgerRouter.Target("b", b);
        assertSame(t, RouteLookups.sync(CompletableFuture.completedFuture(t)));

        BKException bk = BKException.create(BKException.Code.ZKException);
        assertSame(bk, assertThrows(BKException.class, () -> RouteLookups.sync(CompletableFuture.failedFuture(bk))));

        org.apache.bookkeeper.client.api.BKException api = new org.apache.bookkeeper.client.api.BKException(
                BKException.Code.TooManyRequestsException);
        assertEquals(BKException.Code.TooManyRequestsException, assertThrows(BKException.class,
                () -> RouteLookups.sync(CompletableFuture.failedFuture(api))).getCode());

        assertEquals(BKException.Code.UnexpectedConditionException, assertThrows(BKException.class,
                () -> RouteLookups.sync(CompletableFuture.failedFuture(new IllegalStateException("x")))).getCode());
    }

    @Test
    void aRouteFailureIsTheReturnCodeOfItsBookKeeperError() {
        assertEquals(BKException.Code.ZKException,
                RouteLookups.rc(new CompletionException(BKException.create(BKException.Code.ZKException))));
        assertEquals(BKException.Code.TimeoutException, RouteLookups.rc(new org.apache.bookkeeper.client.api
                .BKException(BKException.Code.TimeoutException)));
        assertEquals(BKException.Code.UnexpectedConditionException,
                RouteLookups.rc(new CompletionException(new IllegalStateException("x"))));
    }

    // ---- RoutedCreates ----

    private RoutedCreates creates(RoutingBookKeeper.CreateListener listener) {
        return new RoutedCreates(router, tracker, listener);
    }

    private RoutedCreates creates() {
        return creates((ml, id, cluster) -> created.add(ml + " " + id + " " + cluster));
    }

    @Test
    void aCreateGoesToTheActiveClusterAndItsHandleIsTracked() {
        router.active = on("b", b);
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx", DATA_LEDGER);

        assertEquals(List.of(new Answer(BKException.Code.OK, b.handle(100), "ctx")), answers);
        assertEquals(List.of("create 100"), b.calls);
        assertEquals(List.of(), a.calls);
        assertEquals("1 handle(s) open through it: ledger 100 (write)", openThrough(b));
        assertEquals(List.of("t/ns/persistent/x 100 b"), created, "a data ledger is told to the listener");
        assertEquals(0, tracker.createsOutside("a"));
    }

    @Test
    void aCreateIsInFlightUntilItAnswers() {
        router.active = on("b", b);
        b.deferCreates = true;
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> {
                    assertEquals(0, tracker.createsOutside("a"), "done before the caller hears of it");
                    assertEquals("1 handle(s) open through it: ledger 100 (write)", openThrough(b),
                            "tracked before the caller hears of it");
                    answers.add(new Answer(rc, lh, ctx));
                }, null, Map.of());

        assertEquals(1, tracker.createsOutside("a"));
        assertEquals(0, tracker.createsOutside("b"));
        b.deferredCreates.forEach(Runnable::run);
        assertEquals(1, answers.size());
        assertEquals(0, tracker.createsOutside("a"));
        assertEquals(List.of(), created, "not a data ledger");
    }

    @Test
    void aCreateThatFailsIsNotTrackedNorTold() {
        router.active = on("b", b);
        b.createFault = new Fault(BKException.Code.NotEnoughBookiesException);
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx", DATA_LEDGER);

        assertEquals(List.of(new Answer(BKException.Code.NotEnoughBookiesException, null, "ctx")), answers);
        assertNull(openThrough(b));
        assertEquals(List.of(), created);
        assertEquals(0, tracker.createsOutside("a"));
    }

    @Test
    void aCreateThatCannotBeRoutedAnswersWithTheRoutesCode() {
        router.active = CompletableFuture.failedFuture(BKException.create(BKException.Code.ZKException));
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx", DATA_LEDGER);

        assertEquals(List.of(new Answer(BKException.Code.ZKException, null, "ctx")), answers);
        assertEquals(List.of(), b.calls);
        assertEquals(0, tracker.createsOutside("x"), "never counted as in flight");
    }

    @Test
    void aCursorLedgerOrACreateWithoutListenerIsNotTold() {
        router.active = on("b", b);
        Map<String, byte[]> cursor = new HashMap<>(DATA_LEDGER);
        cursor.put(RoutingBookKeeper.CURSOR_NAME_PROPERTY, bytes("sub"));
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), null, cursor);
        creates(null).asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), null, DATA_LEDGER);

        assertEquals(List.of(), created);
        assertEquals(2, answers.size());
        assertEquals(BKException.Code.OK, answers.get(1).rc());
    }

    @Test
    void aListenerThatThrowsDoesNotStopTheCreate() {
        router.active = on("b", b);
        List<Answer> answers = new ArrayList<>();

        creates((ml, id, cluster) -> {
            throw new IllegalStateException("listener down");
        }).asyncCreateLedger(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), null, DATA_LEDGER);

        assertEquals(List.of(new Answer(BKException.Code.OK, b.handle(100), null)), answers);
    }

    @Test
    void createdTellsTheListenerOfDataLedgersOnly() {
        creates().created("c", DATA_LEDGER, 9);
        creates().created("c", Map.of(), 10);
        creates(null).created("c", DATA_LEDGER, 11);

        assertEquals(List.of("t/ns/persistent/x 9 c"), created);
    }

    @Test
    void advancedCreatesGoToTheActiveClusterAndAreTrackedButNotTold() {
        router.active = on("c", c);
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedgerAdv(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "x", DATA_LEDGER);
        creates().asyncCreateLedgerAdv(55, 3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "y", DATA_LEDGER);

        assertEquals(List.of(new Answer(BKException.Code.OK, c.handle(100), "x"),
                new Answer(BKException.Code.OK, c.handle(55), "y")), answers);
        assertEquals(List.of("create-adv 100", "create-adv-id 55"), c.calls);
        assertEquals("2 handle(s) open through it: ledger 100 (write), ledger 55 (write)",
                RoutingBookKeeperTest.sorted(openThrough(c)));
        assertEquals(List.of(), created);
    }

    @Test
    void advancedCreatesThatCannotBeRoutedAnswerWithTheRoutesCode() {
        router.active = CompletableFuture.failedFuture(BKException.create(BKException.Code.MetaStoreException));
        List<Answer> answers = new ArrayList<>();

        creates().asyncCreateLedgerAdv(3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "x", Map.of());
        creates().asyncCreateLedgerAdv(55, 3, 2, 2, DigestType.CRC32C, bytes("p"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "y", Map.of());

        assertEquals(List.of(new Answer(BKException.Code.MetaStoreException, null, "x"),
                new Answer(BKException.Code.MetaStoreException, null, "y")), answers);
    }


    @Test
    void aSyncCreateRunsOnTheActiveClusterCountedInFlightAndTracked() throws Exception {
        router.active = on("b", b);

        LedgerHandle lh = creates().create(client -> {
            assertSame(b, client);
            assertEquals(1, tracker.createsOutside("a"), "in flight while it runs");
            return b.handle(42);
        });

        assertSame(b.handle(42), lh);
        assertEquals(0, tracker.createsOutside("a"));
        assertEquals("1 handle(s) open through it: ledger 42 (write)", openThrough(b));
    }

    @Test
    void aSyncCreateThatFailsIsNoLongerInFlight() {
        router.active = on("b", b);

        assertThrows(BKException.class, () -> creates().create(client -> {
            throw BKException.create(BKException.Code.NotEnoughBookiesException);
        }));
        assertEquals(0, tracker.createsOutside("a"));
        assertNull(openThrough(b));
    }

    @Test
    void aSyncCreateThatCannotBeRoutedThrowsTheRoutesError() {
        router.active = CompletableFuture.failedFuture(BKException.create(BKException.Code.ZKException));

        assertEquals(BKException.Code.ZKException, assertThrows(BKException.class,
                () -> creates().create(client -> b.handle(1))).getCode());
    }

    // ---- RoutedOpens ----

    private RoutedOpens opens() {
        return new RoutedOpens(router, tracker);
    }

    @Test
    void anOpenGoesToTheLedgersOwnerAndItsHandleIsTracked() {
        b.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        List<Answer> answers = new ArrayList<>();

        opens().asyncOpenLedger(5, DigestType.CRC32C, bytes("secret"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx");
        opens().asyncOpenLedgerNoRecovery(5, DigestType.CRC32C, bytes("secret"),
                (rc, lh, ctx) -> {
                    assertEquals("2 handle(s) open through it: ledger 5 (read), ledger 5 (read)", openThrough(b),
                            "tracked before the caller hears of it");
                    answers.add(new Answer(rc, lh, ctx));
                }, "ctx2");

        assertEquals(List.of(new Answer(BKException.Code.OK, b.handle(5), "ctx"),
                new Answer(BKException.Code.OK, b.handle(5), "ctx2")), answers);
        assertEquals(List.of("open-classic 5", "open-classic-norecovery 5"), b.calls);
    }

    @Test
    void aFailedOpenAnswersWithItsCodeAndTracksNothing() {
        router.owners.put(5L, on("b", b));
        b.openFaults.put(5L, new Fault(BKException.Code.BookieHandleNotAvailableException));
        List<Answer> answers = new ArrayList<>();

        opens().asyncOpenLedger(5, DigestType.CRC32C, bytes("secret"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx");
        opens().asyncOpenLedgerNoRecovery(5, DigestType.CRC32C, bytes("secret"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx");

        assertEquals(List.of(new Answer(BKException.Code.BookieHandleNotAvailableException, null, "ctx"),
                new Answer(BKException.Code.BookieHandleNotAvailableException, null, "ctx")), answers);
        assertNull(openThrough(b));
    }

    @Test
    void anOpenThatCannotBeRoutedAnswersWithTheRoutesCode() {
        List<Answer> answers = new ArrayList<>();

        opens().asyncOpenLedger(6, DigestType.CRC32C, bytes("secret"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx");
        opens().asyncOpenLedgerNoRecovery(6, DigestType.CRC32C, bytes("secret"),
                (rc, lh, ctx) -> answers.add(new Answer(rc, lh, ctx)), "ctx");

        int noLedger = BKException.Code.NoSuchLedgerExistsOnMetadataServerException;
        assertEquals(List.of(new Answer(noLedger, null, "ctx"), new Answer(noLedger, null, "ctx")), answers);
    }

    @Test
    void syncOpensGoToTheOwnerAndAreTracked() throws Exception {
        c.addClosed(5, bytes("x"));
        router.owners.put(5L, on("c", c));

        assertSame(c.handle(5), opens().openLedger(5, DigestType.CRC32C, bytes("secret")));
        assertEquals("1 handle(s) open through it: ledger 5 (read)", openThrough(c));
        assertSame(c.handle(5), opens().openLedgerNoRecovery(5, DigestType.CRC32C, bytes("secret")));
        assertEquals(List.of("open-sync 5", "open-sync-norecovery 5"), c.calls);
        assertEquals("2 handle(s) open through it: ledger 5 (read), ledger 5 (read)", openThrough(c));
    }

    @Test
    void syncOpensThatCannotBeRoutedOrFailThrowBookKeepersError() {
        int noLedger = BKException.Code.NoSuchLedgerExistsOnMetadataServerException;
        assertEquals(noLedger, assertThrows(BKException.class,
                () -> opens().openLedger(6, DigestType.CRC32C, bytes("secret"))).getCode());
        assertEquals(noLedger, assertThrows(BKException.class,
                () -> opens().openLedgerNoRecovery(6, DigestType.CRC32C, bytes("secret"))).getCode());
        router.owners.put(6L, on("c", c));
        assertEquals(noLedger, assertThrows(BKException.class,
                () -> opens().openLedger(6, DigestType.CRC32C, bytes("secret"))).getCode());
        assertNull(openThrough(c));
    }

    // ---- RoutedDeletes ----

    private RoutedDeletes deletes() {
        return new RoutedDeletes(router, tracker);
    }

    /** A handle on {@code id} tracked for {@code client}'s cluster: whether it is still open tells a delete was seen.
     */
    private Object tracked(String cluster, InMemoryBookKeeper client, long id) {
        Object handle = new Object();
        held.add(handle);
        tracker.opened(cluster, client, id, handle, false, false);
        return handle;
    }

    @Test
    void aDeleteGoesToTheOwnerAndEndsItsHandles() {
        b.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        tracked("b", b, 5);
        List<Answer> answers = new ArrayList<>();

        deletes().asyncDeleteLedger(5, (rc, ctx) -> answers.add(new Answer(rc, null, ctx)), "ctx");

        assertEquals(List.of(new Answer(BKException.Code.OK, null, "ctx")), answers);
        assertTrue(b.ledger(5).isEmpty());
        assertNull(openThrough(b), "its handles are done with");
        assertEquals(List.of("b 5"), pulsarDeleted);
    }

    @Test
    void aDeleteThatFailsKeepsItsHandles() {
        b.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        b.deleteFaults.put(5L, new Fault(BKException.Code.ZKException));
        tracked("b", b, 5);
        List<Answer> answers = new ArrayList<>();

        deletes().asyncDeleteLedger(5, (rc, ctx) -> answers.add(new Answer(rc, null, ctx)), "ctx");

        assertEquals(List.of(new Answer(BKException.Code.ZKException, null, "ctx")), answers);
        assertEquals("1 handle(s) open through it: ledger 5 (read)", openThrough(b));
        assertEquals(List.of(), pulsarDeleted);
    }

    @Test
    void aDeleteThatCannotBeRoutedAnswersWithTheRoutesCode() {
        List<Answer> answers = new ArrayList<>();

        deletes().asyncDeleteLedger(6, (rc, ctx) -> answers.add(new Answer(rc, null, ctx)), "ctx");

        assertEquals(List.of(new Answer(BKException.Code.NoSuchLedgerExistsOnMetadataServerException, null, "ctx")),
                answers);
        assertEquals(List.of(), pulsarDeleted);
    }

    @Test
    void aSyncDeleteGoesToTheOwner() throws Exception {
        c.addClosed(5, bytes("x"));
        router.owners.put(5L, on("c", c));

        deletes().deleteLedger(5);

        assertTrue(c.ledger(5).isEmpty());
        assertEquals(List.of("c 5"), pulsarDeleted);
        assertEquals(BKException.Code.NoSuchLedgerExistsOnMetadataServerException,
                assertThrows(BKException.class, () -> deletes().deleteLedger(5)).getCode());
        assertEquals(List.of("c 5"), pulsarDeleted, "a failed delete is not Pulsar's delete");
        assertThrows(BKException.class, () -> deletes().deleteLedger(6));
    }

    @Test
    void aDeletedMigratedLedgerTakesItsOriginalAndTheMigrationsCopiesAlong() {
        // home on c; original on a; a copy the migration left on b, and on a fourth cluster a ledger not its copy
        InMemoryBookKeeper d = new InMemoryBookKeeper();
        c.addClosed(5, bytes("x"));
        a.addClosed(5, bytes("x"));
        Map<String, byte[]> marked = new HashMap<>(DATA_LEDGER);
        marked.put(BookKeeperLedgerCopier.COPY_OF_KEY, bytes("a"));
        b.put(new InMemoryBookKeeper.Meta(5, 3, 2, 2, org.apache.bookkeeper.client.api.DigestType.CRC32C,
                bytes("secret"), marked, false, -1, 0, 1, 1), true, bytes("x"));
        d.addClosed(5, bytes("x"));
        router.owners.put(5L, on("c", c));
        router.original = CompletableFuture.completedFuture(Optional.of(new LedgerRouter.Target("a", a)));
        InMemoryBookKeeper e = new InMemoryBookKeeper(); // a holder where it is gone already
        router.holders = CompletableFuture.completedFuture(List.of(new LedgerRouter.Target("b", b),
                new LedgerRouter.Target("d", d), new LedgerRouter.Target("e", e)));
        tracked("a", a, 5);
        tracked("b", b, 5);
        tracked("d", d, 5);
        List<Answer> answers = new ArrayList<>();

        deletes().asyncDeleteLedger(5, (rc, ctx) -> answers.add(new Answer(rc, null, ctx)), null);

        assertEquals(List.of(new Answer(BKException.Code.OK, null, null)), answers);
        assertTrue(c.ledger(5).isEmpty());
        assertTrue(a.ledger(5).isEmpty(), "the original is deleted");
        assertNull(openThrough(a), "and its handles are done with");
        assertTrue(b.ledger(5).isEmpty(), "the migration's copy is deleted");
        assertNull(openThrough(b));
        assertTrue(d.ledger(5).isPresent(), "a ledger not marked as a copy is never ours to delete");
        assertEquals("1 handle(s) open through it: ledger 5 (read)", openThrough(d));
        assertEquals(List.of("metadata 5"), e.calls);
    }

    @Test
    void deletesOfTheOriginalAndCopiesThatFailLeaveThemToCleanup() {
        a.addClosed(5, bytes("x"));
        a.deleteFaults.put(5L, new Fault(BKException.Code.ZKException));
        Map<String, byte[]> marked = Map.of(BookKeeperLedgerCopier.COPY_OF_KEY, bytes("a"));
        b.put(new InMemoryBookKeeper.Meta(5, 3, 2, 2, org.apache.bookkeeper.client.api.DigestType.CRC32C,
                bytes("secret"), marked, false, -1, 0, 1, 1), true, bytes("x"));
        b.deleteFaults.put(5L, new Fault(BKException.Code.ZKException));
        router.original = CompletableFuture.completedFuture(Optional.of(new LedgerRouter.Target("a", a)));
        router.holders = CompletableFuture.completedFuture(List.of(new LedgerRouter.Target("b", b)));
        tracked("a", a, 5);
        tracked("b", b, 5);

        RoutedDeletes.deleted(router, tracker, "c", 5);

        assertTrue(a.ledger(5).isPresent() && b.ledger(5).isPresent());
        assertEquals("1 handle(s) open through it: ledger 5 (read)", openThrough(a), "not deleted: still open");
        assertEquals("1 handle(s) open through it: ledger 5 (read)", openThrough(b), "not deleted: still open");
        assertEquals(List.of("c 5"), pulsarDeleted);
    }

    @Test
    void copyHoldersThatCannotBeLookedUpStillLetTheOriginalGo() {
        a.addClosed(5, bytes("x"));
        router.original = CompletableFuture.completedFuture(Optional.of(new LedgerRouter.Target("a", a)));
        router.holders = CompletableFuture.failedFuture(new IllegalStateException("registry away"));

        RoutedDeletes.deleted(router, tracker, "c", 5);

        assertTrue(a.ledger(5).isEmpty());
    }

    @Test
    void aLedgerNeverMovedHasNothingElseToDelete() {
        a.addClosed(5, bytes("x"));

        RoutedDeletes.deleted(router, tracker, "c", 5);

        assertTrue(a.ledger(5).isPresent());
        assertEquals(List.of(), a.calls);
        assertEquals(List.of("c 5"), pulsarDeleted);
    }

    // ---- what the operator reads in the broker's log ----

    @Test
    void aFailedOpenIsLoggedWithItsLedgerAndClusterAndASuccessfulOneIsNot() {
        b.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        router.owners.put(6L, on("b", b));

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(RoutingBookKeeper.class)) {
            opens().asyncOpenLedger(5, DigestType.CRC32C, bytes("secret"), (rc, lh, ctx) -> { }, null);
            assertEquals(List.of(), log.messages(), "a successful open is not worth a line");
            opens().asyncOpenLedgerNoRecovery(6, DigestType.CRC32C, bytes("secret"), (rc, lh, ctx) -> { }, null);
            logged = log.messages();
        }

        assertEquals(1, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("bookie-cluster=b ledger=6 open (no recovery) failed: "), logged.get(0));
    }

    @Test
    void theCopiesOfADeletedLedgerAreLoggedOnlyWhenDeletedOrLeftToCleanup() {
        // on b a copy that is deleted, on d a ledger that is no copy, on e nothing, on f a copy whose delete fails
        InMemoryBookKeeper d = new InMemoryBookKeeper();
        InMemoryBookKeeper e = new InMemoryBookKeeper();
        InMemoryBookKeeper f = new InMemoryBookKeeper();
        Map<String, byte[]> marked = Map.of(BookKeeperLedgerCopier.COPY_OF_KEY, bytes("a"));
        for (InMemoryBookKeeper copyHolder : List.of(b, f)) {
            copyHolder.put(new InMemoryBookKeeper.Meta(5, 3, 2, 2, org.apache.bookkeeper.client.api.DigestType.CRC32C,
                    bytes("secret"), marked, false, -1, 0, 1, 1), true, bytes("x"));
        }
        f.deleteFaults.put(5L, new Fault(BKException.Code.ZKException));
        d.addClosed(5, bytes("x"));
        router.holders = CompletableFuture.completedFuture(List.of(new LedgerRouter.Target("b", b),
                new LedgerRouter.Target("d", d), new LedgerRouter.Target("e", e), new LedgerRouter.Target("f", f)));

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(RoutingBookKeeper.class)) {
            RoutedDeletes.deleted(router, tracker, "c", 5);
            logged = log.messages();
        }

        assertEquals(List.of("bookie-cluster=b ledger=5 copy of a deleted migrated ledger deleted"),
                logged.stream().filter(m -> m.startsWith("bookie-cluster=b")).toList());
        assertEquals(List.of(), logged.stream().filter(m -> m.startsWith("bookie-cluster=d")
                || m.startsWith("bookie-cluster=e")).toList(), "no copy there: nothing to say");
        List<String> onF = logged.stream().filter(m -> m.startsWith("bookie-cluster=f")).toList();
        assertEquals(1, onF.size(), logged.toString());
        assertTrue(onF.get(0).startsWith("bookie-cluster=f ledger=5 copy of a deleted migrated ledger not deleted "
                + "(cleanup will): "), onF.get(0));
        assertEquals(2, logged.size(), logged.toString());
    }

    // ---- RecordedOpBuilder: the builder API's calls, routed at execute ----

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(io.bcswitch.concurrent.TestWaits.SECONDS, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Test
    void aBuilderOpenGoesToTheOwnerAndItsHandleIsTrackedUntilClosed() throws Exception {
        b.addClosed(5, bytes("x"), bytes("yy"));
        router.owners.put(5L, on("b", b));

        org.apache.bookkeeper.client.api.OpenBuilder open = RecordedOpBuilder.open(router, tracker);
        org.apache.bookkeeper.client.api.ReadHandle h = await(open.withLedgerId(4).withLedgerId(5)
                .withRecovery(false).withPassword(bytes("secret"))
                .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).execute());

        assertEquals(List.of(5L), router.asked, "the last id set is the one routed");
        assertEquals(5, h.getId());
        assertEquals(1, h.getLastAddConfirmed());
        assertEquals("ReadHandle[bookie-cluster=b ledger=5]", h.toString(), "wrapped: its failed reads name b");
        assertEquals(List.of("open 5 recovery=false"), b.calls);
        assertEquals("1 handle(s) open through it: ledger 5 (read)", openThrough(b));
        await(h.closeAsync());
        assertNull(openThrough(b), "its close is seen");
        assertTrue(b.calls.contains("close 5"), "and passed on");
        assertTrue(open.toString().startsWith("RecordedOpBuilder["), open.toString());
        assertTrue(open.equals(open) && !open.equals(RecordedOpBuilder.open(router, tracker)));
        assertEquals(System.identityHashCode(open), open.hashCode());
    }

    @Test
    void aBuilderOpenWithoutIdOrRouteFailsWithTheRoutesError() {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> await(RecordedOpBuilder.open(router, tracker).execute()));
        assertEquals(List.of(-1L), router.asked, "no id set: -1");
        assertEquals(BKException.Code.NoSuchLedgerExistsOnMetadataServerException,
                ((BKException) e.getCause()).getCode());
    }

    @Test
    void aBuilderOpenThatFailsIsLoggedWithItsClusterAndLedger() {
        router.owners.put(5L, on("b", b));

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(RecordedOpBuilder.class)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(RecordedOpBuilder
                    .open(router, tracker).withLedgerId(5).withPassword(bytes("secret")).execute()));
            assertTrue(e.getCause() instanceof BKException);
            logged = log.messages();
        }

        assertEquals(1, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("bookie-cluster=b ledger=5 open failed: "), logged.get(0));
        assertNull(openThrough(b));
    }

    @Test
    void aBuilderDeleteGoesToTheOwnerAndLetsGoOfTheLedger() throws Exception {
        b.addClosed(5, bytes("x"));
        a.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        router.original = CompletableFuture.completedFuture(Optional.of(new LedgerRouter.Target("a", a)));

        await(RecordedOpBuilder.delete(router, tracker).withLedgerId(5).execute());

        assertTrue(b.ledger(5).isEmpty());
        assertTrue(a.ledger(5).isEmpty(), "the original of a migrated ledger goes too");
        assertEquals(List.of("b 5"), pulsarDeleted);
    }

    @Test
    void aBuilderDeleteThatFailsLetsGoOfNothing() {
        b.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        b.deleteFaults.put(5L, new Fault(BKException.Code.ZKException));

        assertThrows(ExecutionException.class,
                () -> await(RecordedOpBuilder.delete(router, tracker).withLedgerId(5).execute()));
        assertEquals(List.of(), pulsarDeleted);
    }

    @Test
    void aBuilderCreateGoesToTheActiveClusterIsTrackedAndTold() throws Exception {
        router.active = on("b", b);
        List<String> told = new ArrayList<>();
        Map<String, byte[]> later = Map.of("k", bytes("v"));

        org.apache.bookkeeper.client.api.WriteAdvHandle w = await(RecordedOpBuilder.create(router, tracker,
                        (cluster, custom, id) -> told.add(cluster + " " + new String(custom.get("k"),
                                java.nio.charset.StandardCharsets.UTF_8) + " " + id))
                .withEnsembleSize(3).withWriteQuorumSize(2).withAckQuorumSize(2).withPassword(bytes("p"))
                .withCustomMetadata(DATA_LEDGER).withCustomMetadata(later)
                .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).makeAdv().withLedgerId(77)
                .execute());

        held.add(w);
        assertEquals(77, w.getId());
        assertEquals(List.of("b v 77"), told, "with the custom metadata last given");
        assertEquals(3, b.ledger(77).orElseThrow().meta.getEnsembleSize());
        assertEquals("1 handle(s) open through it: ledger 77 (write)", openThrough(b));
        assertEquals(0, tracker.createsOutside("a"));
    }

    @Test
    void aBuilderCreateWithoutCustomMetadataIsToldWithNone() throws Exception {
        router.active = on("b", b);
        List<Object> told = new ArrayList<>();

        await(RecordedOpBuilder.create(router, tracker, (cluster, custom, id) -> told.add(custom == null))
                .withPassword(bytes("p")).makeAdv().withLedgerId(77).execute());

        assertEquals(List.of(true), told);
    }

    @Test
    void aBuilderCreateThatFailsIsLoggedAndNoLongerInFlight() {
        router.active = on("b", b);
        List<Object> told = new ArrayList<>();

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(RecordedOpBuilder.class)) {
            b.createFault = new Fault(BKException.Code.NotEnoughBookiesException);
            assertThrows(ExecutionException.class, () -> await(RecordedOpBuilder.create(router, tracker,
                    (cluster, custom, id) -> told.add(id)).withPassword(bytes("p")).makeAdv().withLedgerId(77)
                    .execute()));
            b.createFault = null;
            // a plain create, which this in-memory cluster refuses (it makes ledgers with an id only)
            assertThrows(ExecutionException.class, () -> await(RecordedOpBuilder.create(router, tracker,
                    (cluster, custom, id) -> told.add(id)).withPassword(bytes("p")).execute()));
            logged = log.messages();
        }

        assertEquals(List.of(), told);
        assertEquals(0, tracker.createsOutside("a"));
        assertNull(openThrough(b));
        assertEquals(2, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("bookie-cluster=b ledger=77 create failed: "), logged.get(0));
        assertTrue(logged.get(1).startsWith("bookie-cluster=b ledger=(new) create failed: "), logged.get(1));
    }

    @Test
    void aBuilderCreateIsInFlightUntilItAnswers() throws Exception {
        CompletableFuture<LedgerRouter.Target> route = new CompletableFuture<>();
        router.active = route;
        InMemoryBookKeeper slow = new InMemoryBookKeeper() {
            @Override
            public org.apache.bookkeeper.client.api.CreateBuilder newCreateLedgerOp() {
                assertEquals(1, tracker.createsOutside("a"), "counted before it is made");
                return super.newCreateLedgerOp();
            }
        };

        CompletableFuture<org.apache.bookkeeper.client.api.WriteAdvHandle> w = RecordedOpBuilder.create(router,
                tracker, (cluster, custom, id) -> { }).withPassword(bytes("p")).makeAdv().withLedgerId(3).execute();
        assertEquals(0, tracker.createsOutside("a"), "not before it is routed");
        route.complete(new LedgerRouter.Target("slow", slow));

        assertEquals(3, await(w).getId());
        assertEquals(0, tracker.createsOutside("a"));
    }

    @Test
    void aBuilderOpenedHandleIsBoundedByItsClustersReadTimeout() throws Exception {
        b.addClosed(5, bytes("x"));
        router.owners.put(5L, on("b", b));
        router.readTimeoutMillis = 50;
        b.pendingReads = true; // the cluster no longer answers

        org.apache.bookkeeper.client.api.ReadHandle h = await(RecordedOpBuilder.open(router, tracker)
                .withLedgerId(5).withPassword(bytes("secret"))
                .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).execute());

        ExecutionException e = assertThrows(ExecutionException.class, () -> await(h.readAsync(0, 0)));
        assertEquals(BKException.Code.TimeoutException, ((BKException) e.getCause()).getCode());
    }

    @Test
    void aFailureOfLedgerZeroNamesLedgerZero() {
        router.owners.put(0L, on("b", b));

        List<String> logged;
        try (io.bcswitch.migration.LogCapture log = new io.bcswitch.migration.LogCapture(RecordedOpBuilder.class)) {
            assertThrows(ExecutionException.class,
                    () -> await(RecordedOpBuilder.delete(router, tracker).withLedgerId(0).execute()));
            logged = log.messages();
        }

        assertEquals(1, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("bookie-cluster=b ledger=0 delete failed: "), logged.get(0));
    }

    @Test
    void aClientThatCannotMakeABuilderFailsTheOperation() {
        IllegalStateException closed = new IllegalStateException("client closed");
        InMemoryBookKeeper closing = new InMemoryBookKeeper() {
            @Override
            public org.apache.bookkeeper.client.api.DeleteBuilder newDeleteLedgerOp() {
                throw closed;
            }
        };
        router.owners.put(5L, on("b", closing));

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> await(RecordedOpBuilder.delete(router, tracker).withLedgerId(5).execute()));
        assertSame(closed, e.getCause());
        assertEquals(List.of(), pulsarDeleted);
    }
}
