package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.StoreSnapshot;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cleanup's decision for every kind of ledger an inactive cluster may hold, and how a cleanup counts, batches and
 * stops, on a registry written directly: switch 1 moved from a to b long ago, its migration finished, one broker
 * applied everything. Each ledger is made for one rule; the expected plan names exactly the ones that may go.
 */
class CleanupServiceTest {
    private static final long B_FIRST = 1L << 32;
    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private volatile List<LedgerReference> references = List.of();
    private List<String> deletedMetric;
    private MigrationOrchestrator orchestrator;
    private CleanupService cleanup;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        deletedMetric = bed.deleted;
        orchestrator = bed.orchestrator(() -> CompletableFuture.completedFuture(references));
        cleanup = new CleanupService(registry, () -> CompletableFuture.completedFuture(references), bed.copier,
                orchestrator, drain(), RegistryBed.CONFIG, bed.metrics, Clock.systemUTC());
        bed.activeClusters("a", "b", "c");
        SwitchDirective d = new SwitchDirective(1, "b", "a", 1, 1, B_FIRST); // long ago: past the rollback window
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(RangeTable.bootstrap("a", 0)
                .with(new IdRange("b", B_FIRST, 1, 0)))).get();
        registry.write(registry.paths().switchTarget(), d, -1).get();
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE, 0), -1).get();
        broker(1, Map.of());
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    private DrainReports drain() {
        return new DrainReports(registry, () -> CompletableFuture.completedFuture(references), clusters,
                ml -> CompletableFuture.completedFuture(new RetentionLookup.Retention(0, "test")));
    }

    /** broker-1 finished the cutover of switch 1, applied relocation epoch {@code applied}, holds {@code open}. */
    private void broker(long applied, Map<String, List<Long>> open) throws Exception {
        bed.broker("broker-1", 1, "b", applied, open);
    }

    private void relocatedToB(long... ids) throws Exception {
        List<Long> list = java.util.Arrays.stream(ids).boxed().toList();
        registry.updateRelocations(list, (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "LEDGER", 1, 0))).get();
        registry.bumpRelocationEpoch(0, list).get();
    }

    private static FakeClusters.Ledger made(boolean closed, String payload, String component, String copyOf) {
        Map<String, byte[]> custom = new TreeMap<>();
        if (component != null) {
            custom.put("application", "pulsar".getBytes());
            custom.put("component", component.getBytes());
        }
        if (copyOf != null) {
            custom.put(FakeClusters.COPY_OF, copyOf.getBytes());
        }
        return new FakeClusters.Ledger(closed, payload, custom);
    }

    private static LedgerReference ref(long id) {
        return new LedgerReference(id, LedgerKind.DATA, "t/ns/x");
    }

    /** One ledger on a for each rule, and what cleanup of a may delete of them. */
    private Map<Long, String> everyKindOnA() throws Exception {
        long strayCopy = B_FIRST + 6;
        long strayNotOurs = B_FIRST + 7;
        long otherRange = B_FIRST + 5;
        clusters.put("a", 1, "home here", "managed-ledger"); // referenced, home on a
        for (long id : List.of(2L, 3L, 4L)) {
            clusters.put("a", id, "moved-" + id, "managed-ledger"); // referenced, relocated to b
        }
        clusters.put("b", 2, made(true, "moved-2", "managed-ledger", "a")); // the same closed ledger
        clusters.put("b", 3, made(true, "moved-3 but longer", "managed-ledger", "a")); // different
        // 4's copy on b is missing
        relocatedToB(2, 3, 4);
        clusters.put("a", 5, "left over", "managed-ledger");
        clusters.put("a", 6, "left over", "schema");
        clusters.put("a", 7, "left over", "compacted-ledger");
        clusters.put("a", 8, made(true, "another application's", null, null));
        clusters.put("a", 9, made(false, "open", "managed-ledger", null));
        clusters.put("a", 10, made(true, "a copy of ours", "managed-ledger", "c"));
        clusters.put("a", 11, "read by a broker", "managed-ledger");
        clusters.put("a", otherRange, "b's id", "managed-ledger"); // unreferenced, an id b issued
        clusters.put("a", strayCopy, made(true, "copy", "managed-ledger", "b"));
        clusters.put("a", strayNotOurs, "b's id", "managed-ledger");
        references = List.of(ref(1), ref(2), ref(3), ref(4), ref(strayCopy), ref(strayNotOurs));
        broker(1, Map.of("a", List.of(11L)));
        Map<Long, String> deletable = new TreeMap<>();
        deletable.put(2L, "RELOCATED");
        deletable.put(5L, "UNREFERENCED");
        deletable.put(6L, "UNREFERENCED");
        deletable.put(10L, "UNREFERENCED");
        deletable.put(strayCopy, "STRAY_COPY");
        return deletable;
    }

    private static Map<Long, String> byId(List<CleanupTarget> targets) {
        return targets.stream().collect(Collectors.toMap(CleanupTarget::ledgerId, CleanupTarget::reason, (x, y) -> {
            throw new AssertionError("listed twice: " + targets);
        }, TreeMap::new));
    }

    @Test
    void onlyRelocatedOriginalsStrayCopiesAndUnreferencedLedgersPulsarOrThePluginMadeAreTargets() throws Exception {
        Map<Long, String> deletable = everyKindOnA();
        assertEquals(deletable, byId(cleanup.targets("a").get()));
        clusters.put("c", 40, made(true, "a copy of ours", "managed-ledger", "a"));
        clusters.put("c", 41, "an id c did not issue: not c's to delete", "managed-ledger");
        List<CleanupTarget> inactive = cleanup.targetsOnInactiveClusters().get();
        assertTrue(inactive.stream().noneMatch(t -> t.cluster().equals("b")), "never the active cluster");
        assertEquals(deletable, byId(inactive.stream().filter(t -> t.cluster().equals("a")).toList()));
        assertEquals(List.of(new CleanupTarget(40, "c", "UNREFERENCED")),
                inactive.stream().filter(t -> t.cluster().equals("c")).toList());
    }

    @Test
    void relocatedOriginalsWaitUntilEveryLiveBrokerRoutesWithTheirRelocation() throws Exception {
        Map<Long, String> deletable = everyKindOnA();
        broker(0, Map.of("a", List.of(11L)));
        deletable.remove(2L);
        deletable.remove(B_FIRST + 6);
        assertEquals(deletable, byId(cleanup.targets("a").get()));
    }

    @Test
    void relocatedOriginalsWaitWhileAChangeOfTheRelocationTableIsNotAnnounced() throws Exception {
        Map<Long, String> deletable = everyKindOnA();
        // a change of the table is being made, or its bump was lost: broker-1 may route by an older table
        registry.markRelocationChange(0).get();
        Map<Long, String> waiting = new TreeMap<>(deletable);
        waiting.remove(2L);
        waiting.remove(B_FIRST + 6);
        assertEquals(waiting, byId(cleanup.targets("a").get()));
        long announced = registry.bumpRelocationEpoch(0, null).get();
        assertEquals(waiting, byId(cleanup.targets("a").get()), "broker-1 has not applied it yet");
        broker(announced, Map.of("a", List.of(11L)));
        assertEquals(deletable, byId(cleanup.targets("a").get()));
    }

    @Test
    void aCleanupDeletesThePlanCountsWhatItKeptClaimsTheOriginalsAndSaysWhy() throws Exception {
        Map<Long, String> deletable = everyKindOnA();
        CleanupResult r = cleanup.cleanup("a", false, 0, false).get();
        assertEquals(deletable, byId(r.targets()));
        assertEquals(deletable.size(), r.deleted());
        assertEquals(9, r.kept(), String.valueOf(r)); // 14 ledgers on a
        assertEquals(List.of(), r.errors());
        assertFalse(r.deprecated(), "a still holds ledgers the brokers read there");
        for (long id : deletable.keySet()) {
            assertFalse(clusters.has("a", id), "deleted: " + id);
        }
        assertEquals(14 - deletable.size(), clusters.list("a").get().size());
        assertEquals(List.of("a:" + deletable.size()), deletedMetric);
        assertEquals(1, orchestrator.readState(1).get().value().originalsDeleted(), "the one relocated original");
        String notes = String.join("\n", r.notes());
        assertTrue(notes.contains("ledger 11 is open on broker(s) [broker-1]"), notes);
        assertTrue(notes.contains("ledger 3: its home copy on b is different"), notes);
        assertTrue(notes.contains("ledger 4: its home copy on b is missing"), notes);
    }

    @Test
    void aCleanupStopsAtTheBatchAfterASwitchAndReportsWhatItDidAndWhy() throws Exception {
        int n = CleanupService.BATCH * 2 + 50;
        for (long id = 100; id < 100 + n; id++) {
            clusters.put("a", id, "left over", "managed-ledger");
        }
        long switchAt = 100 + CleanupService.BATCH + 10; // in the second batch
        CleanupService switching = new CleanupService(registry, () -> CompletableFuture.completedFuture(references),
                new FakeClusters.Delegating(bed.copier) {
                    @Override
                    public CompletableFuture<Void> delete(long id, String cluster) {
                        if (id == switchAt) {
                            registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                                    new SwitchDirective(1, "c", "b", 2, 2, 9L << 32))).join();
                        }
                        return super.delete(id, cluster);
                    }
                }, orchestrator, drain(), RegistryBed.CONFIG, MigrationMetrics.NONE, Clock.systemUTC());
        CleanupResult r = switching.cleanup("a", false, 0, true).get();
        assertEquals(CleanupService.BATCH * 2, r.deleted(), "the batch under way is finished, no other begun");
        assertEquals(50, r.kept());
        assertEquals(1, r.errors().size(), String.valueOf(r.errors()));
        assertTrue(r.errors().get(0).contains("a switch was made while cleanup ran"), r.errors().get(0));
        assertEquals(50, clusters.list("a").get().size());
    }

    @Test
    void maxDeletionsBoundsTheDeletionsAndWhatWasNotChosenIsNotCountedAsKept() throws Exception {
        for (long id = 100; id < 110; id++) {
            clusters.put("a", id, "left over", "managed-ledger");
        }
        clusters.put("a", 8, made(true, "another application's", null, null));
        CleanupResult r = cleanup.cleanup("a", false, 4, true).get();
        assertEquals(4, r.deleted());
        assertEquals(4, r.targets().size());
        assertEquals(1, r.kept());
        assertEquals(7, clusters.list("a").get().size());
        CleanupResult all = cleanup.cleanup("a", false, 10, true).get();
        assertEquals(6, all.deleted(), "the ten that could go, at most ten at a time");
        assertEquals(List.of(8L), clusters.list("a").get());
    }

    @Test
    void aClusterNameThatIsInvalidUnknownOrActiveIsRefusedAndNothingChanges() throws Exception {
        clusters.put("a", 5, "left over", "managed-ledger");
        Map<String, String> before = StoreSnapshot.of(bed.store);
        assertRefused(cleanup.cleanup("no/such", false, 0, true), "must match");
        assertRefused(cleanup.cleanup("zz", false, 0, true), "'zz' is not registered");
        assertRefused(cleanup.targets("zz"), "'zz' is not registered");
        assertRefused(cleanup.cleanup("b", false, 0, true), "'b' is the active cluster");
        assertRefused(cleanup.targets("b"), "'b' is the active cluster");
        assertEquals(before, StoreSnapshot.of(bed.store));
        assertTrue(clusters.has("a", 5));
    }

    private CleanupService cleanupWith(LedgerCopier copier, Clock clock) {
        return new CleanupService(registry, () -> CompletableFuture.completedFuture(references), copier, orchestrator,
                drain(), RegistryBed.CONFIG, bed.metrics, clock);
    }

    @Test
    void aCleanupIsRefusedUntilTheRollbackWindowHasFullyPassedAndThenDeletes() throws Exception {
        clusters.put("a", 5, "left over", "managed-ledger");
        long window = RegistryBed.CONFIG.rollbackWindowHours() * 3_600_000L;
        HandClock clock = new HandClock(1 + window - 1); // the switch was made at 1
        CleanupService early = cleanupWith(bed.copier, clock);
        assertRefused(early.cleanup("a", false, 0, false), "the latest switch (epoch 1) is inside its rollback window "
                + "of 24 h; cleanup would make rollback impossible. Wait, or pass force");
        assertTrue(clusters.has("a", 5));
        clock.advance(1);
        CleanupResult r = early.cleanup("a", false, 0, false).get();
        assertEquals(List.of(new CleanupTarget(5, "a", "UNREFERENCED")), r.targets());
        assertFalse(clusters.has("a", 5));
    }

    @Test
    void aCleanupThatDeletesNoRelocatedOriginalLeavesTheMigrationStateOfTheSwitchUntouched() throws Exception {
        clusters.put("a", 5, "left over", "managed-ledger");
        clusters.put("a", 1, "home here", "managed-ledger");
        references = List.of(ref(1));
        String state = registry.paths().orchestrator(1);
        long before = bed.store.get(state).get().orElseThrow().getStat().getVersion();
        CleanupResult r = cleanup.cleanup("a", false, 0, false).get();
        assertEquals(1, r.deleted());
        assertEquals(before, bed.store.get(state).get().orElseThrow().getStat().getVersion(), "nothing claimed");
        assertEquals(0, orchestrator.readState(1).get().value().originalsDeleted());
    }

    @Test
    void withNoSwitchEverMadeACleanupWaitsForNoWindowAndClaimsNoOriginals() throws Exception {
        bed.store.delete(registry.paths().switchTarget(), Optional.empty()).get();
        clusters.put("a", 2, "moved-2", "managed-ledger");
        clusters.put("b", 2, made(true, "moved-2", "managed-ledger", "a"));
        relocatedToB(2);
        clusters.put("a", 5, "left over", "managed-ledger");
        references = List.of(ref(2));
        CleanupResult r = cleanupWith(bed.copier, new HandClock(1)).cleanup("a", false, 0, false).get();
        assertEquals(List.of(), r.errors());
        assertEquals(Map.of(2L, "RELOCATED", 5L, "UNREFERENCED"), byId(r.targets()));
        assertFalse(clusters.has("a", 2));
        assertFalse(clusters.has("a", 5));
        assertEquals(0, orchestrator.readState(1).get().value().originalsDeleted(), "no switch to claim them on");
    }

    @Test
    void aLedgerGoneWhileCleanupDecidesIsNeitherATargetNorAnError() throws Exception {
        clusters.put("a", 5, "left over", "managed-ledger");
        clusters.put("a", 6, "deleted by someone else meanwhile", "managed-ledger");
        CleanupService racing = cleanupWith(new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Optional<LedgerCopier.LedgerFacts>> facts(long id, String cluster) {
                return id == 6 ? CompletableFuture.completedFuture(Optional.empty()) : super.facts(id, cluster);
            }
        }, Clock.systemUTC());
        CleanupResult r = racing.cleanup("a", false, 0, false).get();
        assertEquals(List.of(new CleanupTarget(5, "a", "UNREFERENCED")), r.targets());
        assertEquals(List.of(), r.errors());
        assertEquals(1, r.kept());
        assertTrue(clusters.has("a", 6));
    }

    @Test
    void aDrainedClusterIsMarkedDeprecatedOnceAndACleanupAgainDoesNotRewriteItsRecord() throws Exception {
        clusters.put("c", 40, made(true, "a copy of ours", "managed-ledger", "a"));
        assertTrue(cleanup.cleanup("c", false, 0, false).get().deprecated());
        String path = registry.paths().cluster("c");
        assertEquals(ClusterStatus.DEPRECATED, registry.getCluster("c").get().orElseThrow().status());
        long version = bed.store.get(path).get().orElseThrow().getStat().getVersion();
        CleanupResult again = cleanup.cleanup("c", false, 0, false).get();
        assertEquals(0, again.deleted());
        assertEquals(version, bed.store.get(path).get().orElseThrow().getStat().getVersion());
        assertEquals(ClusterStatus.DEPRECATED, registry.getCluster("c").get().orElseThrow().status());
    }

    private static void assertRefused(CompletableFuture<?> f, String text) {
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        assertTrue(String.valueOf(e.getCause().getMessage()).contains(text), e.getCause().getMessage());
    }
}
