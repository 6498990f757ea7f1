package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;

/**
 * What counts as an open handle must not depend on the garbage collector for what the routing client saw happen:
 * every handle is held strongly here, as a broker's cursor or topic may still hold it.
 */
class LedgerHandleTrackerTest {
    private static final LongPredicate NONE_LONG_LIVED = id -> false;

    @Test
    void aHandleOnADeletedLedgerIsNoLongerOpenThoughItsHolderNeverClosedIt() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        Object cursorLedger = new Object(); // a cursor's previous ledger: deleted by Pulsar, never closed
        Object other = new Object();
        Object copy = new Object();
        tracker.opened("cluster-a", 5, cursorLedger, true, false);
        tracker.opened("cluster-a", 6, other, true, false);
        tracker.opened("cluster-c", 5, copy, false, false); // the same id elsewhere (a migrated copy) is another ledger
        assertEquals(Map.of("cluster-a", 2, "cluster-c", 1), tracker.snapshot("cluster-b", 10, NONE_LONG_LIVED).counts());

        tracker.deleted("cluster-a", 5);

        LedgerHandleTracker.Snapshot snap = tracker.snapshot("cluster-b", 10, NONE_LONG_LIVED);
        assertEquals(Map.of("cluster-a", 1, "cluster-c", 1), snap.counts());
        assertEquals(Map.of("cluster-a", List.of(6L), "cluster-c", List.of(5L)), snap.idsOutside());
        // held until here, so that only the deletion can have let them go
        java.lang.ref.Reference.reachabilityFence(cursorLedger);
        java.lang.ref.Reference.reachabilityFence(other);
        java.lang.ref.Reference.reachabilityFence(copy);
    }

    @Test
    void pulsarsDeletesAreToldAndAListenerThatThrowsNeverReachesTheDeleteCallback() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        Object h = new Object();
        tracker.opened("cluster-a", 5, h, true, false);
        List<String> told = new java.util.ArrayList<>();
        tracker.onPulsarDeleted((cluster, id) -> {
            told.add(cluster + "/" + id);
            throw new java.util.concurrent.RejectedExecutionException("closing");
        });
        tracker.pulsarDeleted("cluster-a", 5);
        assertEquals(List.of("cluster-a/5"), told);
        assertEquals(Map.of(), tracker.snapshot("cluster-b", 10, NONE_LONG_LIVED).counts());
        assertEquals(1, List.of(h).size());
    }

    @Test
    void aHandleOpenedAfterTheDeletionIsTrackedAsUsual() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        tracker.deleted("cluster-a", 7);
        Object h = new Object();
        tracker.opened("cluster-a", 7, h, true, false);
        assertEquals(Map.of("cluster-a", 1), tracker.snapshot("cluster-b", 10, NONE_LONG_LIVED).counts());
        assertEquals(Object.class, h.getClass());
    }

    @Test
    void aClientIsUsedWhileAHandleOpenedThroughItMayBeUsed() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        Object old = new Object();
        Object fresh = new Object();
        Object reader = new Object(); // a read whose close is never seen: used for as long as it is referenced
        Object writer = new Object();
        tracker.opened("cluster-a", old, 5, reader, false, true);
        tracker.opened("cluster-a", old, 6, writer, true, false);
        assertEquals("2 handle(s) open through it: ledger 5 (read), ledger 6 (write)", sorted(tracker.openThrough(old, NONE_LONG_LIVED)));
        assertEquals(null, tracker.openThrough(fresh, NONE_LONG_LIVED), "nothing was opened through it");

        tracker.deleted("cluster-a", 5);
        assertEquals("1 handle(s) open through it: ledger 6 (write)", tracker.openThrough(old, NONE_LONG_LIVED), "the writer still is");
        tracker.deleted("cluster-a", 6);
        assertEquals(null, tracker.openThrough(old, NONE_LONG_LIVED));
        // the tracker holds handles weakly: both must stay reachable until here
        java.lang.ref.Reference.reachabilityFence(reader);
        java.lang.ref.Reference.reachabilityFence(writer);
    }

    /** {@code d} with its listed handles in ledger order (the tracker's set has none). */
    private static String sorted(String d) {
        int colon = d.indexOf(": ");
        return d.substring(0, colon + 2) + String.join(", ", java.util.Arrays.stream(d.substring(colon + 2)
                .split(", ")).sorted().toList());
    }
}
