package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.concurrent.TestWaits;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ByteRateLimiterTest {
    private static final long S = TimeUnit.SECONDS.toNanos(1);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private ByteRateLimiter onTestClock(LongSupplier rate, AtomicLong now) {
        return new ByteRateLimiter(rate, r -> PulsarByteBudget.refilledAt(r, now::get), scheduler);
    }

    @Test
    void shortBurstThenPacedInOrder() {
        AtomicLong now = new AtomicLong(1_000 * S);
        ByteRateLimiter l = onTestClock(() -> 1000, now);
        assertTrue(l.acquire(100).isDone(), "the 100 ms' worth a fresh budget holds is usable at once");
        assertTrue(l.acquire(500).isDone(), "a budget at zero lets one more through, into debt");
        CompletableFuture<Void> third = l.acquire(500);
        CompletableFuture<Void> small = l.acquire(1);
        assertFalse(third.isDone(), "the debt (500 bytes, half a second) is paid first");
        assertFalse(small.isDone(), "a small copy does not overtake a waiting one");
        now.addAndGet(S / 4);
        l.letThrough();
        assertFalse(third.isDone(), "a quarter of a second pays half the debt");
        now.addAndGet(S / 4);
        l.letThrough();
        assertTrue(third.isDone());
        assertFalse(small.isDone(), "the third copy's 500 bytes are the next debt");
        now.addAndGet(10 * S);
        l.letThrough();
        assertTrue(small.isDone(), "idle: capacity is back (100 bytes), the small copy takes 1 of them");
        assertTrue(l.acquire(99).isDone(), "... the rest is usable at once ...");
        assertTrue(l.acquire(1).isDone(), "a budget at zero lets one through");
        assertFalse(l.acquire(1).isDone(), "... but no more than 100 ms' worth was kept while idle");
    }

    @Test
    void aLedgerCostsItsMetadataWorkButNeverMoreThanASixtyFourthOfTheBudget() {
        assertEquals(16 * 1024, ByteRateLimiter.ledgerCharge(1_048_576), "the default budget: 64 ledgers a second");
        assertEquals(16 * 1024, ByteRateLimiter.ledgerCharge(100_000_000), "a larger budget: the same charge");
        assertEquals(1_500 / 64, ByteRateLimiter.ledgerCharge(1_500), "a small budget pays for bytes");
        assertEquals(1, ByteRateLimiter.ledgerCharge(10), "never free while a budget is set");
        assertEquals(0, ByteRateLimiter.ledgerCharge(0), "unlimited");

        // at 64 KB/s each ledger costs 1 KB and a fresh budget holds 100 ms' worth (6,553 bytes): six ledgers fit, a
        // seventh goes into debt, the eighth waits until 1/64 s has paid it off
        AtomicLong now = new AtomicLong(1_000 * S);
        ByteRateLimiter l = onTestClock(() -> 64 * 1024, now);
        assertTrue(l.acquireLedger().isDone());
        assertTrue(l.acquireLedger().isDone(), "the balance is still above zero");
        int through = 2;
        while (through < 100 && l.acquireLedger().isDone()) {
            through++;
        }
        assertEquals(7, through, "100 ms' worth (6,553 bytes) at 1 KB a ledger, and one into debt");
        now.addAndGet(S / 64);
        l.letThrough();
        assertEquals(0, l.waiting(), "1/64 s pays one ledger's charge back");
    }

    @Test
    void aLedgerIsChargedAtTheRateWhenItsTurnComesNotWhenItAsked() {
        AtomicLong now = new AtomicLong(1_000 * S);
        AtomicLong rate = new AtomicLong(1_048_576);
        java.util.List<Long> taken = new java.util.ArrayList<>();
        ByteRateLimiter l = new ByteRateLimiter(rate::get, r -> {
            ByteBudget real = PulsarByteBudget.refilledAt(r, now::get);
            return new ByteBudget() {
                @Override
                public void take(long bytes) {
                    taken.add(bytes);
                    real.take(bytes);
                }

                @Override
                public long nanosUntilSettled() {
                    return real.nanosUntilSettled();
                }
            };
        }, scheduler);
        l.acquire(10_000_000).join(); // into debt: the next one waits
        CompletableFuture<Void> ledger = l.acquireLedger();
        assertFalse(ledger.isDone());
        rate.set(6_400); // an operator lowers the rate while it waits
        now.addAndGet(10_000 * S);
        l.letThrough();
        assertTrue(ledger.isDone());
        assertEquals(java.util.List.of(10_000_000L, 100L), taken, "charged 1/64 of the rate it was let through at");
    }

    @Test
    void unlimitedNeverWaits() {
        ByteRateLimiter l = onTestClock(() -> 0, new AtomicLong());
        for (int i = 0; i < 10; i++) {
            assertTrue(l.acquire(Long.MAX_VALUE / 4).isDone());
        }
        assertEquals(0, l.waiting());
    }

    @Test
    void aRateChangedWhileCopiesWaitAppliesToTheWaitsAlreadyScheduled() throws Exception {
        AtomicLong rate = new AtomicLong(100); // an operator's mistake: 100 bytes per second
        ByteRateLimiter l = new ByteRateLimiter(rate::get, PulsarByteBudget::refilledAt, scheduler);
        l.acquire(10).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        l.acquire(100_000).get(TestWaits.SECONDS, TimeUnit.SECONDS); // a debt of about 1,000 s at that rate
        CompletableFuture<Void> after = l.acquire(100);
        Thread.sleep(300);
        assertFalse(after.isDone());
        rate.set(0); // unlimited
        after.get(TestWaits.SECONDS, TimeUnit.SECONDS);

        rate.set(1_000_000);
        l.acquire(5_000_000).get(TestWaits.SECONDS, TimeUnit.SECONDS); // once the old debt is paid at the new rate
        CompletableFuture<Void> waits = l.acquire(1); // 5 s at 1 MB/s
        Thread.sleep(200);
        assertFalse(waits.isDone());
        rate.set(100_000_000); // 100 MB/s: the seconds left shrink to milliseconds
        waits.get(3, TimeUnit.SECONDS);
    }

    @Test
    void aWaiterThatGaveUpTakesNoneOfTheBudgetAndHoldsUpNoOneBehindIt() {
        AtomicLong now = new AtomicLong(1_000 * S);
        ByteRateLimiter l = onTestClock(() -> 1000, now);
        assertTrue(l.acquire(100).isDone());
        assertTrue(l.acquire(500).isDone(), "into debt: half a second");
        CompletableFuture<Void> stopped = l.acquire(100_000); // a hundred seconds' worth
        CompletableFuture<Void> next = l.acquire(500);
        stopped.cancel(false); // its run stopped while it waited
        assertEquals(2, l.waiting(), "it leaves the queue when the queue is next looked at");
        now.addAndGet(S / 2);
        l.letThrough();
        assertTrue(next.isDone(), "the next one goes once the debt before it is paid");
        assertEquals(0, l.waiting());
        assertFalse(l.acquire(1).isDone(), "the debt is the 500 bytes let through, not the hundred seconds given up");
        now.addAndGet(S / 2);
        l.letThrough();
        assertEquals(0, l.waiting(), "half a second later that is paid too");
    }
}
