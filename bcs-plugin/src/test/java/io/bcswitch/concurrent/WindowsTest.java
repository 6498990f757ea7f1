package io.bcswitch.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class WindowsTest {

    @Test
    void resultsComeInTheItemsOrderWithAtMostAWindowInFlight() throws Exception {
        List<Integer> items = IntStream.range(0, 100).boxed().toList();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<CompletableFuture<Integer>> pending = new ArrayList<>();
        CompletableFuture<List<Integer>> result = Windows.map(items, 7, i -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CompletableFuture<Integer> f = new CompletableFuture<>();
            synchronized (pending) {
                pending.add(f);
            }
            return f.thenApply(x -> {
                inFlight.decrementAndGet();
                return x * 2;
            });
        });
        int next = 0;
        while (!result.isDone()) {
            CompletableFuture<Integer> f;
            synchronized (pending) {
                f = next < pending.size() ? pending.get(next) : null;
            }
            if (f != null) {
                // completed from other threads, one after the other
                int id = next++;
                CompletableFuture.runAsync(() -> f.complete(id));
            } else {
                Thread.sleep(1);
            }
        }
        assertEquals(items.stream().map(i -> i * 2).toList(), result.get(10, TimeUnit.SECONDS));
        assertTrue(most.get() <= 7, "in flight at once: " + most.get());
    }

    @Test
    void manyQuickStepsDoNotNestOneCallPerWindow() throws Exception {
        List<Integer> items = IntStream.range(0, 200_000).boxed().toList();
        List<Integer> out = Windows.map(items, 1, CompletableFuture::completedFuture).get(30, TimeUnit.SECONDS);
        assertEquals(items, out);
    }

    @Test
    void theFirstFailureFailsTheWholeAndNoStepStartsAfterIt() {
        AtomicInteger started = new AtomicInteger();
        CompletableFuture<List<Integer>> result = Windows.map(List.of(1, 2, 3, 4, 5, 6), 2, i -> {
            started.incrementAndGet();
            return i == 3 ? CompletableFuture.failedFuture(new IllegalStateException("ledger " + i))
                    : CompletableFuture.completedFuture(i);
        });
        ExecutionException e = assertThrows(ExecutionException.class, () -> result.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
        assertEquals(3, started.get(), "nothing started after the failure");
    }

    @Test
    void aStepStartsAsSoonAsAnyRunningOneEndsNotWhenItsGroupHasEnded() throws Exception {
        CompletableFuture<Integer> slow = new CompletableFuture<>();
        List<Integer> started = new java.util.concurrent.CopyOnWriteArrayList<>();
        CompletableFuture<List<Integer>> result = Windows.map(List.of(0, 1, 2, 3), 2, i -> {
            started.add(i);
            return i == 0 ? slow : CompletableFuture.completedFuture(i);
        });
        assertEquals(List.of(0, 1, 2, 3), started, "1, 2 and 3 each took the place of the one before while 0 runs");
        assertTrue(!result.isDone());
        slow.complete(0);
        assertEquals(List.of(0, 1, 2, 3), result.get(10, TimeUnit.SECONDS));
    }
}
