package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.Failures;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the registry relies on from a metadata store, run against every {@link MetadataPort}: the in-memory one the
 * unit tests use and the adapter over Pulsar's stores. A store that passes here can carry the registry.
 */
public abstract class MetadataPortContract {
    private static final long WAIT_SECONDS = 10;

    /** A fresh, empty store for one test. */
    protected abstract MetadataPort newPort() throws Exception;

    protected MetadataPort port;

    @BeforeEach
    void openPort() throws Exception {
        port = newPort();
    }

    @AfterEach
    void closePort() {
        port.close();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** The failure {@code f} completes with, unwrapped. */
    private static Throwable failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
        return Failures.unwrap(e);
    }

    @Test
    void aNodeIsReadBackWithItsValueAndVersionAndEachWriteMovesTheVersion() throws Exception {
        assertTrue(await(port.get("/t/a")).isEmpty());
        long v0 = await(port.put("/t/a", bytes("one"), Optional.of(MetadataPort.ABSENT), false));
        MetadataPort.Node n = await(port.get("/t/a")).orElseThrow();
        assertArrayEquals(bytes("one"), n.value());
        assertEquals(v0, n.version());
        assertFalse(n.ephemeral());
        long v1 = await(port.put("/t/a", bytes("two"), Optional.of(v0), false));
        assertNotEquals(v0, v1);
        assertEquals(v1, await(port.get("/t/a")).orElseThrow().version());
        long v2 = await(port.put("/t/a", bytes("three"), Optional.empty(), false));
        assertArrayEquals(bytes("three"), await(port.get("/t/a")).orElseThrow().value());
        assertNotEquals(v1, v2);
        assertTrue(v0 < v1 && v1 < v2, "versions only grow: " + v0 + ", " + v1 + ", " + v2);
    }

    @Test
    void everyLostRaceIsAVersionConflictAndChangesNothing() throws Exception {
        long v = await(port.put("/t/a", bytes("one"), Optional.of(MetadataPort.ABSENT), false));
        assertInstanceOf(StoreFailure.VersionConflict.class,
                failure(port.put("/t/a", bytes("x"), Optional.of(MetadataPort.ABSENT), false)), "create of existing");
        assertInstanceOf(StoreFailure.VersionConflict.class,
                failure(port.put("/t/a", bytes("x"), Optional.of(v + 7), false)), "stale version");
        assertInstanceOf(StoreFailure.VersionConflict.class,
                failure(port.delete("/t/a", Optional.of(v + 7))), "delete with a stale version");
        MetadataPort.Node n = await(port.get("/t/a")).orElseThrow();
        assertArrayEquals(bytes("one"), n.value());
        assertEquals(v, n.version());
        assertTrue(RegistryStore.isVersionConflict(new java.util.concurrent.CompletionException(
                failure(port.put("/t/a", bytes("x"), Optional.of(MetadataPort.ABSENT), false)))));
    }

    @Test
    void anUpdateOfANodeThatIsGoneIsRefusedAndCreatesNothing() throws Exception {
        long v = await(port.put("/t/gone", bytes("one"), Optional.empty(), false));
        await(port.delete("/t/gone", Optional.of(v)));
        Throwable t = failure(port.put("/t/gone", bytes("x"), Optional.of(v), false));
        assertTrue(t instanceof StoreFailure.VersionConflict || t instanceof StoreFailure.NotFound, t.toString());
        assertTrue(await(port.get("/t/gone")).isEmpty());
    }

    @Test
    void deletingWhatIsNotThereSaysNotFound() throws Exception {
        assertInstanceOf(StoreFailure.NotFound.class, failure(port.delete("/t/none", Optional.empty())));
        assertInstanceOf(StoreFailure.NotFound.class, failure(port.delete("/t/none", Optional.of(0L))));
    }

    @Test
    void childrenAreNamesAndAWriteNeedsNoParentWrittenFirst() throws Exception {
        assertEquals(List.of(), await(port.children("/t/none")));
        await(port.put("/t/p/a", bytes("1"), Optional.empty(), false));
        await(port.put("/t/p/b/c", bytes("2"), Optional.empty(), false));
        assertEquals(Set.of("a", "b"), new TreeSet<>(await(port.children("/t/p"))));
        assertEquals(List.of("c"), await(port.children("/t/p/b")));
        // whether an implicitly created parent can be read as a node differs between stores (Pulsar's memory
        // store: no): the registry lists children, it never reads such a parent
    }

    @Test
    void anEphemeralNodeIsMarkedAsThisSessions() throws Exception {
        await(port.put("/t/e", bytes("me"), Optional.of(MetadataPort.ABSENT), true));
        MetadataPort.Node n = await(port.get("/t/e")).orElseThrow();
        assertTrue(n.ephemeral());
        assertTrue(n.ownSession());
    }

    @Test
    void listenersHearCreatesChangesAndDeletesByPath() throws Exception {
        List<String> heard = new CopyOnWriteArrayList<>();
        port.onChange(heard::add);
        long v = await(port.put("/t/w", bytes("1"), Optional.empty(), false));
        long v1 = await(port.put("/t/w", bytes("2"), Optional.of(v), false));
        await(port.delete("/t/w", Optional.of(v1)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (heard.stream().filter("/t/w"::equals).count() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(3, heard.stream().filter("/t/w"::equals).count(), heard.toString());
    }

    // ---- what the registry builds on it ----

    public record Counter(int n) {
    }

    @Test
    void concurrentUpdateLoopsLoseNoIncrement() throws Exception {
        RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
        List<CompletableFuture<Counter>> all = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            all.add(registry.update("/bcs/counter", Counter.class,
                    cur -> Optional.of(new Counter(cur.map(Counter::n).orElse(0) + 1))));
        }
        await(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)));
        assertEquals(10, await(registry.read("/bcs/counter", Counter.class)).value().n());
    }

    @Test
    void aLockHasOneHolderAndOnlyItsHolderReleasesIt() throws Exception {
        RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
        RegistryLock lock = registry.lock("/bcs/lock");
        assertTrue(await(lock.tryAcquire("broker-1#1")));
        assertFalse(await(lock.tryAcquire("broker-2#1")), "held");
        assertFalse(await(lock.release("broker-2#1")), "not the holder");
        assertFalse(await(lock.tryAcquire("broker-2#2")), "still held");
        assertFalse(await(lock.releaseIf(h -> h.startsWith("broker-2#"))));
        assertTrue(await(lock.releaseIf(h -> h.startsWith("broker-1#"))));
        assertTrue(await(lock.tryAcquire("broker-2#3")), "free again");
        assertTrue(await(registry.ownsEphemeral("/bcs/lock")), "a lock is an ephemeral node of this session");
        assertTrue(await(lock.release("broker-2#3")));
        assertFalse(await(lock.release("broker-2#3")), "released once");
    }
}
