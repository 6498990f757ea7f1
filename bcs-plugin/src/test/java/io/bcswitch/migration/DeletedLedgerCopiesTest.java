package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
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
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Copies of ledgers Pulsar deleted while switch 1 (a to b) moved them: which ones on b are deleted, on a registry
 * written directly. A copy goes only when it carries the migration's mark, b neither issued it nor is its home
 * (or it is a home this switch promoted whose old home lost it and nothing references), and every cluster that
 * could still hold the ledger answered that it does not.
 */
class DeletedLedgerCopiesTest {
    private static final long B_FIRST = 1L << 32;
    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private volatile List<LedgerReference> references = List.of();
    private volatile boolean pictureComplete = true;
    private LedgerInventory inventory;
    private MigrationOrchestrator orchestrator;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        inventory = new LedgerInventory() {
            @Override
            public CompletableFuture<List<LedgerReference>> references() {
                return CompletableFuture.completedFuture(references);
            }

            @Override
            public CompletableFuture<Picture> picture() {
                return CompletableFuture.completedFuture(new Picture(references, pictureComplete ? List.of()
                        : List.of(new Unknown("t/ns/compacted", 99, "its owner does not answer"))));
            }
        };
        orchestrator = bed.orchestrator(inventory);
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(RangeTable.bootstrap("a", 0)
                .with(new IdRange("b", B_FIRST, 1, 0)))).get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 1, B_FIRST), -1).get();
        owner("broker-1");
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    private void owner(String broker) throws Exception {
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> Optional.of(
                MigrationState.start(1, "b", broker, 0).moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0))).get();
    }

    /** A copy on b carrying the migration's mark, made from {@code from}. */
    private void copyOnB(long id, String from) {
        clusters.put("b", id, new FakeClusters.Ledger(true, "payload-" + id,
                clusters.copyMetadata(Map.of(), from)));
    }

    private void promotedToB(long... ids) throws Exception {
        List<Long> list = java.util.Arrays.stream(ids).boxed().toList();
        registry.updateRelocations(list, (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "LEDGER", 1, 0))).get();
    }

    private TreeSet<Long> onB() throws Exception {
        return new TreeSet<>(clusters.list("b").get());
    }

    @Test
    void onlyMarkedCopiesOfLedgersNoClusterHoldsAnyMoreAreDeleted() throws Exception {
        copyOnB(1, "a"); // Pulsar deleted 1 on a: its copy goes
        copyOnB(2, "a");
        clusters.put("a", 2, "payload-2", "managed-ledger"); // still on a: the copy stays
        clusters.put("b", 3, "not ours", "managed-ledger"); // no mark: not ours to delete
        copyOnB(4, "c");
        clusters.put("c", 4, "payload-4", "managed-ledger"); // gone from its home a, still where it was copied from
        copyOnB(5, "c"); // gone from a and from c: goes
        copyOnB(6, "a");
        registry.updateRelocations(List.of(6L), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, 6, "d", "a", "LEDGER", 0, 0))).get();
        clusters.unreachable("d", true); // 6's home does not answer: proves nothing
        copyOnB(B_FIRST + 1, "a"); // an id b issued
        TreeSet<Long> before = onB();

        List<String> said;
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
            said = log.messages();
        }

        TreeSet<Long> expected = new TreeSet<>(before);
        expected.removeAll(List.of(1L, 5L));
        assertEquals(expected, onB());
        assertEquals(List.of(2L), clusters.list("a").get(), "nothing but copies on b is deleted");
        // what the operator reads: each deletion with the clusters that no longer hold the ledger, the one copy that
        // could not be judged, and the count of the copies deleted (not of the ones looked at)
        assertEquals(4, said.size(), String.valueOf(said));
        assertTrue(said.contains("switch epoch=1 ledger=1 bookie-cluster=b: deleting its copy: Pulsar deleted the "
                + "ledger (no longer on a) before the copy became its home"), String.valueOf(said));
        assertTrue(said.contains("switch epoch=1 ledger=5 bookie-cluster=b: deleting its copy: Pulsar deleted the "
                + "ledger (no longer on a nor on c) before the copy became its home"), String.valueOf(said));
        assertTrue(said.stream().anyMatch(m -> m.startsWith("switch epoch=1 ledger=6 bookie-cluster=b: could not "
                + "tell whether its copy is left over from a deleted ledger; it stays: ")), String.valueOf(said));
        assertEquals("switch epoch=1 bookie-cluster=b: deleted 2 copy/copies of ledgers Pulsar deleted before they "
                + "were moved", said.get(3));
    }

    @Test
    void aCopyPromotedWhileTheDiscardLookedIsNotDeleted() throws Exception {
        copyOnB(1, "a"); // gone from a, but a pass promotes the copy right after the discard read the table
        MigrationOrchestrator racing = bed.orchestrator(inventory, new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<List<Long>> list(String cluster) {
                registry.updateRelocations(List.of(1L), (id, cur) -> Optional.of(
                        new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "LEDGER", 1, 0))).join();
                return super.list(cluster);
            }
        });
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(racing, 1, "b").discard(0).get();
            assertEquals(List.of(), log.messages());
        }
        assertEquals(new TreeSet<>(List.of(1L)), onB(), "home on b now: the only copy there is");
    }

    @Test
    void aDiscardThatFindsNothingToDeleteSaysNothing() throws Exception {
        copyOnB(2, "a");
        clusters.put("a", 2, "payload-2", "managed-ledger"); // still on a: the copy stays
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
            assertEquals(List.of(), log.messages());
        }
        assertEquals(new TreeSet<>(List.of(2L)), onB());
    }

    @Test
    void aPromotedCopyStaysWhenItsOldHomeDoesNotAnswer() throws Exception {
        copyOnB(0, "a");
        copyOnB(7, "a");
        promotedToB(0, 7);
        clusters.unreachable("a", true); // a does not answer: its ledgers may still be there
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
            assertEquals(List.of(), log.messages());
        }
        assertEquals(new TreeSet<>(List.of(0L, 7L)), onB());
    }

    @Test
    void nothingIsDeletedOnceTheMigrationEndedOrANewerSwitchWasMade() throws Exception {
        copyOnB(1, "a"); // Pulsar deleted 1 on a: its copy would go
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.map(s ->
                s.moveTo(Phase.DONE, 0))).get();
        new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
        assertEquals(new TreeSet<>(List.of(1L)), onB(), "a finished migration deletes nothing more");

        owner("broker-1");
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                new SwitchDirective(1, "a", "b", 2, 2, 12L << 32))).get();
        new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
        assertEquals(new TreeSet<>(List.of(1L)), onB(), "the next switch decides about b");
    }

    @Test
    void aPromotedCopyWhoseOldHomeLostTheLedgerGoesOnlyWhenNothingReferencesIt() throws Exception {
        copyOnB(7, "a"); // promoted, gone from a, unreferenced: goes
        copyOnB(8, "a"); // promoted, gone from a, referenced: its only copy, stays
        copyOnB(9, "a"); // promoted, still on a: stays
        clusters.put("a", 9, "payload-9", "managed-ledger");
        clusters.put("b", 10, "promoted but not ours", "managed-ledger"); // no mark: stays
        promotedToB(7, 8, 9, 10);
        copyOnB(11, "a"); // home on b by an earlier switch (epoch 0): not this switch's to judge
        registry.updateRelocations(List.of(11L), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, 11, "b", "a", "LEDGER", 0, 0))).get();
        long issuedByB = B_FIRST + 12; // an id b issued, home on b again by this switch: b's own, never judged here
        copyOnB(issuedByB, "a");
        promotedToB(issuedByB);
        references = List.of(new LedgerReference(8, LedgerKind.DATA, "t/ns/x"));

        pictureComplete = false; // not every reference could be learnt: nothing promoted is deleted
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
            assertEquals(List.of("switch epoch=1 bookie-cluster=b: ledger(s) [7, 8] were deleted on their old home "
                    + "while their copies here were promoted; the copies stay until the next run: not every "
                    + "reference could be learnt"), log.messages());
        }
        assertEquals(new TreeSet<>(List.of(7L, 8L, 9L, 10L, 11L, issuedByB)), onB());

        pictureComplete = true;
        owner("broker-2"); // another broker took the migration over: this one deletes nothing
        new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
        assertEquals(new TreeSet<>(List.of(7L, 8L, 9L, 10L, 11L, issuedByB)), onB());

        owner("broker-1");
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(orchestrator, 1, "b").discard(0).get();
            assertEquals(List.of("switch epoch=1 ledger=7 bookie-cluster=b: deleting its copy: Pulsar deleted the "
                    + "ledger through its old home while the copy was promoted", "switch epoch=1 ledger=8 "
                    + "bookie-cluster=b: its old home no longer has it, but it is referenced: its copy here is its "
                    + "only copy and stays"), log.messages().stream().sorted().toList());
        }
        assertEquals(new TreeSet<>(List.of(8L, 9L, 10L, 11L, issuedByB)), onB());
    }

    @Test
    void theEndOfPromoteSaysWhyTheCopyOfALedgerItFoundGoneStays() throws Exception {
        copyOnB(2, "a");
        clusters.put("a", 2, "payload-2", "managed-ledger"); // back on a (or never gone): the copy stays
        clusters.put("b", 3, "not ours", "managed-ledger"); // no mark
        copyOnB(4, "c");
        clusters.put("c", 4, "payload-4", "managed-ledger"); // still where it was copied from
        copyOnB(B_FIRST + 1, "a"); // an id b issued
        List<String> said;
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            new DeletedLedgerCopies(orchestrator, 1, "b").discard(0, java.util.Set.of(2L, 3L, 4L, 8L, B_FIRST + 1))
                    .get();
            said = log.messages();
        }
        assertEquals(List.of(
                "switch epoch=1 ledger=" + (B_FIRST + 1) + " bookie-cluster=b: its copy is not looked at here: home b, "
                        + "issued by b",
                "switch epoch=1 ledger=2 bookie-cluster=b: its copy stays: still on its home a",
                "switch epoch=1 ledger=3 bookie-cluster=b: its copy stays: not marked as a copy",
                "switch epoch=1 ledger=4 bookie-cluster=b: its copy stays: still on c, which it was copied from"),
                said.stream().sorted(java.util.Comparator.comparing((String m) -> !m.contains("not looked at"))
                        .thenComparing(m -> m)).toList(), "8 never had a copy there: nothing is said of it");
        assertTrue(clusters.has("b", 2) && clusters.has("b", 3) && clusters.has("b", 4));
    }
}
