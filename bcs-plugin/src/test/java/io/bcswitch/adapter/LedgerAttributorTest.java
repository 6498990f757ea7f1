package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bcswitch.adapter.LedgerAttributor.Step;
import io.bcswitch.registry.RegistryException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The pure decisions behind ledger attribution and the topics endpoint's name parsing. */
class LedgerAttributorTest {
    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void onlyManagedLedgerDataLedgersAreAttributed() {
        Map<String, byte[]> data = Map.of("application", utf8("pulsar"), "component", utf8("managed-ledger"),
                "pulsar/managed-ledger", utf8("t/ns/persistent/x"));
        assertEquals("t/ns/persistent/x", RoutingBookKeeper.dataLedgerOf(data));
        Map<String, byte[]> cursor = Map.of("pulsar/managed-ledger", utf8("t/ns/persistent/x"),
                "pulsar/cursor", utf8("sub"));
        assertNull(RoutingBookKeeper.dataLedgerOf(cursor));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of("pulsar/compactedTopic", utf8("persistent://t/ns/x"))));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of("pulsar/schemaId", utf8("t/ns/x"))));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of()));
        assertNull(RoutingBookKeeper.dataLedgerOf(null));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of("pulsar/managed-ledger", new byte[0])));
    }

    @Test
    void writesOnceTheLedgerIsListedOnAnOpenManagedLedger() {
        assertEquals(Step.WRITE, LedgerAttributor.decide(true, "LedgerOpened", 7, 7, true, null, "b"));
        assertEquals(Step.WRITE, LedgerAttributor.decide(true, "ClosedLedger", 7, 7, true, "a", "b"));
        assertEquals(Step.WRITE, LedgerAttributor.decide(true, null, 7, 7, true, null, "b"));
        assertEquals(Step.DONE, LedgerAttributor.decide(true, "LedgerOpened", 7, 7, true, "b", "b"));
    }

    @Test
    void waitsWhileTheLedgerIsNotListedYet() {
        // the managed ledger is still opening (not published), or its metadata update is in flight
        assertEquals(Step.RETRY, LedgerAttributor.decide(false, null, 7, -1, false, null, "b"));
        assertEquals(Step.RETRY, LedgerAttributor.decide(true, "CreatingLedger", 7, 6, false, null, "b"));
        assertEquals(Step.RETRY, LedgerAttributor.decide(true, "LedgerOpened", 7, -1, false, null, "b"));
        assertEquals(Step.RETRY, LedgerAttributor.decide(true, "None", 7, 7, true, null, "b"));
        assertEquals(Step.RETRY, LedgerAttributor.decide(true, "Closed", 7, 7, true, null, "b"));
        assertEquals(Step.RETRY, LedgerAttributor.decide(true, "WriteFailed", 7, 7, true, null, "b"));
    }

    @Test
    void givesUpOnFencedTerminatedOrDroppedLedgers() {
        assertEquals(Step.GIVE_UP, LedgerAttributor.decide(true, "Fenced", 7, 7, true, null, "b"));
        assertEquals(Step.GIVE_UP, LedgerAttributor.decide(true, "FencedForDeletion", 7, 7, true, null, "b"));
        assertEquals(Step.GIVE_UP, LedgerAttributor.decide(true, "Terminated", 7, 7, true, null, "b"));
        // a newer ledger is listed and ours is not: it was dropped
        assertEquals(Step.GIVE_UP, LedgerAttributor.decide(true, "LedgerOpened", 7, 9, false, null, "b"));
    }

    @Test
    void topicNamesFromPathPartsFollowPulsarRules() {
        assertEquals("t/ns/persistent/x",
                ManagedLedgerTopicLedgers.parse("t", "ns", "x").getPersistenceNamingEncoding());
        assertEquals("t/ns/persistent/orders%3Av1",
                ManagedLedgerTopicLedgers.parse("t", "ns", "orders:v1").getPersistenceNamingEncoding());
        assertEquals("t/ns/persistent/x-partition-3",
                ManagedLedgerTopicLedgers.parse("t", "ns", "x-partition-3").getPersistenceNamingEncoding());
        assertEquals(RegistryException.Kind.INVALID,
                assertThrows(RegistryException.class, () -> ManagedLedgerTopicLedgers.parse("t", "ns", "")).kind());
        assertEquals(RegistryException.Kind.INVALID,
                assertThrows(RegistryException.class, () -> ManagedLedgerTopicLedgers.parse("t!", "ns", "x")).kind());
        assertEquals(RegistryException.Kind.INVALID,
                assertThrows(RegistryException.class, () -> ManagedLedgerTopicLedgers.parse("t", "n s", "x")).kind());
    }

    @Test
    void writesArePacedNotBunched() {
        long p = LedgerAttributor.WRITE_PERIOD_NANOS;
        assertEquals(1_000L, LedgerAttributor.writeSlot(1_000L, 500L), "free now: at once");
        assertEquals(1_000L + p, LedgerAttributor.writeSlot(1_000L, 1_000L + p), "the next slot, not now");
        // a thousand ledgers of a cutover, all due at the same moment, spread over thousand periods
        long next = 0;
        long last = 0;
        for (int i = 0; i < 1000; i++) {
            last = LedgerAttributor.writeSlot(0, next);
            next = last + p;
        }
        assertEquals(999 * p, last);
        assertEquals(20_000_000_000L, 1000 * p, "50 per second: 20 s for 1,000");
    }

    /** Nothing is even looked at while the broker's cutover runs; once it is over, the ledger is attributed. */
    @Test
    void nothingIsWrittenWhileTheCutoverRuns() throws Exception {
        java.util.concurrent.ScheduledExecutorService scheduler =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        java.util.concurrent.atomic.AtomicInteger looks = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean cutover = new java.util.concurrent.atomic.AtomicBoolean(true);
        io.bcswitch.registry.RangeTable table = io.bcswitch.registry.RangeTable.bootstrap("a", 0);
        try {
            LedgerAttributor a = new LedgerAttributor(() -> {
                looks.incrementAndGet();
                return null; // no factory yet: the attempt is retried
            }, () -> new io.bcswitch.routing.Ownership(table, "a", 0), scheduler, cutover::get);
            a.dataLedgerCreated("t/ns/persistent/x", 7, "a");
            Thread.sleep(LedgerAttributor.FIRST_DELAY_MS + 2 * LedgerAttributor.CUTOVER_WAIT_MS);
            assertEquals(0, looks.get(), "no managed-ledger metadata is touched during the cutover");
            cutover.set(false);
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (looks.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            org.junit.jupiter.api.Assertions.assertTrue(looks.get() > 0, "attempted once the cutover is over");
        } finally {
            scheduler.shutdownNow();
        }
    }
}
