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
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.StoreSnapshot;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The deletion lists a rollback leaves (switch 1 to b, rolled back to a by switch 2), worked on directly: which ids
 * leave a list when they are promoted again, which copies are deleted and which are kept, what each state's count
 * says afterwards, and that nothing is touched while a broker may still read the copies.
 */
class RolledBackCopiesTest {
    private static final long B_FIRST = 1L << 32;
    private static final long A2_FIRST = 12L << 32;

    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private List<String> deletedMetric;
    private RolledBackCopies copies;
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
        deletedMetric = bed.deleted;
        MigrationStates states = new MigrationStates(registry, Clock.systemUTC(), () -> "broker-1",
                new DriverTimer(bed.scheduler));
        copies = new RolledBackCopies(registry, states, new PromotionReversal(registry, bed.copier),
                new ListedCopies(registry, bed.copier, inventory), bed.metrics, Clock.systemUTC());
        bed.activeClusters("a", "b", "c");
        active("a", 2);
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    /** Switch 1 went to b; switch {@code epoch} made {@code cluster} the active one. */
    private void active(String cluster, long epoch) throws Exception {
        var d = registry.readDirective().get();
        SwitchDirective next = new SwitchDirective(1, cluster, "b", epoch, 1, epoch == 1 ? B_FIRST : A2_FIRST);
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(RangeTable.bootstrap("a", 0)
                .with(new IdRange("b", B_FIRST, 1, 0)).with(next.range()))).get();
        registry.write(registry.paths().switchTarget(), next, d.version()).get();
    }

    /** Switch {@code epoch}'s migration to {@code target}, rolled back, its list of copies to delete in chunks. */
    private void rolledBack(long epoch, String target, long deleteAfter, List<List<Long>> chunks) throws Exception {
        int n = chunks.stream().mapToInt(List::size).sum();
        state(epoch, MigrationState.start(epoch, target, "broker-1", 0).moveTo(Phase.ROLLING_BACK, 0)
                .moveTo(Phase.ROLLED_BACK, 0).edit().deletions(n, deleteAfter).build());
        for (int i = 0; i < chunks.size(); i++) {
            chunk(epoch, i, chunks.get(i));
        }
    }

    /** Chunk {@code n} of switch {@code epoch}'s list of copies, as a run wrote it. */
    private void chunk(long epoch, int n, List<Long> ids) throws Exception {
        registry.write(registry.paths().copiesChunk(epoch, n), new io.bcswitch.registry.IdChunk(1, ids), -1).get();
    }

    private void state(long epoch, MigrationState s) throws Exception {
        registry.write(registry.paths().orchestrator(epoch), s, -1).get();
    }

    private MigrationState state(long epoch) throws Exception {
        return registry.read(registry.paths().orchestrator(epoch), MigrationState.class).get().value();
    }

    /** A ledger a issued, its original on a and the copy switch 1 made of it on b. */
    private void copied(long id) {
        clusters.put("a", id, "payload-" + id, "managed-ledger");
        clusters.put("b", id, new FakeClusters.Ledger(true, "payload-" + id,
                clusters.copyMetadata(clusters.get("a", id).custom(), "a")));
    }

    /** A live broker on the latest switch that applied relocation epoch {@code applied}, holding {@code open}. */
    private void broker(String name, long applied, Map<String, List<Long>> open) throws Exception {
        bed.broker(name, 2, "a", applied, open);
    }

    private void process() throws Exception {
        copies.process(registry.listMigrationStates().get()).get();
    }

    @Test
    void idsPromotedAgainLeaveTheRolledBackListsOfThatClusterOnlyAndTheCountsFollow() throws Exception {
        rolledBack(1, "b", 5, List.of(List.of(1L, 2L, 3L)));
        rolledBack(3, "b", 5, List.of(List.of(2L, 4L), List.of(5L, 1L)));
        rolledBack(4, "c", 5, List.of(List.of(1L, 2L)));
        // a rollback whose list was worked off, and a finished migration: their stale lists are not theirs to edit
        state(5, MigrationState.start(5, "b", "broker-1", 0).moveTo(Phase.ROLLING_BACK, 0)
                .moveTo(Phase.ROLLED_BACK, 0));
        chunk(5, 0, List.of(1L));
        state(6, MigrationState.start(6, "b", "broker-1", 0).moveTo(Phase.ROLLING_BACK, 0));
        chunk(6, 0, List.of(1L));

        copies.cancelDeletions("b", List.of(1L, 2L, 9L)).get();

        assertEquals(Map.of(0, List.of(3L)), registry.readCopies(1).get());
        assertEquals(1, state(1).pendingDeletionCount());
        assertEquals(Map.of(0, List.of(4L), 1, List.of(5L)), registry.readCopies(3).get());
        assertEquals(2, state(3).pendingDeletionCount());
        assertEquals(Map.of(0, List.of(1L, 2L)), registry.readCopies(4).get(), "another cluster's list");
        assertEquals(2, state(4).pendingDeletionCount());
        assertEquals(Map.of(0, List.of(1L)), registry.readCopies(5).get());
        assertEquals(0, state(5).pendingDeletionCount());
        assertEquals(Map.of(0, List.of(1L)), registry.readCopies(6).get());

        // ids on no list change nothing at all
        Map<String, String> before = StoreSnapshot.of(bed.store);
        copies.cancelDeletions("b", List.of(9L, 10L)).get();
        assertEquals(before, StoreSnapshot.of(bed.store));
    }

    @Test
    void droppingIdsRewritesOnlyTheChunksThatHeldThemAndSaysHowManyWereListed() throws Exception {
        rolledBack(1, "b", 5, List.of(List.of(1L, 2L), List.of(3L), List.of(4L, 5L)));
        String untouched = registry.paths().copiesChunk(1, 2);
        String version = StoreSnapshot.of(bed.store).get(untouched);

        assertEquals(3, copies.dropFromCopies(1, List.of(2L, 3L, 1L, 7L)).get());
        assertEquals(Map.of(2, List.of(4L, 5L)), registry.readCopies(1).get(), "emptied chunks are gone");
        assertEquals(version, StoreSnapshot.of(bed.store).get(untouched), "a chunk that held none is not rewritten");
        assertEquals(0, copies.dropFromCopies(1, List.of()).get());
        assertEquals(0, copies.dropFromCopies(1, List.of(9L)).get());
    }

    @Test
    void theListsOfSwitchesThatCanNoLongerBeRolledBackAreDropped() throws Exception {
        rolledBack(1, "b", 5, List.of(List.of(1L, 2L), List.of(3L)));
        rolledBack(3, "b", 5, List.of(List.of(4L)));
        rolledBack(4, "b", 5, List.of(List.of(5L)));
        copies.dropCopyLists(List.of(1L, 3L)).get();
        assertEquals(Map.of(), registry.readCopies(1).get());
        assertEquals(Map.of(), registry.readCopies(3).get());
        assertEquals(Map.of(0, List.of(5L)), registry.readCopies(4).get());
    }

    @Test
    void nothingIsTouchedWhileTheClusterIsActiveNoBrokerIsLiveOrOneHasNotAppliedTheFlip() throws Exception {
        copied(1);
        rolledBack(1, "b", 5, List.of(List.of(1L)));

        Map<String, String> before = StoreSnapshot.of(bed.store);
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process(); // no live broker: nobody can say it stopped reading the copies
            assertEquals(before, StoreSnapshot.of(bed.store));

            broker("broker-1", 5, Map.of());
            broker("broker-2", 4, Map.of());
            before = StoreSnapshot.of(bed.store);
            process(); // broker-2 may still route to the copy
            assertEquals(List.of(), log.messages(), "waiting is no failure");
        }
        assertEquals(before, StoreSnapshot.of(bed.store));

        broker("broker-2", 5, Map.of());
        active("b", 3); // switched to b again: its own migration wants the copies
        before = StoreSnapshot.of(bed.store);
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertEquals(List.of(), log.messages(), "waiting is no failure");
        }
        assertEquals(before, StoreSnapshot.of(bed.store));
        assertTrue(clusters.has("b", 1));

        active("a", 4);
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertEquals(List.of("switch epoch=1 rollback: deleted 1 copy/copies from bookie-cluster=b, 0 left"),
                    log.messages());
        }
        assertFalse(clusters.has("b", 1));
        assertTrue(clusters.has("a", 1));
        assertEquals(Map.of(), registry.readCopies(1).get());
        assertEquals(0, state(1).pendingDeletionCount());
        assertEquals(List.of("b:1"), deletedMetric);
    }

    @Test
    void onlyCopiesWhoseHomeHoldsTheSameLedgerAreDeletedAndTheListKeepsWhatMustWait() throws Exception {
        for (long id = 1; id <= 7; id++) {
            copied(id);
        }
        clusters.put("a", 2, "payload-2 rewritten", "managed-ledger"); // its home holds something else
        references = List.of(new LedgerReference(2, LedgerKind.SCHEMA, "t/ns/s2")); // and the id is in use
        clusters.delete(3, "b").get(); // already gone
        long issuedByB = B_FIRST + 1;
        clusters.put("b", issuedByB, "b's own", "managed-ledger");
        // 5 moved on to c since (c does not answer now); 6 is home on b again
        registry.updateRelocations(List.of(5L, 6L), (id, cur) -> Optional.of(id == 5
                ? new Relocation(Relocation.FORMAT_VERSION, 5, "c", "a", "LEDGER", 3, 0)
                : new Relocation(Relocation.FORMAT_VERSION, 6, "b", "a", "LEDGER", 3, 0))).get();
        clusters.put("c", 5, "payload-5", "managed-ledger");
        clusters.unreachable("c", true);
        rolledBack(1, "b", 5, List.of(List.of(1L, 2L, 3L), List.of(4L, 5L, 6L, issuedByB), List.of(7L)));
        broker("broker-1", 5, Map.of("b", List.of(4L))); // reads 4's copy on b still

        List<String> said;
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            said = log.messages().stream().sorted().toList();
        }

        assertFalse(clusters.has("b", 1), "its home a holds the same closed ledger");
        assertFalse(clusters.has("b", 7));
        assertTrue(clusters.has("b", 2), "its home holds other content and it is referenced: the copy may be the only "
                + "one");
        assertTrue(clusters.has("b", 4), "a broker holds it open");
        assertTrue(clusters.has("b", 5), "its home does not answer");
        assertTrue(clusters.has("b", 6), "home on b");
        assertTrue(clusters.has("b", issuedByB), "b issued it");
        for (long id : List.of(1L, 2L, 4L, 6L, 7L)) {
            assertTrue(clusters.has("a", id), "original " + id);
        }
        assertEquals(Map.of(1, List.of(4L, 5L)), registry.readCopies(1).get(), "what waits stays listed");
        assertEquals(2, state(1).pendingDeletionCount());
        assertEquals(List.of("b:2"), deletedMetric);
        assertEquals(3, said.size(), String.valueOf(said));
        assertTrue(said.get(0).startsWith("ledger=5 bookie-cluster=b: cannot look at the rolled-back copy yet: "),
                said.get(0));
        assertEquals("switch epoch=1 rollback: deleted 2 copy/copies from bookie-cluster=b, 2 left", said.get(1));
        assertEquals("switch epoch=1 rollback: ledger=2 is kept on bookie-cluster=b: its home does not hold the same "
                + "ledger and it may be referenced (cleanup decides about it)", said.get(2));

        clusters.unreachable("c", false);
        broker("broker-1", 5, Map.of());
        process();
        assertFalse(clusters.has("b", 4));
        assertFalse(clusters.has("b", 5), "c holds the same ledger now");
        assertTrue(clusters.has("c", 5));
        assertEquals(Map.of(), registry.readCopies(1).get());
        assertEquals(0, state(1).pendingDeletionCount());
        assertEquals(List.of("b:2", "b:2"), deletedMetric);
    }

    /**
     * A copy whose ledger Pulsar deleted at its home while it was being moved (a cursor ledger rolled over, then the
     * rollback): nothing can ever read it. Deleted when a complete inventory says nothing references it, as a
     * superseded migration's copy is (the same {@link ListedCopies}; its test has the incomplete inventory); kept for
     * cleanup while it is referenced. Before, it was kept whatever the references, and verify named it ORPHAN_COPY.
     */
    @Test
    void aCopyWhoseHomeLostTheLedgerIsDeletedOnlyWhenNothingReferencesIt() throws Exception {
        for (long id = 1; id <= 3; id++) {
            copied(id);
            clusters.delete(id, "a").get(); // Pulsar deleted it where it is home
        }
        references = List.of(new LedgerReference(2, LedgerKind.CURSOR, "t/ns/p/c2"));
        rolledBack(1, "b", 5, List.of(List.of(1L, 2L, 3L)));
        broker("broker-1", 5, Map.of());

        process();

        assertFalse(clusters.has("b", 1), "nothing references it: nothing can ever read it");
        assertFalse(clusters.has("b", 3));
        assertTrue(clusters.has("b", 2), "referenced: it may be the last copy of data in use");
        assertEquals(Map.of(), registry.readCopies(1).get(), "every id decided on");
        assertEquals(0, state(1).pendingDeletionCount());
        assertEquals(List.of("b:2"), deletedMetric);
    }

    @Test
    void aPromotionThatRacedTheRollbackIsFlippedBackFirstAndItsCopyDeletedOnlyAfterTheBrokersFollowed()
            throws Exception {
        copied(1);
        copied(2);
        clusters.delete(2, "a").get(); // 2's original is gone: its copy on b is all there is
        rolledBack(1, "b", 0, List.of(List.of(1L, 2L)));
        // a pass promoted both to b after the rollback flipped the others back
        registry.updateRelocations(List.of(1L, 2L), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "LEDGER", 1, 0))).get();
        broker("broker-1", 0, Map.of());
        long epochBefore = registry.readRelocationEpoch().get();

        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("waits for the next pass")),
                    String.valueOf(log.messages()));
        }

        assertEquals(Optional.of("a"), home(1), "routed back to its original");
        assertEquals(Optional.of("b"), home(2), "it stays home where its only copy is");
        long flipped = registry.readRelocationEpoch().get();
        assertEquals(epochBefore + 1, flipped, "announced");
        assertEquals(null, registry.readRelocationEpochRecord().get().changed(), "every broker re-reads the table");
        assertEquals(flipped, state(1).deleteAfterRelocationEpoch());
        assertEquals(Map.of(0, List.of(1L)), registry.readCopies(1).get(), "the one that stays is off the list");
        assertEquals(1, state(1).pendingDeletionCount());
        assertTrue(clusters.has("b", 1), "not deleted before every broker routes it back");
        assertEquals(List.of(), deletedMetric);

        process(); // broker-1 has not applied the flip yet
        assertTrue(clusters.has("b", 1));
        broker("broker-1", flipped, Map.of());
        process();
        assertFalse(clusters.has("b", 1));
        assertTrue(clusters.has("a", 1));
        assertTrue(clusters.has("b", 2));
        assertEquals(0, state(1).pendingDeletionCount());
    }

    /**
     * The flip of a straggling promotion is announced by a relocation epoch; when that bump is lost, the brokers still
     * route the ledger to the copy: nothing is deleted until a bump made after the flip is applied by every broker.
     */
    @Test
    void aCopyFlippedBackIsNotDeletedUntilABumpAfterTheFlipIsAppliedEvenWhenTheFirstBumpIsLost() throws Exception {
        copied(1);
        rolledBack(1, "b", 0, List.of(List.of(1L)));
        // a pass promoted 1 to b after the rollback flipped the others back, and announced it: broker-1 reads it on b
        registry.updateRelocations(List.of(1L), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "LEDGER", 1, 0))).get();
        long promoted = registry.bumpRelocationEpoch(0, List.of(1L)).get();
        broker("broker-1", promoted, Map.of());
        // the bump right after the flip fails once
        java.util.concurrent.atomic.AtomicBoolean flipped = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean lost = new java.util.concurrent.atomic.AtomicBoolean();
        RegistryStore failing = new RegistryStore(new io.bcswitch.registry.ForwardingPort(
                new io.bcswitch.adapter.PulsarMetadataPort(bed.store)) {
            @Override
            public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean eph) {
                if (path.startsWith(registry.paths().relocations() + "/")) {
                    flipped.set(true);
                } else if (path.equals(registry.paths().relocationEpoch()) && flipped.get()
                        && lost.compareAndSet(false, true)) {
                    return CompletableFuture.failedFuture(new IllegalStateException("the bump is lost"));
                }
                return super.put(path, value, expected, eph);
            }

            @Override
            public CompletableFuture<Void> delete(String path, Optional<Long> expected) {
                if (path.startsWith(registry.paths().relocations() + "/")) {
                    flipped.set(true);
                }
                return super.delete(path, expected);
            }
        }, registry.paths());
        RolledBackCopies copies = new RolledBackCopies(failing, new MigrationStates(failing, Clock.systemUTC(),
                () -> "broker-1", new DriverTimer(bed.scheduler)), new PromotionReversal(failing, bed.copier),
                new ListedCopies(failing, bed.copier, inventory), bed.metrics, Clock.systemUTC());

        copies.process(registry.listMigrationStates().get()).get();
        assertTrue(lost.get(), "the bump after the flip was lost");
        assertEquals(Optional.of("a"), home(1), "flipped back");
        copies.process(registry.listMigrationStates().get()).get();
        assertTrue(clusters.has("b", 1), "broker-1 still routes ledger 1 to its copy on b");

        long announced = registry.readRelocationEpoch().get();
        assertTrue(announced > promoted, "a bump after the flip: " + announced);
        copies.process(registry.listMigrationStates().get()).get();
        assertTrue(clusters.has("b", 1), "not before broker-1 applied it");
        broker("broker-1", announced, Map.of());
        copies.process(registry.listMigrationStates().get()).get();
        assertFalse(clusters.has("b", 1));
        assertTrue(clusters.has("a", 1));
        assertEquals(0, state(1).pendingDeletionCount());
    }

    @Test
    void theListAnEarlierVersionKeptInsideTheStateIsWorkedOffToo() throws Exception {
        copied(1);
        copied(2);
        state(1, new MigrationState(1, 1, "b", Phase.ROLLED_BACK, "broker-1", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null,
                List.of(), List.of(1L), 5, 0, 0, null, null, 0, 0, 0, 0));
        broker("broker-1", 5, Map.of());
        process();
        assertFalse(clusters.has("b", 1));
        assertTrue(clusters.has("a", 1));
        assertTrue(clusters.has("b", 2), "on no list");
        assertEquals(List.of("b:1"), deletedMetric);
        assertFalse(state(1).deletionsPending());
    }

    @Test
    void unpromotingRoutesEachLedgerBackToTheCopyItWasReadFromBeforeAndSaysWhichWentAndWhichStayed()
            throws Exception {
        copied(1); // back to its original on a
        copied(2);
        clusters.put("c", 2, "payload-2", "managed-ledger"); // home on c before switch 1: back to c
        copied(3);
        clusters.delete(3, "a").get(); // its original is gone: it stays home on b
        copied(4); // promoted after the rollback read the relocation table: only the copy list names it
        copied(7); // moved on to c by switch 3 while the rollback looked
        registry.updateRelocations(List.of(1L, 2L, 3L, 5L, 6L, 7L), (id, cur) -> Optional.of(switch (id.intValue()) {
            case 2 -> new Relocation(Relocation.FORMAT_VERSION, 2, "b", "a", "LEDGER", 1, 0, "c", 0L);
            case 5 -> new Relocation(Relocation.FORMAT_VERSION, 5, "b", "a", "LEDGER", 3, 0); // another switch's
            case 6 -> new Relocation(Relocation.FORMAT_VERSION, 6, "c", "a", "LEDGER", 1, 0); // not to b
            default -> new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "LEDGER", 1, 0);
        })).get();
        RegistryView listed = RegistryView.read(registry).get();
        chunk(1, 0, List.of(1L, 2L, 3L, 4L, 7L));
        registry.updateRelocations(List.of(4L), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, 4, "b", "a", "LEDGER", 1, 0))).get();
        PromotionReversal reversal = new PromotionReversal(registry, new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Optional<LedgerCopier.LedgerFacts>> facts(long id, String cluster) {
                if (id == 7) {
                    registry.updateRelocations(List.of(7L), (x, cur) -> Optional.of(
                            new Relocation(Relocation.FORMAT_VERSION, 7, "c", "a", "LEDGER", 3, 0))).join();
                }
                return super.facts(id, cluster);
            }
        });

        PromotionReversal.Unpromoted u = reversal.unpromote(1, "b", listed).get();

        assertEquals(List.of(1L, 2L, 4L, 7L), u.flipped(), "no longer home on b");
        assertEquals(List.of(3L), u.stayed());
        RegistryView after = RegistryView.read(registry).get();
        assertFalse(after.relocations().containsKey(1L), "home where a issued it");
        assertEquals(new Relocation(Relocation.FORMAT_VERSION, 2, "c", "a", "LEDGER", 0, 0),
                after.relocations().get(2L));
        assertEquals(Optional.of("b"), after.home(3));
        assertFalse(after.relocations().containsKey(4L));
        assertEquals(Optional.of("b"), after.home(5));
        assertEquals(Optional.of("c"), after.home(6));
        assertEquals(new Relocation(Relocation.FORMAT_VERSION, 7, "c", "a", "LEDGER", 3, 0),
                after.relocations().get(7L), "the newer switch's move is left as it is");
    }

    @Test
    void aRetiredClustersListIsDroppedAndItsCopiesLeftThere() throws Exception {
        copied(1);
        rolledBack(1, "b", 5, List.of(List.of(1L)));
        broker("broker-1", 5, Map.of());
        registry.update(registry.paths().cluster("b"), BookieClusterRecord.class, cur -> cur.map(c ->
                c.withStatus(ClusterStatus.DEPRECATED))).get();
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            process();
            assertEquals(List.of("switch epoch=1 rollback: bookie-cluster=b is DEPRECATED; its 1 rolled-back "
                    + "copy/copies are left on it"), log.messages());
        }
        assertTrue(clusters.has("b", 1));
        assertEquals(Map.of(), registry.readCopies(1).get());
        assertEquals(0, state(1).pendingDeletionCount());
        assertEquals(5, state(1).deleteAfterRelocationEpoch());
    }

    private Optional<String> home(long id) throws Exception {
        return io.bcswitch.registry.RegistryView.read(registry).get().home(id);
    }
}
