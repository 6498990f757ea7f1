package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryLock;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.ScriptedPort;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The migration lock of one broker's passes: held only while a pass runs, released however it ends, waited for. */
class OrchestratorLockTest {
    private final ScriptedPort port = new ScriptedPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
    private final RegistryLock lock = registry.lock(registry.paths().orchestratorLock());
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final DriverTimer timer = new DriverTimer(scheduler);
    private final OrchestratorLock mine = new OrchestratorLock(lock, () -> "broker-1", timer);

    @AfterEach
    void tearDown() {
        scheduler.shutdownNow();
        port.close();
    }

    /** Runs one pass of {@code mine} whose body notes who holds the lock meanwhile. */
    private void passNotingTheHolder(List<String> seen) throws Exception {
        mine.locked(() -> holderAsync().thenAccept(h -> seen.add(h.orElse("none"))))
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    /** For a pass's body: it runs on the store's thread, which must not wait for itself. */
    private CompletableFuture<Optional<String>> holderAsync() {
        return port.get(lock.path()).thenApply(n -> n.map(x -> new String(x.value(), StandardCharsets.UTF_8)));
    }

    private Optional<String> holder() {
        return port.get(lock.path()).join().map(n -> new String(n.value(), StandardCharsets.UTF_8));
    }

    private void heldBy(String holder) throws Exception {
        port.put(lock.path(), holder.getBytes(StandardCharsets.UTF_8), Optional.of(MetadataPort.ABSENT), true).get();
    }

    @Test
    void aPassHoldsTheLockUnderThisBrokersNameOnlyWhileItRuns() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        passNotingTheHolder(seen);
        assertEquals(1, seen.size());
        assertTrue(seen.get(0).startsWith("broker-1#1-"), seen.toString());
        assertEquals(Optional.empty(), holder(), "released before the pass ends");

        passNotingTheHolder(seen);
        assertTrue(seen.get(1).startsWith("broker-1#2-"), "each acquisition its own: " + seen);
        assertEquals(seen.get(0).substring(seen.get(0).lastIndexOf('-')), seen.get(1).substring(
                seen.get(1).lastIndexOf('-')), "one process, one nonce");
    }

    @Test
    void aPassThatFailsOrThrowsStillReleasesTheLockAndReportsItsOwnFailure() throws Exception {
        IllegalStateException boom = new IllegalStateException("copy failed");
        ExecutionException failed = assertThrows(ExecutionException.class, () -> mine.locked(
                () -> CompletableFuture.failedFuture(boom)).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertSame(boom, failed.getCause());
        assertEquals(Optional.empty(), holder());

        ExecutionException thrown = assertThrows(ExecutionException.class, () -> mine.locked(() -> {
            throw boom;
        }).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertSame(boom, thrown.getCause());
        assertEquals(Optional.empty(), holder());
    }

    @Test
    void anotherBrokersLockIsWaitedForBoundedlyAndNeverReleased() throws Exception {
        heldBy("broker-2#7-abc");
        List<String> ran = new CopyOnWriteArrayList<>();
        mine.locked(() -> {
            ran.add("ran");
            return CompletableFuture.completedFuture(null);
        }).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of(), ran, "not run while another broker holds the lock");
        assertEquals(Optional.of("broker-2#7-abc"), holder());

        mine.releaseLeftLock().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Optional.of("broker-2#7-abc"), holder(), "another broker's lock is not this one's to release");

        ExecutionException e = assertThrows(ExecutionException.class, () -> mine.lockedWaiting(() -> {
            ran.add("ran");
            return CompletableFuture.completedFuture(null);
        }, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500)).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals(RegistryException.Kind.UNAVAILABLE, ((RegistryException) e.getCause()).kind());
        assertTrue(e.getCause().getMessage().startsWith("another broker holds the migration lock"));
        assertEquals(List.of(), ran);

        CompletableFuture<Void> waiting = mine.lockedWaiting(() -> holderAsync().thenAccept(h -> ran.add(
                "ran holding " + h.orElse("none"))), System.nanoTime() + TimeUnit.SECONDS.toNanos(TestWaits.SECONDS));
        Thread.sleep(300);
        assertFalse(waiting.isDone());
        port.delete(lock.path(), Optional.empty()).get(); // the other broker's pass ends
        waiting.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(1, ran.size());
        assertTrue(ran.get(0).startsWith("ran holding broker-1#"), ran.toString());
    }

    @Test
    void aReleaseThatFailsIsRetriedAndOneLeftBehindIsReleasedByTheNextPass() throws Exception {
        // the first release fails, its retry a second later works
        java.util.concurrent.atomic.AtomicInteger deletes = new java.util.concurrent.atomic.AtomicInteger();
        port.failDeletes(p -> p.equals(lock.path()) && deletes.getAndIncrement() == 0);
        mine.locked(() -> CompletableFuture.completedFuture(null)).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(2, deletes.get(), "released by the retry");
        assertEquals(Optional.empty(), holder(), "released before the pass ends");

        // both fail: the lock is left behind, and this broker's next pass releases it first
        port.failDeletes(p -> p.equals(lock.path()));
        mine.locked(() -> CompletableFuture.completedFuture(null)).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(holder().orElseThrow().startsWith("broker-1#"), "left behind");
        port.failDeletes(p -> false);
        mine.releaseLeftLock().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Optional.empty(), holder(), "a lock this broker left behind is released");

        // and a release that cannot even be attempted does not fail the pass
        port.failReads(p -> p.equals(lock.path()));
        mine.releaseLeftLock().get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }
}
