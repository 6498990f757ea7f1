package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
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
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A newer switch ends every older migration: one still PENDING or BUILD (or PROMOTE) becomes SUPERSEDED at the next
 * pass of any broker, keeping what it had done; its run notices by itself, a copy in flight stops within the run's
 * watch (also one waiting for the copy rate), the lock is released and the newer switch's migration proceeds; the
 * copies the older migration made and never promoted are deleted from its target once nothing can read them.
 * Switch 1 moves a's ledgers to b, switch 2 moves on to c.
 */
class SupersededMigrationTest {
    private static final long B_FIRST = 1L << 32;
    private static final long C_FIRST = 2L << 32;
    /** Looks at the run's state (and the directive) every 20 ms while it copies; PROMOTE's apply wait is long. */
    private static final MigrationOrchestrator.Waits WATCHED = new MigrationOrchestrator.Waits(60_000, 20,
            MigrationOrchestrator.PERSIST_INTERVAL_MILLIS, 20);

    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private final PassBugs bugs = new PassBugs();
    private final List<MigrationOrchestrator> orchestrators = new ArrayList<>();
    private volatile List<LedgerReference> references = List.of();
    private final LedgerInventory inventory = () -> CompletableFuture.completedFuture(references);

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        for (String c : List.of("a", "b", "c")) {
            registry.write(registry.paths().cluster(c), new BookieClusterRecord(1, c, "zk:" + c,
                    c.equals("a") ? ClusterStatus.ACTIVE : ClusterStatus.STANDBY, 1), -1).get();
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        orchestrators.forEach(MigrationOrchestrator::close);
        bed.close();
    }

