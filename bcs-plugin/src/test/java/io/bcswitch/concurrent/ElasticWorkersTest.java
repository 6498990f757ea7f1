package io.bcswitch.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ElasticWorkersTest {
    private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(4);

    @AfterEach
    void tearDown() {
        scheduler.shutdownNow();
    }

    private static List<Integer> items(int n) {
        return IntStream.range(0, n).boxed().toList();
    }

    @Test
    void aWidthChangedWhileRunningAppliesToTheWorkUnderWay() throws Exception {
        AtomicInteger width = new AtomicInteger(2);
        AtomicInteger inFlight = new AtomicInteger();
        List<Integer> maxWhile = java.util.Collections.synchronizedList(new ArrayList<>());
        Map<Integer, AtomicInteger> seen = new ConcurrentHashMap<>();
        AtomicInteger done = new AtomicInteger();
        CompletableFuture<Void> run = ElasticWorkers.run(items(300), width::get, i -> {
            seen.computeIfAbsent(i, k -> new AtomicInteger()).incrementAndGet();
            int now = inFlight.incrementAndGet();
            maxWhile.add(now * 1000 + width.get());
            CompletableFuture<Boolean> f = new CompletableFuture<>();
            scheduler.schedule(() -> {
                inFlight.decrementAndGet();
                int d = done.incrementAndGet();
                if (d == 50) {
                    width.set(6);
                } else if (d == 200) {
                    width.set(1);
                }
                f.complete(true);
            }, 2, TimeUnit.MILLISECONDS);
            return f;
        });
        run.get(30, TimeUnit.SECONDS);
        assertEquals(300, seen.size());
        assertTrue(seen.values().stream().allMatch(n -> n.get() == 1), "every item once");
        int max = maxWhile.stream().mapToInt(x -> x / 1000).max().orElseThrow();
        assertEquals(6, max, "widened to 6");
        // after narrowing to 1 (and the running steps finishing), one at a time
        List<Integer> tail = maxWhile.subList(maxWhile.size() - 50, maxWhile.size());
        assertTrue(tail.stream().allMatch(x -> x / 1000 == 1), "narrowed to 1: " + tail);
    }

    @Test
    void aStepSayingStopEndsTheRunAndAFailureFailsIt() {
        AtomicInteger started = new AtomicInteger();
        ElasticWorkers.run(items(100), () -> 1, i -> {
            started.incrementAndGet();
            return CompletableFuture.completedFuture(i < 9);
        }).join();
        assertEquals(10, started.get(), "no item after the one that said stop");

        CompletableFuture<Void> failed = ElasticWorkers.run(items(100), () -> 3, i -> i == 5
                ? CompletableFuture.failedFuture(new IllegalStateException("boom"))
                : CompletableFuture.supplyAsync(() -> true, scheduler));
        ExecutionException e = assertThrows(ExecutionException.class, () -> failed.get(10, TimeUnit.SECONDS));
        assertEquals("boom", e.getCause().getMessage());
    }

    @Test
    void manyStepsThatAreDoneAtOnceDoNotNest() {
        AtomicInteger n = new AtomicInteger();
        ElasticWorkers.run(items(200_000), () -> 4, i -> {
            n.incrementAndGet();
            return CompletableFuture.completedFuture(true);
        }).join();
        assertEquals(200_000, n.get());
        assertTrue(ElasticWorkers.run(List.of(), () -> 4, i -> null).isDone());
    }
}
