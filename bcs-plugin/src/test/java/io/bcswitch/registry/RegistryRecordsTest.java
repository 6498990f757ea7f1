package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** Decisions the persisted records make about themselves, at the edges of their bounds. */
class RegistryRecordsTest {

    @Test
    void anOperationFinishedWithAnErrorStatusFailedAndAnyOtherIsDone() {
        OperationRecord op = OperationRecord.started("op-1", "cleanup", Map.of(), "broker-1", 10);
        assertTrue(op.running());
        assertEquals(OperationRecord.DONE, op.finished(399, null, null, 20).state());
        OperationRecord failed = op.finished(400, null, null, 20);
        assertEquals(OperationRecord.FAILED, failed.state());
        assertFalse(failed.running());
        assertEquals(20L, failed.finishedAt());
    }

    @Test
    void aWatermarkRisesOnlyWhenAnObservationIsHigher() {
        IdWatermark w = new IdWatermark(IdWatermark.FORMAT_VERSION, "a", 3, 100, 0, null);
        assertNull(w.raisedBy(3, 100, 5, "same"));
        assertNull(w.raisedBy(2, 99, 5, "lower"));
        IdWatermark byId = w.raisedBy(3, 101, 5, "ledger");
        assertEquals(101, byId.maxLedgerId());
        assertEquals(3, byId.maxHighOrderBits());
        IdWatermark byBits = w.raisedBy(4, 7, 6, "range");
        assertEquals(4, byBits.maxHighOrderBits());
        assertEquals(100, byBits.maxLedgerId(), "never lowered");
    }

    private static BrokerCutoverRecord holding(String broker, long epoch, List<Long> open, String activationError) {
        return new BrokerCutoverRecord(BrokerCutoverRecord.FORMAT_VERSION, broker, epoch, "b", 0, 0, 0, 0, 0,
                activationError, 0, Map.of(), Map.of("a", open), 0);
    }

    @Test
    void aBrokerHoldsOpenWhatItListsAndAnythingOnceItsListIsFull() {
        int max = BrokerCutoverRecord.MAX_OPEN_LISTED;
        BrokerCutoverRecord below = holding("b1", 1, LongStream.range(0, max - 1).boxed().toList(), null);
        assertTrue(below.holdsOpen("a", 5));
        assertFalse(below.holdsOpen("a", max + 10L));
        assertFalse(below.holdsOpen("c", 5), "nothing open on another cluster");
        BrokerCutoverRecord full = holding("b1", 1, LongStream.range(0, max).boxed().toList(), null);
        assertTrue(full.holdsOpen("a", max + 10L), "more handles than listed: any ledger may be among them");
    }

    @Test
    void aNewSwitchWouldLeaveBehindBrokersWithoutARecordAndThoseBehindForNoKnownReason() {
        BrokerView view = new BrokerView(Set.of("no-plugin", "behind", "failing", "current"), Map.of(
                "behind", holding("behind", 1, List.of(), null),
                "failing", holding("failing", 1, List.of(), "cannot reach b"),
                "current", holding("current", 2, List.of(), null)), Map.of());
        assertEquals(List.of("no-plugin"), view.withoutRecord());
        List<String> left = view.wouldNotFollow(2).stream().sorted().toList();
        assertEquals(2, left.size(), left.toString());
        assertTrue(left.get(0).startsWith("behind (at switch epoch 1, not 2)"), left.toString());
        assertTrue(left.get(1).startsWith("no-plugin (no bookie-cluster-switch plugin record"), left.toString());
    }

