package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.SwitchDirective;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A rollback that cannot route one ledger back finishes anyway, keeping that ledger home on the rolled-back target
 * and saying why; and nothing one stuck operation does holds up the housekeeping of the others.
 *
 * <p>The history: switch 1 (a to b) promoted ledger 5 to b; switch 2 (b to c) could not copy it, so it stayed home on
 * b; switch 3 (c to d) promoted it from b to d, and ledger 6 from a to d. Rolling switch 3 back routes 6 back to a and
 * 5 back to b, its previous home, if b still holds it.
 */
class StuckRollbackTest {
    private static final long NOW = 1_000_000_000_000L;

    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private final HandClock clock = new HandClock(NOW);
    private final PassBugs bugs = new PassBugs();
    private final List<MigrationOrchestrator> orchestrators = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        for (String c : List.of("a", "b", "c", "d")) {
            registry.write(registry.paths().cluster(c), new BookieClusterRecord(1, c, "zk:" + c,
                    c.equals("d") ? ClusterStatus.ACTIVE : ClusterStatus.STANDBY, 1), -1).get();
        }
        RangeTable ranges = RangeTable.bootstrap("a", 0).with(new IdRange("b", 1L << 32, 1, 0))
                .with(new IdRange("c", 2L << 32, 2, 0));
        registry.write(registry.paths().ranges(), ranges, -1).get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "d", "c", 3, NOW, 3L << 32), -1).get();
        bed.broker("broker-1", 3, "d", Long.MAX_VALUE, Map.of());
        for (long id : List.of(5L, 6L)) {
            clusters.put("a", id, "schema-" + id, "schema");
            clusters.put("d", id, new FakeClusters.Ledger(true, "schema-" + id,
                    clusters.copyMetadata(clusters.get("a", id).custom(), id == 5 ? "b" : "a")));
        }
        clusters.put("b", 5L, new FakeClusters.Ledger(true, "schema-5",
                clusters.copyMetadata(clusters.get("a", 5L).custom(), "a")));
        registry.updateRelocations(List.of(5L, 6L), (id, cur) -> Optional.of(id == 5
                ? new Relocation(Relocation.FORMAT_VERSION, 5, "d", "a", "SCHEMA", 3, NOW, "b", 1L)
                : new Relocation(Relocation.FORMAT_VERSION, 6, "d", "a", "SCHEMA", 3, NOW))).get();
        registry.appendCopies(3, 0, List.of(5L, 6L)).get();
        registry.write(registry.paths().orchestrator(3), MigrationState.start(3, "d", "broker-1", NOW)
                .moveTo(Phase.BUILD, NOW).moveTo(Phase.PROMOTE, NOW).moveTo(Phase.DONE, NOW), -1).get();
    }

    @AfterEach
    void tearDown() throws Exception {
        orchestrators.forEach(MigrationOrchestrator::close);
        bed.close();
    }

    private MigrationOrchestrator orchestrator(LedgerCopier copier) {
        MigrationOrchestrator o = new MigrationOrchestrator(registry, () -> CompletableFuture.completedFuture(List.of(
                new LedgerReference(5, LedgerKind.SCHEMA, "t/ns/s5"), new LedgerReference(6, LedgerKind.SCHEMA,
                        "t/ns/s6"))), copier, RegistryBed.CONFIG, () -> "broker-1", bed.scheduler,
                PulsarByteBudget::refilledAt, clock, bugs, new MigrationSafetyTest.HandSwitchBack(registry),
                MigrationSafetyTest.FAST);
        orchestrators.add(o);
        return o;
    }

    private void pass(MigrationOrchestrator o) throws Exception {
        o.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        bugs.check();
    }

    private MigrationState state(long epoch) throws Exception {
        return registry.read(registry.paths().orchestrator(epoch), MigrationState.class).get().value();
    }

    private Optional<String> home(long id) throws Exception {
        return RegistryView.read(registry).thenCombine(registry.readRelocations(List.of(id)), RegistryView::withFresh)
                .get().home(id);
    }

    private static List<LedgerIssue> notReversed(MigrationState s) {
        return s.issues().stream().filter(i -> i.result().equals("NOT_REVERSED")).toList();
    }

    @Test
    void aRollbackWhosePreviousHomeIsNoLongerRegisteredFinishesKeepingThatLedgerHomeAndSaysWhy() throws Exception {
        // b was unregistered (only the current homes are checked then: 5 was home on d); its store is gone
        bed.store.delete(registry.paths().cluster("b"), Optional.empty()).get();
        clusters.unreachable("b", true);
        // the migration of switch 3 left an issue of its own
        LedgerIssue failed = new LedgerIssue(8, "SCHEMA", "c", "FAILED", "its bookies did not answer");
        registry.update(registry.paths().orchestrator(3), MigrationState.class, cur -> cur.map(c ->
                c.edit().issues(List.of(failed)).build())).get();
        MigrationOrchestrator o = orchestrator(bed.copier);

        o.rollBack(3, "d", "c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        MigrationState s = state(3);
        assertEquals(Phase.ROLLED_BACK, s.phase(), String.valueOf(s));
        assertEquals("a", home(6).orElseThrow(), "what can go back goes back");
        assertEquals("d", home(5).orElseThrow(), "kept home on d: nothing is lost");
        List<LedgerIssue> kept = notReversed(s);
        assertEquals(1, kept.size(), String.valueOf(s.issues()));
        assertEquals(5, kept.get(0).ledgerId());
        assertEquals("d", kept.get(0).cluster());
        assertTrue(kept.get(0).detail().contains("bookie-cluster b is no longer registered"), kept.get(0).detail());
        assertEquals(List.of(kept.get(0), failed), s.issues(), "what the rollback kept first, the migration's after");
        assertEquals(List.of(6L), registry.readCopies(3).get().get(0), "its only copy is never deleted");
        assertEquals("c", registry.readDirective().get().value().target(), "switched back");
    }

    @Test
    void aRollbackWhosePreviousHomeNeverAnswersWaitsItsBoundedTimeThenFinishesSayingWhy() throws Exception {
        clusters.unreachable("b", true);
        MigrationOrchestrator o = orchestrator(bed.copier);
        ExecutionException waiting = assertThrows(ExecutionException.class,
                () -> o.rollBack(3, "d", "c").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(String.valueOf(waiting.getCause().getMessage()).contains("cannot tell whether ledger 5"),
                String.valueOf(waiting.getCause()));
        MigrationState s = state(3);
        assertEquals(Phase.ROLLING_BACK, s.phase());
        assertTrue(s.rollbackError().contains("cannot tell"), s.rollbackError());
        assertEquals("d", home(6).orElseThrow(), "nothing is routed back while one ledger may still go back");

        // asked again until the wait is over: still waiting for b
        clock.advance(Rollback.UNANSWERED_WAIT_MILLIS - 1);
        assertThrows(ExecutionException.class, () -> o.rollBack(3, "d", "c").get(TestWaits.SECONDS,
                TimeUnit.SECONDS));
        assertEquals(Phase.ROLLING_BACK, state(3).phase(), "b is waited for until the wait is over");

        clock.advance(1);
        o.rollBack(3, "d", "c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        s = state(3);
        assertEquals(Phase.ROLLED_BACK, s.phase(), String.valueOf(s));
        assertEquals("a", home(6).orElseThrow());
        assertEquals("d", home(5).orElseThrow());
        List<LedgerIssue> kept = notReversed(s);
        assertEquals(1, kept.size(), String.valueOf(s.issues()));
        assertTrue(kept.get(0).detail().contains("bookie-cluster b did not answer"), kept.get(0).detail());
        assertEquals(null, s.rollbackError());
        assertTrue(clusters.has("d", 5), "the ledger's only reachable copy stays");
    }

    @Test
    void aRollbackAnEarlierVersionRecordedWaitsForAnUnansweringClusterFromItsFirstFailedAttempt() throws Exception {
        // recorded ROLLING_BACK by a version that did not keep when the rollback was asked
        registry.update(registry.paths().orchestrator(3), MigrationState.class, cur -> cur.map(c ->
                c.moveTo(Phase.ROLLING_BACK, NOW).edit().rollback("c", null, 0).build())).get();
        assertEquals(0, state(3).rollbackAskedAt());
        clusters.unreachable("b", true);
        MigrationOrchestrator o = orchestrator(bed.copier);
        clock.advance(Rollback.UNANSWERED_WAIT_MILLIS); // long after it was recorded
        assertThrows(ExecutionException.class, () -> o.rollBack(3, "d", "c").get(TestWaits.SECONDS,
                TimeUnit.SECONDS));
        assertEquals(NOW + Rollback.UNANSWERED_WAIT_MILLIS, state(3).rollbackAskedAt(), "counted from now on");
        clock.advance(Rollback.UNANSWERED_WAIT_MILLIS - 1);
        assertThrows(ExecutionException.class, () -> o.rollBack(3, "d", "c").get(TestWaits.SECONDS,
                TimeUnit.SECONDS));
        clock.advance(1);
        o.rollBack(3, "d", "c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.ROLLED_BACK, state(3).phase());
        assertEquals("d", home(5).orElseThrow());
    }

    /**
     * A rollback that flipped its promotions and whose switch back failed (recorded: the broker asking it stopped,
     * or an earlier version answered so) after a newer switch replaced the one it rolls back: nothing of it can fail
     * again, so the next pass finishes it rather than the first pass 30 s after the failure.
     */
    @Test
    void aFlippedRollbackWhoseSwitchANewerOneReplacedIsFinishedByTheNextPass() throws Exception {
        registry.update(registry.paths().orchestrator(3), MigrationState.class, cur -> cur.map(c ->
                c.moveTo(Phase.ROLLING_BACK, NOW).edit().rollback("c", "another switch was committed concurrently",
                        1).rollbackAskedAt(NOW).updatedAt(NOW).build())).get();
        var d = registry.readDirective().get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "a", "d", 4, NOW, 4L << 32),
                d.version()).get();
        registry.write(registry.paths().orchestrator(4), MigrationState.start(4, "a", "broker-1", NOW)
                .moveTo(Phase.BUILD, NOW).moveTo(Phase.PROMOTE, NOW).moveTo(Phase.DONE, NOW), -1).get();
        pass(orchestrator(bed.copier));
        MigrationState s = state(3);
        assertEquals(Phase.ROLLED_BACK, s.phase(), String.valueOf(s));
        assertEquals("a", registry.readDirective().get().value().target(), "no switch back over the newer switch");
    }

    @Test
    void aRollbackWhosePreviousHomeIsRetiredFinishesAtOnceKeepingThatLedgerHome() throws Exception {
        registry.update(registry.paths().cluster("b"), BookieClusterRecord.class, cur -> cur.map(c ->
                c.withStatus(ClusterStatus.DEPRECATED))).get();
        MigrationOrchestrator o = orchestrator(bed.copier);
        o.rollBack(3, "d", "c").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        MigrationState s = state(3);
        assertEquals(Phase.ROLLED_BACK, s.phase());
        assertEquals("d", home(5).orElseThrow(), "never routed to a cluster whose clients are closed");
        assertTrue(notReversed(s).get(0).detail().contains("DEPRECATED"), String.valueOf(s.issues()));
    }

    @Test
    void whileARollbackIsStuckTheCopiesAnotherRollbackLeftAreStillDeleted() throws Exception {
        // an earlier switch's rollback left its copy of ledger 7 on c to delete, once every broker routes without it
        clusters.put("a", 7, "schema-7", "schema");
        clusters.put("c", 7, new FakeClusters.Ledger(true, "schema-7",
                clusters.copyMetadata(clusters.get("a", 7L).custom(), "a")));
        registry.appendCopies(2, 0, List.of(7L)).get();
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "c", "broker-1", NOW)
                .moveTo(Phase.ROLLING_BACK, NOW).moveTo(Phase.ROLLED_BACK, NOW).edit().deletions(1, 0).build(), -1)
                .get();
        // b does not answer: the rollback of switch 3 waits for it
        clusters.unreachable("b", true);
        MigrationOrchestrator o = orchestrator(bed.copier);
        assertThrows(ExecutionException.class, () -> o.rollBack(3, "d", "c").get(TestWaits.SECONDS,
                TimeUnit.SECONDS));
        assertEquals(Phase.ROLLING_BACK, state(3).phase());

        pass(o);
        assertFalse(clusters.has("c", 7), "the other rollback's copy is deleted meanwhile");
        assertTrue(clusters.has("a", 7));
        assertEquals(0, state(2).pendingDeletionCount());
        assertEquals(Phase.ROLLING_BACK, state(3).phase(), "the stuck one still waits");

        // once its wait is over, the passes finish it by themselves
        clock.advance(Rollback.UNANSWERED_WAIT_MILLIS + Rollback.ROLLBACK_RESUME_MILLIS);
        pass(o);
        assertEquals(Phase.ROLLED_BACK, state(3).phase());
        assertEquals("d", home(5).orElseThrow());
    }

    @Test
    void aCopyListThatCannotBeDroppedHoldsUpNeitherTheOtherDropsNorTheDeletions() throws Exception {
        // the copy lists of switches 1 and 2, both finished long ago, are not needed any more
        registry.appendCopies(1, 0, List.of(11L)).get();
        registry.appendCopies(2, 0, List.of(12L)).get();
        for (long e : List.of(1L, 2L)) {
            registry.write(registry.paths().orchestrator(e), MigrationState.start(e, e == 1 ? "b" : "c", "broker-1",
                    NOW).moveTo(Phase.BUILD, NOW).moveTo(Phase.PROMOTE, NOW).moveTo(Phase.DONE, NOW), -1).get();
        }
        // the list of switch 1 cannot be dropped now (the store refuses the delete of its chunk)
        String stuck = registry.paths().copiesChunk(1, 0);
        RegistryStore refusing = new RegistryStore(new io.bcswitch.registry.ForwardingPort(
                new io.bcswitch.adapter.PulsarMetadataPort(bed.store)) {
            @Override
            public CompletableFuture<Void> delete(String path, Optional<Long> expectedVersion) {
                return path.equals(stuck) ? CompletableFuture.failedFuture(new IllegalStateException("refused"))
                        : super.delete(path, expectedVersion);
            }
        }, registry.paths());
        MigrationOrchestrator o = new MigrationOrchestrator(refusing, () -> CompletableFuture.completedFuture(
                List.of()), bed.copier, RegistryBed.CONFIG, () -> "broker-1", bed.scheduler,
                PulsarByteBudget::refilledAt, clock, MigrationMetrics.NONE,
                new MigrationSafetyTest.HandSwitchBack(refusing), MigrationSafetyTest.FAST);
        orchestrators.add(o);
        o.tick().handle((v, e) -> null).get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertFalse(bed.store.exists(registry.paths().copiesChunk(2, 0)).get(), "switch 2's list is dropped");
        assertTrue(bed.store.exists(stuck).get());
    }
}
