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

    @Test
    void aWriteHandleIsDoneWithOnceItsLedgerIsClosed() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        InMemoryBookKeeper cluster = new InMemoryBookKeeper();
        cluster.addClosed(5, InMemoryBookKeeper.bytes("x"));
        cluster.add(6, false, InMemoryBookKeeper.bytes("x"));
        // BookKeeper's handles: one on a ledger its writer closed, one on a ledger still written
        tracker.opened("cluster-a", cluster, 5, cluster.handle(5), true, false);
        tracker.opened("cluster-a", cluster, 6, cluster.handle(6), true, false);

        assertEquals("1 handle(s) open through it: ledger 6 (write)", tracker.openThrough(cluster, NONE_LONG_LIVED));
    }

    @Test
    void everyHandleHandedOutIsToldWithItsCluster() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        List<String> told = new java.util.ArrayList<>();
        tracker.onOpen(told::add);
        Object h = new Object();

        LedgerHandleTracker.Tracked t = tracker.opened("cluster-a", 5, h, false, true);

        assertEquals(List.of("cluster-a"), told);
        assertEquals("cluster-a", t.cluster);
        assertEquals(5, t.ledgerId);
        assertEquals(true, t.closeUnseen);
        assertEquals(false, t.write);
        assertEquals(null, t.client, "opened without a client");
        java.lang.ref.Reference.reachabilityFence(h);
    }

    @Test
    void aDescriptionListsFiveHandlesAtMost() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        Object client = new Object();
        List<Object> handles = new java.util.ArrayList<>();
        for (long id = 1; id <= 5; id++) {
            Object h = new Object();
            handles.add(h);
            tracker.opened("cluster-a", client, id, h, false, false);
        }
        assertEquals("5 handle(s) open through it: ledger 1 (read), ledger 2 (read), ledger 3 (read), "
                + "ledger 4 (read), ledger 5 (read)", sorted(tracker.openThrough(client, NONE_LONG_LIVED)));

        Object sixth = new Object();
        handles.add(sixth);
        tracker.opened("cluster-a", client, 6, sixth, false, false);
        String d = tracker.openThrough(client, NONE_LONG_LIVED);
        assertEquals(true, d.startsWith("6 handle(s) open through it: ") && d.endsWith(", ..."), d);
        assertEquals(5, d.split("ledger ").length - 1, d);
        java.lang.ref.Reference.reachabilityFence(handles);
    }

    @Test
    void aSnapshotNamesAtMostMaxIdsPerCluster() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        List<Object> handles = List.of(new Object(), new Object(), new Object(), new Object());
        tracker.opened("cluster-a", 1, handles.get(0), false, false);
        tracker.opened("cluster-a", 2, handles.get(1), false, false);
        tracker.opened("cluster-a", 3, handles.get(2), false, false);
        tracker.opened("cluster-b", 4, handles.get(3), false, false);

        LedgerHandleTracker.Snapshot snap = tracker.snapshot("cluster-b", 2, NONE_LONG_LIVED);

        assertEquals(Map.of("cluster-a", 3), snap.counts(), "every one counted");
        assertEquals(2, snap.idsOutside().get("cluster-a").size(), "two named");
        assertEquals(java.util.Set.of("cluster-a"), snap.idsOutside().keySet(), "the active cluster's are not");
        java.lang.ref.Reference.reachabilityFence(handles);
    }

    @Test
    void handlesOpenOutsideTheirLedgersHomeAreFound() {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        List<Object> handles = List.of(new Object(), new Object(), new Object(), new Object());
        tracker.opened("cluster-a", 1, handles.get(0), false, false); // ledger 1 moved to cluster-b
        tracker.opened("cluster-b", 1, handles.get(1), false, false); // on its home
        tracker.opened("cluster-a", 2, handles.get(2), false, false); // no home known: not outside
        tracker.opened("cluster-a", 3, handles.get(3), false, false); // moved, but deleted there meanwhile
        tracker.deleted("cluster-a", 3);

        List<LedgerHandleTracker.Tracked> outside = tracker.openOutsideHome(
                id -> id == 2 ? java.util.Optional.empty() : java.util.Optional.of("cluster-b"), NONE_LONG_LIVED);

        assertEquals(List.of("cluster-a 1"), outside.stream().map(t -> t.cluster + " " + t.ledgerId).toList());
        java.lang.ref.Reference.reachabilityFence(handles);
    }

    /**
     * Makes {@code t} look opened {@code nanos} ago: the tracker reads the JVM's clock, and a test must not wait the
     * 30 s a read handle of unseen close counts as open.
     */
    private static void age(LedgerHandleTracker.Tracked t, long nanos) throws ReflectiveOperationException {
        java.lang.reflect.Field openedAt = LedgerHandleTracker.Tracked.class.getDeclaredField("openedAt");
        openedAt.setAccessible(true);
        openedAt.setLong(t, System.nanoTime() - nanos);
    }

    @Test
    void aReadOfUnseenCloseCountsAsOpenForAShortWhileOrWhileItIsACompactedView() throws Exception {
        LedgerHandleTracker tracker = new LedgerHandleTracker();
        Object client = new Object();
        Object shortRead = new Object();
        Object seenRead = new Object();
        long past = LedgerHandleTracker.SHORT_READ_NANOS + java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
        age(tracker.opened("cluster-a", client, 5, shortRead, false, true), past);
        age(tracker.opened("cluster-a", client, 6, seenRead, false, false), past);
        Object fresh = new Object();
        tracker.opened("cluster-a", client, 7, fresh, false, true);

        assertEquals("2 handle(s) open through it: ledger 6 (read), ledger 7 (read)",
                sorted(tracker.openThrough(client, NONE_LONG_LIVED)),
                "an old read of unseen close is done with; one whose close is seen is open until closed");
        assertEquals("3 handle(s) open through it: ledger 5 (read), ledger 6 (read), ledger 7 (read)",
                sorted(tracker.openThrough(client, id -> id == 5)), "a compacted view is kept open for long");
        assertEquals(Map.of("cluster-a", 2), tracker.snapshot("cluster-b", 10, NONE_LONG_LIVED).counts());
        java.lang.ref.Reference.reachabilityFence(shortRead);
        java.lang.ref.Reference.reachabilityFence(seenRead);
        java.lang.ref.Reference.reachabilityFence(fresh);
    }
}
