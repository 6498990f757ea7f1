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
    void backOffDoublesUpToTheCap() {
        assertEquals(100, LedgerAttributor.nextDelay(LedgerAttributor.FIRST_DELAY_MS));
        assertEquals(LedgerAttributor.MAX_DELAY_MS, LedgerAttributor.nextDelay(1_500));
        assertEquals(LedgerAttributor.MAX_DELAY_MS, LedgerAttributor.nextDelay(LedgerAttributor.MAX_DELAY_MS));
        assertEquals(LedgerAttributor.FIRST_DELAY_MS, LedgerAttributor.nextDelay(0));
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
}
