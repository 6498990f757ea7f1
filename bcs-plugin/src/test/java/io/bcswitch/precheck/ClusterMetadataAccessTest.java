package io.bcswitch.precheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.InMemoryMetadataPort;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Opening a bookie cluster's metadata store: bounded, with an error that says what happened, retried after one. */
class ClusterMetadataAccessTest {
    private static final ClusterLocation X = ClusterLocation.parse("zk+hierarchical://x:2181/ledgers");

    private static String failure(ClusterMetadataAccess access) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> access.forLocation(X).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        return e.getCause().getMessage();
    }

    @Test
    void aStoreThatDoesNotOpenInTimeDidNotAnswerOneThatRefusedSaysWhy() throws Exception {
        CountDownLatch hang = new CountDownLatch(1);
        try (ClusterMetadataAccess slow = new ClusterMetadataAccess(100, (url, t) -> {
            try {
                hang.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("never");
        })) {
            assertEquals("metadata service zk:x:2181 did not answer within 100 ms", failure(slow));
        } finally {
            hang.countDown();
        }
        try (ClusterMetadataAccess refused = new ClusterMetadataAccess(5000, (url, t) -> {
            throw new IllegalStateException("connection refused");
        })) {
            assertEquals("cannot open metadata service zk:x:2181: connection refused", failure(refused));
        }
    }

    @Test
    void aFailedOpenIsTriedAgainByTheNextCallAndAnOpenStoreIsKept() throws Exception {
        AtomicInteger opens = new AtomicInteger();
        InMemoryMetadataPort store = new InMemoryMetadataPort();
        try (ClusterMetadataAccess access = new ClusterMetadataAccess(5000, (url, t) -> {
            if (opens.incrementAndGet() == 1) {
                throw new IllegalStateException("not yet");
            }
            return store;
        })) {
            failure(access);
            access.forLocation(X).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            access.forLocation(X).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(2, opens.get(), "opened again after the failure, then kept");
        }
    }

    /** One call, one open: a call whose own open fails at once answers with that failure, whatever the timing. */
    @Test
    void eachCallAfterAFailureOpensOnceAndAnswersWithItsOwnOpen() throws Exception {
        AtomicInteger opens = new AtomicInteger();
        try (ClusterMetadataAccess access = new ClusterMetadataAccess(5000, (url, t) -> {
            throw new IllegalStateException("refused " + opens.incrementAndGet());
        })) {
            for (int call = 1; call <= 300; call++) {
                assertEquals("cannot open metadata service zk:x:2181: refused " + call, failure(access));
                assertEquals(call, opens.get());
            }
        }
    }

    /** The stores it opened are closed with it; its opener threads never keep a broker's JVM alive. */
    @Test
    void closingClosesEveryStoreItOpenedAndItsThreadsAreDaemons() throws Exception {
        InMemoryMetadataPort store = new InMemoryMetadataPort();
        java.util.List<Boolean> daemon = new java.util.concurrent.CopyOnWriteArrayList<>();
        ClusterMetadataAccess access = new ClusterMetadataAccess(5000, (url, t) -> {
            daemon.add(Thread.currentThread().isDaemon());
            return store;
        });
        assertEquals(5000, access.timeoutMillis());
        access.forLocation(X).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        store.get("/").get(TestWaits.SECONDS, TimeUnit.SECONDS); // open
        access.close();
        assertEquals(java.util.List.of(true), daemon);
        ExecutionException closed = assertThrows(ExecutionException.class,
                () -> store.get("/").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals("the in-memory store is closed", closed.getCause().getMessage());
    }

    @Test
    void theStoreOfAClusterNoLongerRegisteredIsClosedAndTheOthersAreKept() throws Exception {
        java.util.Map<String, InMemoryMetadataPort> opened = new java.util.concurrent.ConcurrentHashMap<>();
        try (ClusterMetadataAccess access = new ClusterMetadataAccess(5000, (url, t) -> opened.computeIfAbsent(url,
                u -> new InMemoryMetadataPort()))) {
            ClusterLocation y = ClusterLocation.parse("zk+hierarchical://y:2181/ledgers");
            access.forLocation(X).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            access.forLocation(y).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(java.util.Set.of(X.storeUrl(), y.storeUrl()), access.openStores());

            access.retainOnly(java.util.Set.of(y.storeUrl()));
            assertEquals(java.util.Set.of(y.storeUrl()), access.openStores());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TestWaits.SECONDS);
            while (!opened.get(X.storeUrl()).get("/").isCompletedExceptionally()) {
                org.junit.jupiter.api.Assertions.assertTrue(System.nanoTime() < deadline, "x's store still open");
                Thread.sleep(10);
            }
            opened.get(y.storeUrl()).get("/").get(TestWaits.SECONDS, TimeUnit.SECONDS); // still open
        }
    }
}
