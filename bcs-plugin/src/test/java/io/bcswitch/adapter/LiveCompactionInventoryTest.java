package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.RegistryException;
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
                }, Runnable::run);
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
                    }, Runnable::run);
            assertEquals(40, live.references().get().size());
            assertTrue(most.get() <= LiveCompactionInventory.PARALLEL, "asked at once: " + most.get());

            LiveCompactionInventory failing = new LiveCompactionInventory(
                    () -> CompletableFuture.completedFuture(stored), ml -> CompletableFuture.failedFuture(
                            new IllegalStateException("broker restarting")), Runnable::run);
            var refused = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> failing.references().get());
            assertTrue(refused.getCause() instanceof RegistryException r
                    && r.kind() == RegistryException.Kind.UNAVAILABLE && r.getMessage().contains("40 compacted topic")
                    && r.getMessage().contains("broker restarting"), String.valueOf(refused.getCause()));
        } finally {
            timer.shutdownNow();
        }
    }

    @Test
    void aTopicItsOwnerCannotLoadIsAnUnknownPartOfThePictureAndHoldsUpNoOtherTopic() throws Exception {
        List<LedgerReference> stored = List.of(
                new LedgerReference(1, LedgerKind.DATA, "t/ns/persistent/a"),
                compaction(10, "t/ns/persistent/a"),
                compaction(20, "t/ns/persistent/stuck"),
                compaction(30, "t/ns/persistent/c"),
                compaction(40, "t/ns/persistent/hung"));
        LiveCompactionInventory live = new LiveCompactionInventory(() -> CompletableFuture.completedFuture(stored),
                ml -> switch (ml) {
                    case "t/ns/persistent/a" -> CompletableFuture.completedFuture(Optional.of(11L));
                    case "t/ns/persistent/c" -> CompletableFuture.completedFuture(Optional.of(31L));
                    case "t/ns/persistent/hung" -> new CompletableFuture<>(); // its load never gives up
                    // thrown, not a failed future: answered the same way
                    default -> throw new IllegalStateException("Bookie handle is not available\nat ...");
                }, Runnable::run, 200, 10_000);
        LedgerInventory.Picture p = live.picture().get();
        assertEquals(Set.of(1L, 10L, 11L, 20L, 30L, 31L, 40L), p.references().stream().map(LedgerReference::ledgerId)
                .collect(Collectors.toSet()), "every other topic's ledger in use is in the picture");
        assertEquals(List.of(new LedgerInventory.Unknown("t/ns/persistent/stuck", 20,
                "its owning broker cannot say which compacted ledger it uses now: Bookie handle is not available"),
                new LedgerInventory.Unknown("t/ns/persistent/hung", 40,
                        "its owning broker cannot say which compacted ledger it uses now: no answer in time (at most 200 ms per "
                                + "owner)")),
                p.unknown());
        var refused = assertThrows(java.util.concurrent.ExecutionException.class, () -> live.references().get());
        assertTrue(refused.getCause().getMessage().contains("t/ns/persistent/stuck"), refused.getMessage());
    }

    @Test
    void whenManyOwnersCannotAnswerOneReadingEndsAfterItsDeadlineWithTheRestNotAsked() throws Exception {
        List<LedgerReference> stored = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            stored.add(compaction(100 + i, "t/ns/persistent/t" + i));
        }
        AtomicInteger asked = new AtomicInteger();
        // every owner hangs (the bookies of its topics are down); 100 ms per owner, 10 ms more per window of 8
        LiveCompactionInventory live = new LiveCompactionInventory(() -> CompletableFuture.completedFuture(stored),
                ml -> {
                    asked.incrementAndGet();
                    return new CompletableFuture<>();
                }, Runnable::run, 100, 10);
        LedgerInventory.Picture p = live.picture().get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(40, p.unknown().size(), "every topic is unknown");
        long notAsked = p.unknown().stream().filter(u -> u.reason().contains("not asked")).count();
        assertEquals(40 - asked.get(), notAsked, "the topics not asked are said to be");
        assertTrue(notAsked > 0, "after the deadline, the rest are not asked: " + asked.get() + " asked");
    }
}
