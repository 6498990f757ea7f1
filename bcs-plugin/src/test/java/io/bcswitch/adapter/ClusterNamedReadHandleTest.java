package io.bcswitch.adapter;

import static io.bcswitch.concurrent.TestWaits.get;
import static io.bcswitch.adapter.InMemoryBookKeeper.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.InMemoryBookKeeper.Fault;
import io.bcswitch.adapter.InMemoryBookKeeper.Meta;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.migration.LogCapture;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.junit.jupiter.api.Test;

/**
 * The read handles managed ledgers get: everything passed through unchanged, a failed read logged with its cluster
 * and ledger (repeats within the log interval counted, not logged), and their close seen.
 */
class ClusterNamedReadHandleTest {
    private final InMemoryBookKeeper cluster = new InMemoryBookKeeper();
    private final AtomicInteger closes = new AtomicInteger();


    private ReadHandle opened(long readTimeoutMillis) throws Exception {
        Meta m = cluster.addClosed(5, bytes("a"), bytes("bb"));
        return ClusterNamedReadHandle.wrap(get(LedgerCalls.open(cluster, 5, m, false)), "b", closes::incrementAndGet,
                () -> readTimeoutMillis);
    }

    @Test
    void readsAndEverythingElseArePassedThrough() throws Exception {
        ReadHandle h = opened(0);

        try (LedgerEntries es = get(h.readAsync(0, 1))) {
            assertArrayEquals(bytes("bb"), es.getEntry(1).getEntryBytes());
        }
        assertEquals(1, h.getLastAddConfirmed());
        assertEquals(5, h.getId());
        assertEquals(3, h.getLength());
        assertEquals(0, closes.get(), "nothing but a close counts as one");
        assertEquals("ReadHandle[bookie-cluster=b ledger=5]", h.toString());
        assertTrue(h.equals(h));
        assertEquals(System.identityHashCode(h), h.hashCode());
    }