    private static Relocation toB(long id) {
        return new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "SCHEMA", 1, 0, null, null);
    }

    @Test
    void relocationsJustReadOneByOneOverrideTheListingBothWays() {
        RegistryView view = new RegistryView(RangeTable.bootstrap("a", 0), Map.of(1L, toB(1), 2L, toB(2)), 4,
                Versioned.absent(), "a");
        RegistryView fresh = view.withFresh(Map.of(1L, Optional.empty(), 3L, Optional.of(toB(3))));
        assertEquals(Set.of(2L, 3L), fresh.relocations().keySet());
        assertEquals(Set.of(1L, 2L), view.relocations().keySet(), "the view itself is unchanged");
    }

    @Test
    void aRecordWrittenAsAStringReadsBack() {
        IdWatermark w = new IdWatermark(IdWatermark.FORMAT_VERSION, "a", 3, 100, 7, "ledger");
        assertEquals(w, Json.read(Json.writeString(w).getBytes(java.nio.charset.StandardCharsets.UTF_8),
                IdWatermark.class));
    }

    private static BrokerCutoverRecord at(String broker, long epoch, long finishedAt) {
        return new BrokerCutoverRecord(BrokerCutoverRecord.FORMAT_VERSION, broker, epoch, "b", 0, 0, 0, 1, finishedAt);
    }

    @Test
    void aBrokerViewTellsWhoIsBehindOnTheSwitchTheCutoverAndTheRelocations() {
        BrokerView view = new BrokerView(Set.of("done", "cutting", "behind", "bare"), Map.of(
                "done", at("done", 2, 5).withHandles(Map.of("a", 3, "c", 0), Map.of("a", List.of(7L))),
                "cutting", at("cutting", 2, 0),
                "behind", at("behind", 1, 5).withActivation("cannot reach b", 3)),
                Map.of("done", 9L, "cutting", 8L, "behind", 10L));
        assertEquals(List.of("bare", "behind", "cutting"), view.cutoverPending(2).stream().sorted().toList());
        assertFalse(view.cutoverComplete(2));
        BrokerView oneDone = new BrokerView(Set.of("done"), Map.of("done", at("done", 2, 5)), Map.of());
        assertTrue(oneDone.cutoverComplete(2));
        assertFalse(new BrokerView(Set.of(), Map.of(), Map.of()).cutoverComplete(2), "no live broker: not complete");

        assertEquals(List.of("bare", "cutting"), view.relocationPending(9).stream().sorted().toList(),
                "no epoch published, or a lower one");
        assertEquals(List.of("done"), view.holdingOpen("a", 7));
        assertEquals(List.of(), view.holdingOpen("a", 8));
        assertEquals(Map.of("done", 3), view.handlesOn("a"));
        assertEquals(Map.of(), view.handlesOn("c"), "no handle counted where none is open");

        List<String> notFollowing = view.notFollowing(2).stream().sorted().toList();
        assertEquals(2, notFollowing.size(), notFollowing.toString());
        assertEquals("bare (no bookie-cluster-switch plugin record: runs without the plugin, or is starting)",
                notFollowing.get(0));
        assertEquals("behind (at switch epoch 1, not 2: cannot reach b)", notFollowing.get(1));
    }

    @Test
    void onlyARollbackOrANewerSwitchStopsARun() {
        for (Phase p : Phase.values()) {
            assertEquals(p == Phase.SUPERSEDED || p == Phase.ROLLING_BACK || p == Phase.ROLLED_BACK, p.stopsRuns(),
                    p.name());
        }
    }

    @Test
    void theRegistryViewReadsTheActiveClusterTheRangesAndTheRelocations() throws Exception {
        InMemoryMetadataPort memory = new InMemoryMetadataPort();
        try {
            RegistryStore registry = new RegistryStore(memory, new RegistryPaths("/bcs"));
            long wait = io.bcswitch.concurrent.TestWaits.SECONDS;
            java.util.concurrent.TimeUnit s = java.util.concurrent.TimeUnit.SECONDS;
            RegistryView empty = RegistryView.read(registry).get(wait, s);
            assertNull(empty.activeCluster());
            assertEquals(0, empty.switchEpoch());
            assertEquals(Optional.of("unknown"), empty.home(5), "nothing known: ids belong to no named cluster");

            registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "a", 0), -1).get(wait, s);
            RegistryView bootstrapped = RegistryView.read(registry).get(wait, s);
            assertEquals("a", bootstrapped.activeCluster());
            assertEquals(Optional.of("a"), bootstrapped.home(5));

            long bFirst = 1L << 32;
            registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 3, 0, bFirst), -1)
                    .get(wait, s);
            registry.updateRelocations(List.of(5L), (id, cur) -> Optional.of(new Relocation(
                    Relocation.FORMAT_VERSION, 5, "b", "a", "SCHEMA", 3, 0))).get(wait, s);
            registry.bumpRelocationEpoch(0, List.of(5L)).get(wait, s);
            RegistryView switched = RegistryView.read(registry).get(wait, s);
            assertEquals("b", switched.activeCluster());
            assertEquals(3, switched.switchEpoch());
            assertEquals(1, switched.relocationEpoch());
            assertEquals(Optional.of("b"), switched.home(5), "relocated");
            assertEquals(Optional.of("a"), switched.home(6), "issued by a");
            assertEquals(Optional.of("b"), switched.home(bFirst + 1), "issued by b: the directive's range counts");
        } finally {
            memory.close();
        }
    }
}