    /** Switch {@code epoch} from {@code origin} to {@code target}, made long ago (no broker's start grace holds it). */
    private void switched(long epoch, String target, String origin, long firstId) throws Exception {
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(
                cur.orElse(RangeTable.bootstrap("a", 0)).with(new IdRange(target, firstId, epoch, 0)))).get();
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                new SwitchDirective(1, target, origin, epoch, 0, firstId))).get();
    }

    /** Closed schema ledgers {@code ids} on a, each referenced by its own schema. */
    private void schemas(long... ids) {
        List<LedgerReference> refs = new ArrayList<>();
        for (long id : ids) {
            clusters.put("a", id, "schema-" + id, "schema");
            refs.add(new LedgerReference(id, LedgerKind.SCHEMA, "t/ns/s" + id));
        }
        references = refs;
    }

    private MigrationOrchestrator orchestrator(String broker, LedgerCopier copier, long bytesPerSecond,
                                               int promoteBatch) {
        MigrationOrchestrator o = new MigrationOrchestrator(registry, inventory, copier,
                new SwitchConfig.Migration(2, bytesPerSecond, promoteBatch, 24), () -> broker, bed.scheduler,
                PulsarByteBudget::refilledAt, Clock.systemUTC(), bugs, new MigrationSafetyTest.HandSwitchBack(registry),
                WATCHED);
        orchestrators.add(o);
        return o;
    }

    private MigrationOrchestrator orchestrator(String broker) {
        return orchestrator(broker, bed.copier, 0, 10);
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

    private boolean lockFree() throws Exception {
        return !bed.store.exists(registry.paths().orchestratorLock()).get();
    }

    /**
     * A copier whose copies to b read batch after batch (1 KB each, 50 ms apart) for a minute, paced as the real one
     * is: only the stop (a failed pacing) ends them early.
     */
    private LedgerCopier longCopies(AtomicBoolean copying, AtomicInteger batches) {
        return new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                if (!to.equals("b")) {
                    return super.copy(id, from, to, pace);
                }
                copying.set(true);
                return batches(0, pace).thenCompose(v -> super.copy(id, from, to, pace))
                        .exceptionally(e -> new Outcome(Result.FAILED, 0, "stopped: " + e));
            }

            private CompletableFuture<Void> batches(int n, LongFunction<CompletableFuture<Void>> pace) {
                if (n >= 1200) {
                    return CompletableFuture.completedFuture(null);
                }
                batches.incrementAndGet();
                return pace.apply(1000).thenCompose(v -> {
                    CompletableFuture<Void> later = new CompletableFuture<>();
                    bed.scheduler.schedule(() -> later.complete(null), 50, TimeUnit.MILLISECONDS);
                    return later;
                }).thenCompose(v -> batches(n + 1, pace));
            }
        };
    }

    @Test
    void aPendingMigrationIsSupersededByTheNextPassOnceANewerSwitchIsMadeAndTheNewerOneRuns() throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(5);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        bed.broker("broker-2", 0, "a", Long.MAX_VALUE, Map.of()); // has not finished the cutover of switch 1
        MigrationOrchestrator o = orchestrator("broker-1");
        pass(o);
        assertEquals(Phase.PENDING, state(1).phase());

        // the operator switches on to c while switch 1's migration still waits; both brokers follow it at once
        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        bed.broker("broker-2", 2, "c", Long.MAX_VALUE, Map.of());
        try (LogCapture log = new LogCapture(MigrationOrchestrator.class)) {
            pass(o);
            assertEquals(List.of("switch epoch=1 migration to bookie-cluster=b SUPERSEDED by switch epoch=2 (it was "
                    + "in PENDING): 0 copied, 0 already present, 0 promoted, 0 failed"), log.messages().stream()
                    .filter(m -> m.contains("SUPERSEDED")).toList());
        }
        MigrationState one = state(1);
        assertEquals(Phase.SUPERSEDED, one.phase(), String.valueOf(one));
        assertTrue(one.finishedAt() > 0, "it ended: " + one);
        assertEquals(Phase.DONE, state(2).phase());
        assertEquals("c", home(5).orElseThrow());
        assertFalse(clusters.has("b", 5), "switch 1's migration copied nothing");
    }

    @Test
    void anOlderMigrationIsSupersededByAnyBrokersPassWithoutTheLockKeepingItsCountsAndIssues() throws Exception {
        switched(1, "b", "a", B_FIRST);
        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        bed.broker("broker-2", 2, "c", Long.MAX_VALUE, Map.of());
        // switch 1's migration is in BUILD on broker-1, which also runs switch 2's and holds the lock
        MigrationState building = MigrationState.start(1, "b", "broker-1", 0).moveTo(Phase.BUILD, 0).edit()
                .progress(9, 4, 1, 0, 1, 0, 0, 0).addBytes(4096).issues(List.of(new io.bcswitch.registry.LedgerIssue(
                        3, "SCHEMA", "a", "FAILED", "its bookies did not answer"))).build();
        registry.write(registry.paths().orchestrator(1), building, -1).get();
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "c", "broker-1", 0)
                .moveTo(Phase.BUILD, 0), -1).get();
        bed.store.put(registry.paths().orchestratorLock(), "broker-1#1-x".getBytes(
                java.nio.charset.StandardCharsets.UTF_8), Optional.of(-1L)).get();

        pass(orchestrator("broker-2"));
        MigrationState one = state(1);
        assertEquals(Phase.SUPERSEDED, one.phase(), "the version-checked move needs no lock: " + one);
        assertEquals(List.of(9, 4, 1, 1), List.of(one.planned(), one.copied(), one.alreadyPresent(), one.failed()),
                "what it had done stays recorded: " + one);
        assertEquals(4096, one.bytesCopied());
        assertEquals(building.issues(), one.issues());
        assertEquals(Phase.BUILD, state(2).phase(), "the latest switch's migration is its live broker's");
    }

    @Test
    void aBuildingRunNoticesANewerSwitchByItselfStopsItsCopyReleasesTheLockAndTheNewerMigrationRuns()
            throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(5, 6);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        AtomicBoolean copying = new AtomicBoolean();
        AtomicInteger batches = new AtomicInteger();
        MigrationOrchestrator o = orchestrator("broker-1", longCopies(copying, batches), 0, 10);
        CompletableFuture<Void> first = o.tick();
        bugs.waitUntil(TestWaits.SECONDS, copying::get, "switch 1's copies run");

        // switch 2 is committed; no other broker's pass runs: the run must see it itself
        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        first.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        bugs.check();
        assertEquals(Phase.SUPERSEDED, state(1).phase(), "the run ended its own migration");
        assertTrue(batches.get() < 200, "the copy stopped soon, not after its minute: " + batches.get() + " batches");
        assertTrue(lockFree(), "the lock is released");
        assertFalse(clusters.has("b", 5), "the copy cut short is not left on b");
        assertEquals(0, state(1).failed(), "a copy the stop cut short is no failure: " + state(1));
        assertTrue(state(1).issues().isEmpty(), String.valueOf(state(1).issues()));

        pass(o);
        assertEquals(Phase.DONE, state(2).phase(), String.valueOf(state(2)));
        assertEquals("c", home(5).orElseThrow());
        assertEquals("c", home(6).orElseThrow());
    }

    @Test
    void whatARunCopiedUntilItsMigrationWasSupersededIsRecordedInItsState() throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(1, 2, 3, 4);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        AtomicBoolean copying = new AtomicBoolean();
        AtomicInteger batches = new AtomicInteger();
        LedgerCopier slow = longCopies(copying, batches);
        // 1 is copied at once (the state is written after it), 2 once that is written (it waits for the next
        // write, a second later); 3 and 4 copy for a minute
        CompletableFuture<Void> firstWritten = new CompletableFuture<>();
        MigrationOrchestrator o = orchestrator("broker-1", new FakeClusters.Delegating(slow) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                if (id == 2) {
                    return firstWritten.thenCompose(v -> bed.copier.copy(id, from, to, pace));
                }
                return id == 1 ? bed.copier.copy(id, from, to, pace) : super.copy(id, from, to, pace);
            }
        }, 0, 10);
        bed.scheduler.execute(() -> {
            try {
                bugs.waitUntil(TestWaits.SECONDS, () -> state(1) != null && state(1).copied() == 1,
                        "the first copy is written");
                firstWritten.complete(null);
            } catch (Exception e) {
                firstWritten.completeExceptionally(e);
            }
        });
        CompletableFuture<Void> first = o.tick();
        bugs.waitUntil(TestWaits.SECONDS, () -> copying.get() && clusters.has("b", 1) && clusters.has("b", 2),
                "1 and 2 copied, the others copying");
        switched(2, "c", "b", C_FIRST);
        first.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        MigrationState one = state(1);
        assertEquals(Phase.SUPERSEDED, one.phase());
        assertEquals(2, one.copied(), "both copies are counted: " + one);
        assertEquals(2, one.copies());
        assertFalse(clusters.has("b", 1) || clusters.has("b", 2), "listed, and deleted from b as never promoted");
        assertEquals(0, one.failed());
    }

    @Test
    void aCopyWaitingForTheCopyRateStopsAtOnceWhenItsMigrationIsSuperseded() throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(5);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        AtomicBoolean copying = new AtomicBoolean();
        AtomicInteger batches = new AtomicInteger();
        // 1 KB per second: after the first batch, the copy's second waits about a second for its turn, and so on
        MigrationOrchestrator o = orchestrator("broker-1", new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                copying.set(true);
                return pace.apply(1000).thenCompose(v -> {
                    batches.incrementAndGet();
                    return pace.apply(10_000_000); // a big batch: ten thousand seconds of the rate
                }).thenCompose(v -> {
                    batches.incrementAndGet();
                    return pace.apply(1000);
                }).thenCompose(v -> super.copy(id, from, to, pace))
                        .exceptionally(e -> new Outcome(Result.FAILED, 0, "stopped: " + e));
            }
        }, 1000, 10);
        CompletableFuture<Void> first = o.tick();
        bugs.waitUntil(TestWaits.SECONDS, () -> batches.get() == 2, "the copy waits behind its big batch");

        // another broker's pass ends switch 1's migration (it sees switch 2; so may the run itself, first)
        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.filter(x ->
                x.phase() != Phase.SUPERSEDED).map(x -> x.moveTo(Phase.SUPERSEDED, 0))).get();
        first.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(2, batches.get(), "the waiting batch never got its turn");
        assertTrue(lockFree());
    }

    @Test
    void aPromotingRunWaitingForALaggingBrokerStopsOnceANewerSwitchIsMadeAndKeepsWhatItPromoted()
            throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(5, 6);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        bed.broker("broker-2", 1, "b", 0, Map.of()); // applies no relocation epoch: PROMOTE waits after each batch
        MigrationOrchestrator o = orchestrator("broker-1", bed.copier, 0, 1);
        CompletableFuture<Void> first = o.tick();
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> home(5).orElseThrow().equals("b"), "the first batch promoted");

        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        first.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.SUPERSEDED, state(1).phase(), "it stopped waiting: a minute's wait was not needed");
        assertEquals(1, state(1).promoted(), "what it promoted is recorded");
        assertEquals(List.of(), state(1).issues(), "and nothing it did not get to is called its failure");
        assertEquals("b", home(5).orElseThrow(), "and stays promoted");
        assertEquals("a", home(6).orElseThrow());
        assertTrue(lockFree());

        bed.broker("broker-2", 2, "c", Long.MAX_VALUE, Map.of());
        pass(o);
        assertEquals(Phase.DONE, state(2).phase());
        assertEquals("c", home(5).orElseThrow());
        assertEquals("c", home(6).orElseThrow());
        assertTrue(clusters.has("b", 5), "the copy on b is the previous home of 5's relocation: a rollback of "
                + "switch 2 goes back to it, so it stays (cleanup decides about it)");
        Relocation five = registry.readRelocations(List.of(5L)).get().get(5L).orElseThrow();
        assertEquals("b", five.previousHome());
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            pass(o);
            return !clusters.has("b", 6);
        }, "the copy of 6 switch 1 made and never promoted is deleted from b");
        assertTrue(clusters.has("b", 5));
        assertTrue(clusters.has("a", 6) && clusters.has("c", 6));
    }

    @Test
    void theCopiesASupersededMigrationMadeAndNeverPromotedAreDeletedFromItsTargetOnceItIsNotActive()
            throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(5, 6, 7);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        // switch 1's migration copied 5, 6 and 7 to b and recorded them, then switch 2 was made
        for (long id : List.of(5L, 6L, 7L)) {
            clusters.copy(id, "a", "b", n -> CompletableFuture.completedFuture(null)).get();
        }
        registry.appendCopies(1, 0, List.of(5L, 6L, 7L)).get();
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).edit().copies(3).build(), -1).get();
        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        references = List.of(references.get(0), references.get(1)); // Pulsar deleted 7 (at its home, a)
        clusters.delete(7, "a").get();

        MigrationOrchestrator o = orchestrator("broker-1");
        pass(o);
        assertEquals(Phase.SUPERSEDED, state(1).phase());
        assertEquals(Phase.DONE, state(2).phase());
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            pass(o);
            return !clusters.has("b", 5) && !clusters.has("b", 6) && !clusters.has("b", 7);
        }, "switch 1's copies on b are deleted, 7's too: nothing references it any more");
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            pass(o);
            return !bed.store.exists(registry.paths().copiesChunk(1, 0)).get();
        }, "the list is worked off and dropped");
        assertTrue(clusters.has("a", 5) && clusters.has("c", 5) && clusters.has("a", 6) && clusters.has("c", 6));
    }

    @Test
    void aCopyAFinishedMigrationLeftUnpromotedIsDeletedByThePassesWhileItIsTheLatestAndAfterANewerSwitch()
            throws Exception {
        switched(1, "b", "a", B_FIRST);
        schemas(5, 6, 7, 8);
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
        // switch 1's migration copied 5 to 8 to b, promoted 5 and 6 and finished; 7 and 8 stayed unpromoted on b
        // (their end-of-PROMOTE look did not see them, however that came about)
        for (long id : List.of(5L, 6L, 7L, 8L)) {
            clusters.copy(id, "a", "b", n -> CompletableFuture.completedFuture(null)).get();
        }
        registry.appendCopies(1, 0, List.of(5L, 6L, 7L)).get();
        registry.updateRelocations(List.of(5L, 6L), (id, cur) -> Optional.of(new Relocation(
                Relocation.FORMAT_VERSION, id, "b", "a", "SCHEMA", 1, 0))).get();
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE_WITH_FAILURES, 0), -1).get();
        references = List.of(references.get(0), references.get(1), references.get(3)); // Pulsar deleted 7 at a
        clusters.delete(7, "a").get();

        MigrationOrchestrator o = orchestrator("broker-1");
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            pass(o);
            return !clusters.has("b", 7);
        }, "the copy of 7 (deleted at its home, referenced by nothing) is deleted from b, the active cluster");
        assertEquals(List.of(5L, 6L), registry.readCopies(1).get().values().stream().flatMap(List::stream).toList(),
                "the promoted copies stay listed: a rollback of switch 1 flips them back by this list");
        assertTrue(clusters.has("b", 5) && clusters.has("b", 6) && clusters.has("b", 8));

        // an interrupted run had copied 8 and recorded it late: a newer switch makes switch 1's list one to work off
        registry.appendCopies(1, 0, List.of(8L)).get();
        switched(2, "c", "b", C_FIRST);
        bed.broker("broker-1", 2, "c", Long.MAX_VALUE, Map.of());
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            pass(o);
            return state(2).phase() == Phase.DONE && !clusters.has("b", 8)
                    && !bed.store.exists(registry.paths().copiesChunk(1, 0)).get();
        }, "switch 2's migration is done, the copy of 8 (its home a holds the same) is deleted from b and switch "
                + "1's list is worked off and dropped");
        assertTrue(clusters.has("b", 5) && clusters.has("b", 6), "what a rollback of switch 2 goes back to stays");
        assertEquals(Optional.of("c"), home(5));
        assertTrue(clusters.has("a", 8) && clusters.has("c", 8));
    }
}