    @Test
    void aReadBoundedInTimeIsPassedOnAsItAnswers() throws Exception {
        ReadHandle h = opened(60_000);

        try (LedgerEntries es = get(h.readAsync(1, 1))) {
            assertArrayEquals(bytes("bb"), es.getEntry(1).getEntryBytes());
        }
        cluster.readFaults.put(0L, new Fault(BKException.Code.NoSuchEntryException));
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(h.readAsync(0, 0)));
        assertInstanceOf(BKException.BKNoSuchEntryException.class, e.getCause(),
                "BookKeeper's own error, not a timeout");
    }

    @Test
    void bothClosesAreSeenAndPassedOn() throws Exception {
        ReadHandle h = opened(0);

        get(h.closeAsync());
        h.close();

        assertEquals(2, closes.get());
        assertEquals(2, cluster.calls.stream().filter("close 5"::equals).count());
    }

    @Test
    void aFailedReadIsLoggedWithItsClusterAndLedgerAndRepeatsAreCounted() throws Exception {
        ReadHandle h = opened(0);
        cluster.readFaults.put(1L, new Fault(BKException.Code.BookieHandleNotAvailableException));

        List<String> logged;
        try (LogCapture log = new LogCapture(ClusterNamedReadHandle.class)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> get(h.readAsync(0, 1)));
            assertInstanceOf(BKException.BKBookieHandleNotAvailableException.class, e.getCause(),
                    "the error itself is passed on");
            // a dispatcher retries at once: within the log interval, only counted
            assertThrows(ExecutionException.class, () -> get(h.readAsync(1, 1)));
            get(h.readAsync(0, 0)).close();
            logged = log.messages();
        }

        assertEquals(List.of("bookie-cluster=b ledger=5 readAsync[0, 1] failed: "
                + BKException.create(BKException.Code.BookieHandleNotAvailableException)), logged);
    }

    @Test
    void aReadThatThrowsIsLoggedAndRethrownAsItIs() throws Exception {
        ReadHandle h = opened(0);

        List<String> logged;
        try (LogCapture log = new LogCapture(ClusterNamedReadHandle.class)) {
            assertThrows(UnsupportedOperationException.class, () -> h.readLastAddConfirmedAndEntryAsync(0, 1, false));
            logged = log.messages();
        }

        assertEquals(1, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("bookie-cluster=b ledger=5 readLastAddConfirmedAndEntryAsync[0, 1, false] "
                + "failed: java.lang.UnsupportedOperationException"), logged.get(0));
    }

    @Test
    void aCallOtherThanAReadThatThrowsIsNotLogged() {
        ReadHandle failing = (ReadHandle) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ReadHandle.class}, (proxy, m, args) -> switch (m.getName()) {
                    case "getId" -> 5L;
                    case "getLength" -> throw new IllegalStateException("no length");
                    default -> null;
                });
        ReadHandle h = ClusterNamedReadHandle.wrap(failing, "b", closes::incrementAndGet);

        List<String> logged;
        try (LogCapture log = new LogCapture(ClusterNamedReadHandle.class)) {
            assertEquals("no length", assertThrows(IllegalStateException.class, h::getLength).getMessage());
            logged = log.messages();
        }

        assertEquals(List.of(), logged);
    }

    @Test
    void aHandleIsWrappedOnceAndNothingIsNotWrapped() throws Exception {
        ReadHandle h = opened(0);

        assertSame(h, ClusterNamedReadHandle.wrap(h, "c", () -> { }));
        assertNull(ClusterNamedReadHandle.wrap(null, "c", () -> { }));
        ReadHandle otherProxy = (ReadHandle) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ReadHandle.class}, (proxy, m, args) -> m.getName().equals("getId") ? 9L : null);
        assertTrue(ClusterNamedReadHandle.wrap(otherProxy, "c", () -> { }).toString().contains("ledger=9"),
                "a proxy of another kind is wrapped");
    }

    /** A handle whose reads answer with {@code answer}. */
    private static ReadHandle answering(CompletableFuture<LedgerEntries> answer) {
        return (ReadHandle) Proxy.newProxyInstance(ClusterNamedReadHandleTest.class.getClassLoader(),
                new Class<?>[] {ReadHandle.class}, (proxy, m, args) -> switch (m.getName()) {
                    case "getId" -> 5L;
                    case "readAsync" -> answer;
                    default -> null;
                });
    }

    /** How a future failed, as its dependents see it. */
    private static Throwable failure(CompletableFuture<?> f) throws Exception {
        return get(f.handle((r, e) -> e));
    }

    @Test
    void aFailureOfAChainedReadIsLoggedByItsCause() throws Exception {
        // a read future completed by a stage of a chain fails with its error wrapped in a CompletionException
        CompletableFuture<LedgerEntries> chained = CompletableFuture.completedFuture(0).thenApply(x -> {
            throw new IllegalStateException("bookie gone");
        });
        CompletableFuture<LedgerEntries> bare = new CompletableFuture<>();
        Exception noCause = new java.util.concurrent.CompletionException("without a cause", null);
        bare.completeExceptionally(noCause);

        List<String> logged = new java.util.ArrayList<>();
        try (LogCapture log = new LogCapture(ClusterNamedReadHandle.class)) {
            failure(ClusterNamedReadHandle.wrap(answering(chained), "b", () -> { }).readAsync(0, 0));
            failure(ClusterNamedReadHandle.wrap(answering(bare), "b", () -> { }).readAsync(0, 0));
            logged.addAll(log.messages());
        }

        assertEquals(List.of("bookie-cluster=b ledger=5 readAsync[0, 0] failed: java.lang.IllegalStateException: "
                + "bookie gone", "bookie-cluster=b ledger=5 readAsync[0, 0] failed: " + noCause), logged);
    }

    @Test
    void aBoundedReadFailsWithTheReadsOwnError() throws Exception {
        CompletableFuture<LedgerEntries> chained = CompletableFuture.completedFuture(0).thenApply(x -> {
            throw new IllegalStateException("bookie gone");
        });
        CompletableFuture<LedgerEntries> bare = new CompletableFuture<>();
        Exception noCause = new java.util.concurrent.CompletionException("without a cause", null);
        bare.completeExceptionally(noCause);

        Throwable e = failure(ClusterNamedReadHandle.wrap(answering(chained), "b", () -> { }, () -> 60_000)
                .readAsync(0, 0));
        assertInstanceOf(IllegalStateException.class, io.bcswitch.concurrent.Failures.unwrap(e));
        assertSame(noCause, failure(ClusterNamedReadHandle.wrap(answering(bare), "b", () -> { }, () -> 60_000)
                .readAsync(0, 0)));
    }
}
