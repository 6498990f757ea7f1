package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class LiveCompactionInventoryTest {

    private static LedgerReference compaction(long id, String ml) {
        return new LedgerReference(id, LedgerKind.COMPACTION, ml + "/__compaction#CompactedTopicLedger");
    }

    @Test
    void theCompactedLedgerInUseIsReferencedEvenWhenTheStoredCursorStillNamesAnOlderOne() throws Exception {
        List<LedgerReference> stored = List.of(
                new LedgerReference(1, LedgerKind.DATA, "t/ns/persistent/a"),
                compaction(10, "t/ns/persistent/a"),
                compaction(20, "t/ns/persistent/b"),
                compaction(30, "t/ns/persistent/gone"));
        Map<String, Optional<Long>> inUse = Map.of(
                "t/ns/persistent/a", Optional.of(11L), // a newer compaction, named only by the cursor's ledger
                "t/ns/persistent/b", Optional.of(20L),
                "t/ns/persistent/gone", Optional.empty());
        Set<String> asked = ConcurrentHashMap.newKeySet();
        LiveCompactionInventory live = new LiveCompactionInventory(() -> CompletableFuture.completedFuture(stored),
                ml -> {
                    asked.add(ml);
                    return CompletableFuture.completedFuture(inUse.get(ml));
                });
        List<LedgerReference> refs = live.references().get();
        assertEquals(Set.of(1L, 10L, 11L, 20L, 30L), refs.stream().map(LedgerReference::ledgerId)
                .collect(Collectors.toSet()));
        assertTrue(refs.stream().anyMatch(r -> r.ledgerId() == 11 && r.kind() == LedgerKind.COMPACTION
                && r.referencedBy().startsWith("t/ns/persistent/a/")), refs.toString());
        assertEquals(5, refs.size(), "a ledger named both ways is listed once: " + refs);
        assertEquals(inUse.keySet(), asked, "only compacted topics are asked about");
    }

    @Test
    void aBrokerThatCannotAnswerFailsTheReadAndAtMostAFewAreAskedAtOnce() throws Exception {
        List<LedgerReference> stored = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            stored.add(compaction(100 + i, "t/ns/persistent/t" + i));
        }
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors
                .newSingleThreadScheduledExecutor();
        try {
            LiveCompactionInventory live = new LiveCompactionInventory(
                    () -> CompletableFuture.completedFuture(stored), ml -> {
                        most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                        CompletableFuture<Optional<Long>> f = new CompletableFuture<>();
                        timer.schedule(() -> {
                            inFlight.decrementAndGet();
                            f.complete(Optional.empty());
                        }, 5, java.util.concurrent.TimeUnit.MILLISECONDS);
                        return f;
                    });
            assertEquals(40, live.references().get().size());
            assertTrue(most.get() <= LiveCompactionInventory.PARALLEL, "asked at once: " + most.get());

            LiveCompactionInventory failing = new LiveCompactionInventory(
                    () -> CompletableFuture.completedFuture(stored), ml -> CompletableFuture.failedFuture(
                            new IllegalStateException("broker restarting")));
            assertThrows(java.util.concurrent.ExecutionException.class, () -> failing.references().get());
            // the auditor's: the stored picture, the topic it could not ask about named as stored
            LiveCompactionInventory lenient = new LiveCompactionInventory(
                    () -> CompletableFuture.completedFuture(stored), ml -> CompletableFuture.failedFuture(
                            new IllegalStateException("cannot load the topic")), true);
            assertEquals(stored, lenient.references().get());
        } finally {
            timer.shutdownNow();
        }
    }
}
