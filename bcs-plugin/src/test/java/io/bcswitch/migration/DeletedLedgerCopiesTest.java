package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
    private MigrationOrchestrator orchestrator;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        LedgerInventory inventory = new LedgerInventory() {
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

        new DeletedLedgerCopies(orchestrator, 1, "b").discard().get();

        TreeSet<Long> expected = new TreeSet<>(before);
        expected.removeAll(List.of(1L, 5L));
        assertEquals(expected, onB());
        assertEquals(List.of(2L), clusters.list("a").get(), "nothing but copies on b is deleted");
    }

    @Test
    void nothingIsDeletedOnceTheMigrationEndedOrANewerSwitchWasMade() throws Exception {
        copyOnB(1, "a"); // Pulsar deleted 1 on a: its copy would go
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.map(s ->
                s.moveTo(Phase.DONE, 0))).get();
        new DeletedLedgerCopies(orchestrator, 1, "b").discard().get();
        assertEquals(new TreeSet<>(List.of(1L)), onB(), "a finished migration deletes nothing more");

        owner("broker-1");
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                new SwitchDirective(1, "a", "b", 2, 2, 12L << 32))).get();
        new DeletedLedgerCopies(orchestrator, 1, "b").discard().get();
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
        references = List.of(new LedgerReference(8, LedgerKind.DATA, "t/ns/x"));

        pictureComplete = false; // not every reference could be learnt: nothing promoted is deleted
        new DeletedLedgerCopies(orchestrator, 1, "b").discard().get();
        assertEquals(new TreeSet<>(List.of(7L, 8L, 9L, 10L, 11L)), onB());

        pictureComplete = true;
        owner("broker-2"); // another broker took the migration over: this one deletes nothing
        new DeletedLedgerCopies(orchestrator, 1, "b").discard().get();
        assertEquals(new TreeSet<>(List.of(7L, 8L, 9L, 10L, 11L)), onB());

        owner("broker-1");
        new DeletedLedgerCopies(orchestrator, 1, "b").discard().get();
        assertEquals(new TreeSet<>(List.of(8L, 9L, 10L, 11L)), onB());
    }
}
