package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.SwitchDirective;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The copies a superseded migration left on its target (switch 1 to b, superseded by switch 2 to c), worked on
 * directly: which are deleted, which stay and leave the list, which stay on it for a later pass, and when nothing is
 * touched at all.
 */
class UnpromotedCopiesTest {
    private static final long B_FIRST = 1L << 32;
    private static final long C_FIRST = 2L << 32;

    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private UnpromotedCopies copies;
    /** What the brokers reference; null: the inventory cannot be read completely now. */
    private volatile List<LedgerReference> references = List.of();
    private final LedgerInventory inventory = () -> references == null
            ? CompletableFuture.failedFuture(new IllegalStateException("a compacted topic cannot be loaded"))
            : CompletableFuture.completedFuture(references);

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        copies = new UnpromotedCopies(registry, new ListedCopies(registry, bed.copier, inventory), bed.metrics);
        bed.activeClusters("a", "b", "c");
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0).with(new IdRange("b", B_FIRST, 1, 0)),
                -1).get();
        switchedTo("c", 2, C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", 0)
                .moveTo(Phase.SUPERSEDED, 0), -1).get();
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    private void switchedTo(String cluster, long epoch, long firstId) throws Exception {
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                new SwitchDirective(1, cluster, "b", epoch, 0, firstId))).get();
    }

    /** A ledger a issued, its original on a and the copy switch 1 made of it on b. */
    private void copied(long id) {
        clusters.put("a", id, "payload-" + id, "schema");
        clusters.put("b", id, new FakeClusters.Ledger(true, "payload-" + id,
                clusters.copyMetadata(clusters.get("a", id).custom(), "a")));
    }

    /** The active cluster: the switch directive's target. */
    private String active() throws Exception {
        return registry.readDirective().get().value().target();
    }

    private void listed(long... ids) throws Exception {
        registry.appendCopies(1, 0, java.util.Arrays.stream(ids).boxed().toList()).get();
    }

    /**
     * One look at switch 1's list (the store's listing of the lists may lag a change by milliseconds); a look that
     * failed (it says the list waits for the next pass) fails the test: nothing here makes one fail.
     */
    private void process() throws Exception {
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            copies.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
            List<String> failed = log.messages().stream().filter(m -> m.contains("waits for the next pass")).toList();
            assertEquals(List.of(), failed);
        }
    }

    /**
     * Whether switch 1's list is gone, asked of the store itself; looked at again by later passes for a moment, as
     * the passes would (a drop that read a listing of its chunks from just before a change leaves it to the next).
     */
    private boolean listGone() throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(
                io.bcswitch.concurrent.TestWaits.SECONDS);
        while (bed.store.exists(registry.paths().copiesChunk(1, 0)).get()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
            process();
        }
        return true;
    }

    private List<Long> list() throws Exception {
        return registry.readCopies(1).get().values().stream().flatMap(List::stream).toList();
    }

    @Test
    void unpromotedCopiesAreDeletedAndTheListGoesOnceWorkedOff() throws Exception {
        copied(5);
        copied(6);
        listed(5, 6);
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertEquals(List.of("switch epoch=1 superseded: deleted 2 copy/copies its migration made on "
                    + "bookie-cluster=b and never promoted, 0 left"), log.messages());
        }
        assertFalse(clusters.has("b", 5));
        assertFalse(clusters.has("b", 6));
        assertTrue(clusters.has("a", 5) && clusters.has("a", 6), "the originals stay");
        assertTrue(listGone(), "the list is gone");
        assertEquals(List.of("b:2"), bed.deleted);
    }

    @Test
    void homesOwnLedgersAndTheCopiesARollbackGoesBackToStayAndLeaveTheList() throws Exception {
        copied(5); // promoted by switch 1 before it was superseded: home on b
        copied(6); // moved on from b to c by switch 2: a rollback of switch 2 goes back to b
        copied(7); // a ledger b issued, not a copy
        long own = B_FIRST + 7;
        clusters.put("b", own, "b's own", "schema");
        registry.updateRelocations(List.of(5L, 6L), (id, cur) -> Optional.of(id == 5
                ? new Relocation(Relocation.FORMAT_VERSION, 5, "b", "a", "SCHEMA", 1, 0)
                : new Relocation(Relocation.FORMAT_VERSION, 6, "c", "a", "SCHEMA", 2, 0, "b", 1L))).get();
        clusters.put("c", 6L, clusters.get("b", 6L));
        listed(5, 6, own, 7);
        process();
        assertTrue(clusters.has("b", 5), "a home");
        assertTrue(clusters.has("b", 6), "the copy a rollback of switch 2 goes back to");
        assertTrue(clusters.has("b", own), "b's own ledger");
        assertFalse(clusters.has("b", 7), "the only copy to delete");
        assertTrue(listGone());
        assertEquals(List.of("b:1"), bed.deleted);
    }

    @Test
    void aCopyWhoseHomeDoesNotHoldTheSameLedgerIsDeletedOnlyWhenNothingReferencesIt() throws Exception {
        copied(5);
        clusters.delete(5, "a").get(); // the home lost it and it is still referenced: it may be the last one
        copied(6);
        clusters.put("a", 6, "other payload", "schema"); // the home holds another ledger; nothing references 6
        copied(9);
        clusters.delete(9, "a").get(); // Pulsar deleted 9 (at its home): nothing references it
        clusters.put("a", 7, "payload-7", "schema");
        clusters.put("b", 7, "payload-7", "schema"); // not marked as a copy of the migration's
        references = List.of(new LedgerReference(5, LedgerKind.SCHEMA, "t/ns/s5"));
        listed(5, 6, 7, 8, 9); // 8: already gone
        process();
        assertTrue(clusters.has("b", 5), "a referenced ledger's copy stays: cleanup decides about it");
        assertFalse(clusters.has("b", 6), "nothing references it");
        assertFalse(clusters.has("b", 9), "nothing references it: it would be an orphan copy");
        assertTrue(clusters.has("b", 7), "not a copy the migration made");
        assertTrue(listGone(), "each one looked at leaves the list");
        assertEquals(List.of("b:2"), bed.deleted);
    }

    @Test
    void whenTheInventoryCannotBeReadCompletelyACopyAloneIsLeftToCleanup() throws Exception {
        copied(5);
        copied(9);
        clusters.delete(9, "a").get();
        listed(5, 9);
        references = null; // a compacted topic cannot be loaded: nothing is judged on a part of the picture
        process();
        assertFalse(clusters.has("b", 5), "a copy its home holds needs no inventory");
        assertTrue(clusters.has("b", 9), "left to cleanup, which judges on a complete inventory");
        assertTrue(listGone());
    }

    @Test
    void aCopyABrokerHoldsOpenOrThatCannotBeLookedAtStaysListedForALaterPass() throws Exception {
        copied(5);
        copied(6);
        copied(7);
        copied(8);
        listed(5, 6, 7, 8);
        bed.broker("broker-2", 2, "c", Long.MAX_VALUE, Map.of("b", List.of(5L)));
        LedgerCopier failing = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                return id == 6 ? CompletableFuture.failedFuture(new IllegalStateException("no answer"))
                        : super.facts(id, cluster);
            }

            @Override
            public CompletableFuture<Void> delete(long id, String cluster) {
                return id == 8 ? CompletableFuture.failedFuture(new IllegalStateException("no answer"))
                        : super.delete(id, cluster);
            }
        };
        UnpromotedCopies withFailures = new UnpromotedCopies(registry, new ListedCopies(registry, failing, inventory),
                bed.metrics);
        withFailures.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            withFailures.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
            assertEquals(List.of(), log.messages().stream().filter(m -> m.contains("superseded: deleted")).toList(),
                    "a list that only waits is not logged every pass");
        }
        assertFalse(clusters.has("b", 7));
        assertEquals(List.of(5L, 6L, 8L), list(), "what could not go now is listed still");
        assertTrue(clusters.has("b", 5) && clusters.has("b", 6) && clusters.has("b", 8));

        bed.broker("broker-2", 2, "c", Long.MAX_VALUE, Map.of());
        process();
        assertFalse(clusters.has("b", 5) || clusters.has("b", 6) || clusters.has("b", 8));
        assertTrue(listGone());
    }

    @Test
    void nothingIsTouchedWhileTheTargetIsActiveOrABrokerRoutesByAnOlderTable() throws Exception {
        copied(5);
        listed(5);
        bed.broker("broker-2", 2, "c", 0, Map.of()); // has not applied the current relocation epoch
        registry.bumpRelocationEpoch(0, List.of()).get();
        process();
        assertTrue(clusters.has("b", 5));
        assertEquals(List.of(5L), list());

        bed.broker("broker-2", 2, "c", Long.MAX_VALUE, Map.of());
        switchedTo("b", 3, 3L << 32); // b is active again: its own migration may promote the copy
        process();
        assertTrue(clusters.has("b", 5));
        assertEquals(List.of(5L), list());

        switchedTo("c", 4, 4L << 32);
        process();
        assertFalse(clusters.has("b", 5));
    }

    @Test
    void aTargetNoLongerRegisteredOrRetiredKeepsItsCopiesAndTheListGoes() throws Exception {
        copied(5);
        listed(5);
        registry.update(registry.paths().cluster("b"), BookieClusterRecord.class, cur -> cur.map(c ->
                c.withStatus(ClusterStatus.DEPRECATED))).get();
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertEquals(List.of("switch epoch=1 superseded: bookie-cluster=b is DEPRECATED; the copies its migration "
                    + "made are left on it"), log.messages());
        }
        assertTrue(clusters.has("b", 5), "nothing is deleted through clients that are closed");
        assertTrue(listGone());

        listed(5);
        bed.store.delete(registry.paths().cluster("b"), Optional.empty()).get();
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertTrue(log.messages().get(0).contains("bookie-cluster=b is no longer registered"), log.messages()
                    .toString());
        }
        assertTrue(clusters.has("b", 5));
        assertTrue(listGone());
    }

    @Test
    void onlySupersededMigrationsWithAListAreWorkedOn() throws Exception {
        copied(5);
        listed(5);
        // switch 1's state says it is not superseded (its list is someone else's to work off)
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> Optional.of(
                MigrationState.start(1, "b", "broker-1", 0).moveTo(Phase.ROLLING_BACK, 0))).get();
        process();
        assertTrue(clusters.has("b", 5));
        assertEquals(List.of(5L), list());
        assertFalse(UnpromotedCopies.keepsList(registry.listMigrationStates().get(), 1));
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> Optional.of(
                MigrationState.start(1, "b", "broker-1", 0).moveTo(Phase.SUPERSEDED, 0))).get();
        assertTrue(UnpromotedCopies.keepsList(registry.listMigrationStates().get(), 1));
        assertFalse(UnpromotedCopies.keepsList(registry.listMigrationStates().get(), 2));
        // superseded, but its list is not among those given: not looked at
        copies.process(registry.listMigrationStates().get(), List.of(), active()).get();
        assertTrue(clusters.has("b", 5));
    }

    /** Switch 1 (to b) is the latest, and its migration has ended in {@code phase} at {@code finishedAt}, by run token. */
    private void finished(Phase phase, long runToken, long finishedAt) throws Exception {
        switchedTo("b", 1, B_FIRST);
        MigrationState.Edit run = MigrationState.start(1, "b", "broker-1", 0).edit();
        for (long t = 0; t < runToken; t++) {
            run.nextRunToken();
        }
        MigrationState ended = run.build().moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(phase, finishedAt);
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> Optional.of(ended)).get();
    }

    private void promotedToB(long... ids) throws Exception {
        registry.updateRelocations(java.util.Arrays.stream(ids).boxed().toList(), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "SCHEMA", 1, 0))).get();
    }

    @Test
    void theLatestFinishedMigrationsCopiesThatAreNotHomeLeaveItsListAndThoseThatAreHomeStayOnItForARollback()
            throws Exception {
        finished(Phase.DONE_WITH_FAILURES, 1, 10);
        copied(5);
        promotedToB(5); // home on b: a rollback flips it back, by this list
        copied(6);
        clusters.delete(6, "a").get(); // Pulsar deleted it before the copy was promoted; nothing references it
        copied(7); // not promoted (its home changed meanwhile, say): a is home and holds the same ledger
        copied(8);
        clusters.delete(8, "a").get(); // gone at its home but referenced: it may be the last one
        references = List.of(new LedgerReference(8, LedgerKind.SCHEMA, "t/ns/s8"));
        listed(5, 6, 7, 8);
        List<MigrationState> all = registry.listMigrationStates().get();
        assertFalse(UnpromotedCopies.keepsList(all, 1), "a rollback still reads the latest switch's list");
        assertTrue(copies.hasWork(all, List.of(1L), active()).get());
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            copies.process(all, List.of(1L), active()).get();
            assertTrue(log.messages().contains("switch epoch=1 migration finished with failures: deleted 2 "
                    + "copy/copies it made on bookie-cluster=b and did not promote, found after it ended"),
                    log.messages().toString());
        }
        assertTrue(clusters.has("b", 5), "a home");
        assertFalse(clusters.has("b", 6), "nothing references it and nothing routes to it");
        assertFalse(clusters.has("b", 7), "its home holds the same ledger");
        assertTrue(clusters.has("b", 8), "referenced: cleanup decides about it");
        assertTrue(clusters.has("a", 7));
        assertEquals(List.of(5L), list(), "the promoted copy stays listed for a rollback; the others left the list");
        assertEquals(List.of("b:2"), bed.deleted);
        assertFalse(copies.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get(),
                "settled: not read again every pass");

        // a retry runs it again (a new run token) and it ends anew: looked at again
        copied(9);
        clusters.delete(9, "a").get();
        listed(9);
        assertFalse(copies.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get());
        finished(Phase.DONE, 2, 20);
        assertTrue(copies.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get());
        copies.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertFalse(clusters.has("b", 9));
        assertEquals(List.of(5L), list());
    }

    @Test
    void theLatestFinishedMigrationsCopiesWaitWhileABrokerRoutesByAnOlderTable() throws Exception {
        finished(Phase.DONE, 1, 10);
        copied(6);
        clusters.delete(6, "a").get();
        listed(6);
        bed.broker("broker-2", 1, "b", 0, Map.of()); // has not applied the current relocation epoch
        registry.bumpRelocationEpoch(0, List.of()).get();
        copies.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertTrue(clusters.has("b", 6));
        assertEquals(List.of(6L), list());
        assertTrue(copies.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get(), "looked at again later");

        bed.broker("broker-2", 1, "b", Long.MAX_VALUE, Map.of("b", List.of(6L))); // holds it open there
        copies.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertTrue(clusters.has("b", 6));
        assertTrue(copies.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get());

        bed.broker("broker-2", 1, "b", Long.MAX_VALUE, Map.of());
        copies.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertFalse(clusters.has("b", 6));
        assertEquals(List.of(), list());
        assertFalse(copies.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get());
    }

    @Test
    void aFinishedMigrationsListIsWorkedOffWholeAndGoesOnceANewerSwitchIsMade() throws Exception {
        finished(Phase.DONE, 1, 10);
        switchedTo("c", 2, C_FIRST);
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "c", "broker-1", 0), -1).get();
        copied(5);
        promotedToB(5);
        copied(6);
        clusters.delete(6, "a").get();
        listed(5, 6);
        List<MigrationState> all = registry.listMigrationStates().get();
        assertTrue(UnpromotedCopies.keepsList(all, 1),
                "switch 2 was made: switch 1 cannot be rolled back any more");
        assertTrue(copies.hasWork(all, List.of(1L), active()).get());
        process();
        assertTrue(clusters.has("b", 5), "a home");
        assertFalse(clusters.has("b", 6));
        assertTrue(listGone(), "nothing reads the list any more");
    }

    @Test
    void aFinishedListWhoseTargetIsActiveAgainWaitsWithoutTheLockUntilThatClusterIsLeft() throws Exception {
        finished(Phase.DONE, 1, 10);
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "c", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE, 20), -1).get();
        registry.write(registry.paths().orchestrator(3), MigrationState.start(3, "b", "broker-1", 0), -1).get();
        switchedTo("b", 3, 3L << 32); // b, switch 1's target, is active again
        copied(6);
        listed(6);
        List<MigrationState> all = registry.listMigrationStates().get();
        assertTrue(UnpromotedCopies.keepsList(all, 1), "kept: switch 3 may be rolled back before it lists the copy");
        assertFalse(copies.hasWork(all, List.of(1L), "b").get(), "no lock taken every pass while b stays active");
        copies.process(all, List.of(1L), "b").get();
        assertTrue(clusters.has("b", 6));
        assertEquals(List.of(6L), list());
        // switch 3 rolled back (or superseded) before its migration listed the copy: b is left, the list worked off
        switchedTo("c", 4, 4L << 32);
        assertTrue(copies.hasWork(all, List.of(1L), "c").get());
        process();
        assertFalse(clusters.has("b", 6));
        assertTrue(listGone());
    }

    @Test
    void aCopyTheLatestFinishedMigrationListsIsLookedAtAlsoWhenAnOlderRelocationGoesBackToItsTarget()
            throws Exception {
        finished(Phase.DONE_WITH_FAILURES, 1, 10);
        // ledger 12 was made home on b by an older switch, then moved on to c (which a rollback of that older switch,
        // impossible now, would have undone to b); switch 1 found b's copy present but did not promote it
        copied(12);
        clusters.put("c", 12L, clusters.get("b", 12L));
        registry.updateRelocations(List.of(12L), (id, cur) -> Optional.of(new Relocation(Relocation.FORMAT_VERSION,
                12, "c", "a", "SCHEMA", 0, 0, "b", 0L))).get();
        listed(12);
        copies.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertFalse(clusters.has("b", 12), "its home c holds the same ledger; nothing can route to b's copy any more");
        assertTrue(clusters.has("c", 12));
        assertEquals(List.of(), list());
    }

    @Test
    void aCopyIsNotDeletedFromTheActiveClusterWhenTheMigrationRanAgainWhileItWasLookedAt() throws Exception {
        finished(Phase.DONE, 1, 10);
        copied(6);
        clusters.delete(6, "a").get();
        listed(6);
        // a broker whose lock expired while it looked: another took the lock and ran the migration again (a retry),
        // which finds the copy present and may promote it
        UnpromotedCopies racing = whileLookingAt6(() -> finished(Phase.DONE, 2, 30));
        MigrationState before = registry.listMigrationStates().get().get(0);
        racing.process(List.of(before), List.of(1L), active()).get();
        assertTrue(clusters.has("b", 6), "the run that ended anew decides about it");
        assertEquals(List.of(6L), list());
        assertTrue(racing.hasWork(List.of(before), List.of(1L), active()).get(), "not settled: looked at again");
    }

    @Test
    void aCopyPromotedWhileItWasLookedAtIsNotDeleted() throws Exception {
        finished(Phase.DONE, 1, 10);
        copied(6); // its home a holds the same ledger: a copy to delete, unless it becomes home meanwhile
        listed(6);
        UnpromotedCopies racing = whileLookingAt6(() -> promotedToB(6));
        racing.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertTrue(clusters.has("b", 6), "home on b now");
        assertEquals(List.of(6L), list(), "listed still: a home stays on the list");
        racing.process(registry.listMigrationStates().get(), List.of(1L), active()).get();
        assertTrue(clusters.has("b", 6));
        assertFalse(racing.hasWork(registry.listMigrationStates().get(), List.of(1L), active()).get(), "settled");
    }

    /** What a change made meanwhile does. */
    private interface Meanwhile {
        void happen() throws Exception;
    }

    /** Copies whose look at ledger 6's copy on b first lets {@code meanwhile} happen (another broker's work). */
    private UnpromotedCopies whileLookingAt6(Meanwhile meanwhile) {
        LedgerCopier racing = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                if (id == 6 && cluster.equals("b")) {
                    try {
                        meanwhile.happen();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
                return super.facts(id, cluster);
            }
        };
        return new UnpromotedCopies(registry, new ListedCopies(registry, racing, inventory), bed.metrics);
    }
}
