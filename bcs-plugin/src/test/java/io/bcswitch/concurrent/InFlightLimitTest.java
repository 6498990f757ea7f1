package io.bcswitch.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class InFlightLimitTest {

    /**
     * A tree walk (each node's read starts its children's reads) completed from a pool of threads in random order:
     * every node is read, never more than the limit at once, and the limit is reached.
     */
    @Test
    void aTreeWalkThatStartsReadsFromReadsNeverHasMoreThanTheLimitInFlight() throws Exception {
        InFlightLimit limit = new InFlightLimit(5);
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger read = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            // 1 + 10 + 100 + 1000 nodes
            CompletableFuture<Integer> walk = node(limit, pool, 0, inFlight, most, read);
            assertEquals(1111, walk.get(30, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1111, read.get());
        assertTrue(most.get() <= 5, "in flight at once: " + most.get());
        assertEquals(5, limit.peak());
        assertEquals(0, limit.inFlight());
    }

    private static CompletableFuture<Integer> node(InFlightLimit limit, ExecutorService pool, int depth,
                                                   AtomicInteger inFlight, AtomicInteger most, AtomicInteger read) {
        return limit.submit(() -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            read.incrementAndGet();
            return CompletableFuture.supplyAsync(() -> {
                sleep((long) (Math.random() * 2));
                inFlight.decrementAndGet();
                return depth;
            }, pool);
        }).thenCompose(d -> {
            if (d == 3) {
                return CompletableFuture.completedFuture(1);
            }
            List<CompletableFuture<Integer>> children = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                children.add(node(limit, pool, d + 1, inFlight, most, read));
            }
            return CompletableFuture.allOf(children.toArray(CompletableFuture[]::new))
                    .thenApply(v -> 1 + children.stream().mapToInt(CompletableFuture::join).sum());
        });
    }

    @Test
    void operationsStartInTheOrderTheyWereAskedFor() throws Exception {
        InFlightLimit limit = new InFlightLimit(1);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        ConcurrentLinkedQueue<Integer> started = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Integer>> all = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            int id = i;
            all.add(limit.submit(() -> {
                started.add(id);
                return gate.thenApply(v -> id);
            }));
        }
        assertEquals(List.of(0), List.copyOf(started), "one slot: only the first started");
        gate.complete(null);
        for (int i = 0; i < 50; i++) {
            assertEquals(i, all.get(i).get(10, TimeUnit.SECONDS));
        }
        assertEquals(50, started.size());
        assertEquals(List.copyOf(started), all.stream().map(CompletableFuture::join).toList());
    }

    @Test
    void manyOperationsThatCompleteAtOnceRunInALoopNotDownTheStack() throws Exception {
        InFlightLimit limit = new InFlightLimit(1);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        // the first holds the slot, so the other 200,000 queue and then run one after the other as it frees
        CompletableFuture<Integer> first = limit.submit(() -> gate.thenApply(v -> -1));
        List<CompletableFuture<Integer>> rest = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            int id = i;
            rest.add(limit.submit(() -> CompletableFuture.completedFuture(id)));
        }
        gate.complete(null);
        assertEquals(-1, first.get(10, TimeUnit.SECONDS));
        for (int i = 0; i < rest.size(); i += 997) {
            assertEquals(i, rest.get(i).get(10, TimeUnit.SECONDS));
        }
        assertEquals(0, limit.inFlight());
    }

    @Test
    void aFailedOrThrowingOperationFailsItsOutcomeAndFreesItsSlot() throws Exception {
        InFlightLimit limit = new InFlightLimit(1);
        CompletableFuture<Object> failed = limit.submit(
                () -> CompletableFuture.failedFuture(new IllegalStateException("store down")));
        CompletableFuture<Object> thrown = limit.submit(() -> {
            throw new IllegalArgumentException("bad path");
        });
        ExecutionException e1 = assertThrows(ExecutionException.class, () -> failed.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e1.getCause());
        ExecutionException e2 = assertThrows(ExecutionException.class, () -> thrown.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, e2.getCause());
        assertEquals("next", limit.submit(() -> CompletableFuture.completedFuture("next")).get(10, TimeUnit.SECONDS));
        assertEquals(0, limit.inFlight());
    }

    @Test
    void aLimitBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new InFlightLimit(0));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
