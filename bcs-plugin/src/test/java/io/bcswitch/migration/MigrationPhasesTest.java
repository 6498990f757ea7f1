package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.ForwardingPort;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The migration's phases driven one pass at a time ({@link MigrationOrchestrator#tick}) on a {@link RegistryBed}:
 * which broker runs a switch's migration and when, what BUILD counts and reports, what PROMOTE checks right before a
 * copy becomes a ledger's home, what the run's last look at the homes concludes, and what a broker last saw for its
 * metrics. Switch 1 moves a's ledgers to b; one pass runs a whole migration, so most tests need no waiting at all.
 */
class MigrationPhasesTest {
    private static final long B_FIRST = 1L << 32;
    /** Long past: a switch made then is out of its start grace on every broker. */
    private static final long LONG_AGO = 0;
    /** The run's waits on other brokers and open ledgers, short; BUILD's state write at its broker's interval. */
    private static final MigrationOrchestrator.Waits FAST = new MigrationOrchestrator.Waits(100, 20,
            MigrationOrchestrator.PERSIST_INTERVAL_MILLIS);

    private RegistryBed bed;
    private RegistryStore registry;
    private FakeClusters clusters;
    private final PassBugs bugs = new PassBugs();
    private final List<MigrationOrchestrator> orchestrators = new ArrayList<>();
    /** What the orchestrators reported to their metrics, in order (besides failed passes, which {@link #bugs} sees). */
    private final List<String> reported = Collections.synchronizedList(new ArrayList<>());
    private final MigrationMetrics metrics = new MigrationMetrics() {
        @Override
        public void ledgerCopied(String from, String to, long bytes) {
            reported.add("copied " + from + "->" + to + " " + bytes);
        }

        @Override
        public void verificationFailed(String cluster) {
            reported.add("failed on " + cluster);
        }

        @Override
        public void passFailed(Throwable cause) {
            bugs.passFailed(cause);
        }
    };
    private volatile List<LedgerReference> references = List.of();
    /** How many times the inventory was asked; {@link #unknownUntil} decides what it could not learn then. */
    private final AtomicInteger pictures = new AtomicInteger();
    /** Compacted topic t/ns/persistent/c (stored ledger 7) cannot be asked for the first this many pictures. */
    private volatile int unknownUntil;
    private final LedgerInventory inventory = new LedgerInventory() {
        @Override
        public CompletableFuture<List<LedgerReference>> references() {
            return CompletableFuture.completedFuture(references);
        }

        @Override
        public CompletableFuture<Picture> picture() {
            boolean unknown = pictures.incrementAndGet() <= unknownUntil;
            return CompletableFuture.completedFuture(new Picture(references, unknown
                    ? List.of(new Unknown("t/ns/persistent/c", 7, "cannot load the topic")) : List.of()));
        }
    };

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
        clusters = bed.clusters;
        registry.write(registry.paths().cluster("a"), new BookieClusterRecord(1, "a", "zk:a", ClusterStatus.STANDBY,
                1), -1).get();
        registry.write(registry.paths().cluster("b"), new BookieClusterRecord(1, "b", "zk:b", ClusterStatus.ACTIVE,
                1), -1).get();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0).with(new IdRange("b", B_FIRST, 1, 0)),
                -1).get();
        // broker-1 is live, finished the cutover of switch 1 and follows the relocation table at once
        bed.broker("broker-1", 1, "b", Long.MAX_VALUE, Map.of());
    }

    @AfterEach
    void tearDown() throws Exception {
        orchestrators.forEach(MigrationOrchestrator::close);
        bed.close();
    }

    /** Switch 1 (a to b), made at {@code ts}. */
    private void switchedAt(long ts) throws Exception {
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, ts, B_FIRST), -1).get();
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

    private MigrationOrchestrator orchestrator(String broker) {
        return orchestrator(broker, registry, bed.copier, Clock.systemUTC(), FAST, 10);
    }

    private MigrationOrchestrator orchestrator(String broker, RegistryStore on, LedgerCopier copier, Clock clock,
                                               MigrationOrchestrator.Waits waits, int promoteBatch) {
        MigrationOrchestrator o = new MigrationOrchestrator(on, inventory, copier,
                new SwitchConfig.Migration(3, 0, promoteBatch, 24), () -> broker, bed.scheduler,
                PulsarByteBudget::refilledAt, clock, metrics, new MigrationSafetyTest.HandSwitchBack(on), waits);
        orchestrators.add(o);
        return o;
    }

    /** One pass of {@code o}; fails the test if the pass failed on a programming error. */
    private void pass(MigrationOrchestrator o) throws Exception {
        o.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        bugs.check();
    }

    private Optional<MigrationState> state() throws Exception {
        return Optional.ofNullable(registry.read(registry.paths().orchestrator(1), MigrationState.class).get().value());
    }

    /**
     * Where {@code id} is home now. Its relocation is read afresh: the store's list of relocations may lag a write
     * that was just made by a few milliseconds, as the run's own last look knows.
     */
    private Optional<String> home(long id) throws Exception {
        return RegistryView.read(registry).thenCombine(registry.readRelocations(List.of(id)), RegistryView::withFresh)
                .get().home(id);
    }

    private Relocation relocation(long id) throws Exception {
        return registry.readRelocations(List.of(id)).get().get(id).orElseThrow();
    }

    private static String issues(MigrationState s) {
        return s.issues().stream().map(i -> i.ledgerId() + " " + i.result()).toList().toString();
    }

    // ---- which broker runs a switch's migration, and when ----

    @Test
    void aPassBeforeAnySwitchDoesNothing() throws Exception {
        MigrationOrchestrator o = orchestrator("broker-1");
        pass(o);
        assertTrue(o.lastSeen().isEmpty(), "no switch seen");
        assertTrue(registry.listMigrationStates().get().isEmpty());
    }

    @Test
    void aMigrationWaitsUntilEveryLiveBrokerFinishedItsCutover() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5);
        bed.broker("broker-2", 0, "a", 0, Map.of()); // live, still on switch 0
        MigrationOrchestrator o = orchestrator("broker-1");
        pass(o);
        assertEquals(Phase.PENDING, state().orElseThrow().phase(), "nothing is copied while a broker may write to a");
        assertFalse(clusters.has("b", 5));
        bed.broker("broker-2", 1, "b", Long.MAX_VALUE, Map.of());
        pass(o);
        assertEquals(Phase.DONE, state().orElseThrow().phase());
    }

    @Test
    void eachLedgerCopiedIsChargedItsMetadataWorkAgainstTheByteBudgetNotOnlyItsBytes() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5, 6, 7);
        java.util.concurrent.atomic.AtomicLong taken = new java.util.concurrent.atomic.AtomicLong();
        ByteBudget.Factory counting = rate -> new ByteBudget() {
            @Override
            public void take(long bytes) {
                taken.addAndGet(bytes);
            }

            @Override
            public long nanosUntilSettled() {
                return 0; // never makes the test wait: it counts what the copies are charged
            }
        };
        MigrationOrchestrator o = new MigrationOrchestrator(registry, inventory, bed.copier,
                new SwitchConfig.Migration(3, 1_048_576, 10, 24), () -> "broker-1", bed.scheduler, counting,
                Clock.systemUTC(), metrics, new MigrationSafetyTest.HandSwitchBack(registry), FAST);
        orchestrators.add(o);
        pass(o);
        assertEquals(Phase.DONE, state().orElseThrow().phase());
        // three ledgers of a few bytes each: what the budget saw is their three metadata charges, and their bytes
        assertTrue(taken.get() >= 3 * ByteRateLimiter.LEDGER_COST_BYTES, "charged " + taken.get() + " bytes");
        assertTrue(taken.get() < 4 * ByteRateLimiter.LEDGER_COST_BYTES, "charged " + taken.get() + " bytes");
    }

    @Test
    void aFreshSwitchIsLeftToTheBrokerThatAcceptedItForTheStartGrace() throws Exception {
        long now = 1_000_000_000L;
        switchedAt(now - MigrationPass.START_GRACE_MILLIS + 1);
        schemas(5);
        MigrationOrchestrator other = orchestrator("broker-2", registry, bed.copier, Clock.fixed(
                Instant.ofEpochMilli(now), ZoneOffset.UTC), FAST, 10);
        pass(other);
        assertTrue(state().isEmpty(), "a broker that did not accept the switch leaves it alone for the grace");
        assertFalse(clusters.has("b", 5));
    }

    @Test
    void anyBrokerStartsASwitchsMigrationOnceItsStartGraceIsOver() throws Exception {
        long now = 1_000_000_000L;
        switchedAt(now - MigrationPass.START_GRACE_MILLIS);
        schemas(5);
        MigrationOrchestrator other = orchestrator("broker-2", registry, bed.copier, Clock.fixed(
                Instant.ofEpochMilli(now), ZoneOffset.UTC), FAST, 10);
        pass(other);
        MigrationState s = state().orElseThrow(() -> new AssertionError("not started at the grace's end"));
        assertEquals(Phase.DONE, s.phase(), String.valueOf(s));
        assertEquals("broker-2", s.owner());
        assertEquals("b", home(5).orElseThrow());
    }

    @Test
    void aMigrationWhoseBrokerIsGoneIsTakenOverAtOnceEvenWhileItsSwitchIsFresh() throws Exception {
        long now = 1_000_000_000L;
        switchedAt(now);
        schemas(5);
        // broker-0 accepted the switch, started the migration and died (it has no broker record)
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-0", now)
                .moveTo(Phase.BUILD, now), -1).get();
        MigrationOrchestrator other = orchestrator("broker-2", registry, bed.copier, Clock.fixed(
                Instant.ofEpochMilli(now), ZoneOffset.UTC), FAST, 10);
        pass(other);
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE, s.phase(), String.valueOf(s));
        assertEquals("broker-2", s.owner());
    }

    @Test
    void aBrokerThatDoesNotRunTheMigrationLeavesItToItsLiveBrokerAndStillSeesItsState() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5);
        MigrationState building = MigrationState.start(1, "b", "broker-1", 0).moveTo(Phase.BUILD, 0);
        registry.write(registry.paths().orchestrator(1), building, -1).get();
        MigrationOrchestrator other = orchestrator("broker-2");
        assertTrue(other.lastSeen().isEmpty(), "nothing seen before the first pass");
        pass(other);
        assertEquals("broker-1", state().orElseThrow().owner(), "broker-1 is live: its migration stays its own");
        assertEquals(Phase.BUILD, state().orElseThrow().phase());
        assertFalse(clusters.has("b", 5), "nothing copied by the broker that does not run the migration");
        // its metrics report what its pass read, though it runs nothing
        MigrationOrchestrator.Seen seen = other.lastSeen().orElseThrow();
        assertEquals(1, seen.directive().epoch());
        assertEquals(building, seen.state());
    }

    @Test
    void whatABrokerLastSawIsWhatItsRunWroteLast() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5, 6);
        MigrationOrchestrator o = orchestrator("broker-1");
        pass(o);
        // the pass read no state (the migration had not started); the run's writes replaced that in what it saw
        MigrationState seen = o.lastSeen().orElseThrow().state();
        assertEquals(state().orElseThrow(), seen);
        assertEquals(Phase.DONE, seen.phase());
        assertEquals(2, seen.promoted());
    }

    @Test
    void aStartedDriverRunsTheMigrationOnItsOwn() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5);
        MigrationOrchestrator o = orchestrator("broker-1");
        o.start(20); // nobody ticks: the driver's own passes find the switch
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> state().map(s -> s.phase() == Phase.DONE).orElse(false),
                "the migration done by the periodic passes");
        assertEquals("b", home(5).orElseThrow());
    }

    /** Switch 1's migration, finished and then asked to roll back to a by the operator on broker {@code owner}. */
    private MigrationState rollingBack(String owner) {
        return MigrationState.start(1, "b", owner, 0).moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0)
                .moveTo(Phase.DONE, 0).moveTo(Phase.ROLLING_BACK, 0).edit().rollback("a", null, 0).build();
    }

    @Test
    void aRollbackIsFinishedByTheNextPassOfAnyBrokerEvenWhileTheMigrationsBrokerIsLive() throws Exception {
        // broker-2 ran the migration and recorded the operator's rollback; it is live, but its request failed
        switchedAt(LONG_AGO);
        bed.broker("broker-2", 1, "b", Long.MAX_VALUE, Map.of());
        registry.write(registry.paths().orchestrator(1), rollingBack("broker-2"), -1).get();
        pass(orchestrator("broker-1"));
        assertEquals(Phase.ROLLED_BACK, state().orElseThrow().phase());
        SwitchDirective back = registry.readDirective().get().value();
        assertEquals(2, back.epoch());
        assertEquals("a", back.target(), "the brokers are switched back");
    }

    @Test
    void aRollbackLeftUnfinishedBehindALaterFinishedSwitchIsFinishedByTheNextPass() throws Exception {
        // the switch back (2) was made and its migration finished; the rollback of 1 was never recorded as done
        registry.write(registry.paths().orchestrator(1), rollingBack("broker-1"), -1).get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "a", "b", 2, LONG_AGO, 2L << 32), -1)
                .get();
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "a", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE, 0), -1).get();
        pass(orchestrator("broker-1"));
        assertEquals(Phase.ROLLED_BACK, state().orElseThrow().phase());
        assertEquals(2, registry.readDirective().get().value().epoch(), "no second switch back");
    }

    @Test
    void aLaterSwitchsPassDropsTheCopyListOfAFinishedMigration() throws Exception {
        // switch 1's migration finished long ago with one copy listed; switch 2 (b to a) has finished too
        MigrationState one = MigrationState.start(1, "b", "broker-1", 0).moveTo(Phase.BUILD, 0)
                .moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE, 0);
        registry.write(registry.paths().orchestrator(1), one, -1).get();
        registry.appendCopies(1, 0, List.of(5L)).get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "a", "b", 2, LONG_AGO, 2L << 32), -1)
                .get();
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "a", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE, 0), -1).get();
        pass(orchestrator("broker-1"));
        // its one chunk, asked of the store itself: the store's list of copy lists may lag the drop by milliseconds
        assertFalse(bed.store.exists(registry.paths().copiesChunk(1, 0)).get(), "nothing will ever read it again");
    }

    @Test
    void originalsAreNotClaimedForDeletionWithoutAMigrationState() throws Exception {
        switchedAt(LONG_AGO);
        MigrationOrchestrator o = orchestrator("broker-1");
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> o.claimOriginalDeletions(1, 3).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RegistryException r && r.kind() == RegistryException.Kind.CONFLICT
                && r.getMessage().contains("no migration state for switch epoch 1"), String.valueOf(e.getCause()));
        assertTrue(state().isEmpty(), "nothing written");
    }

    // ---- BUILD ----

    @Test
    void theRunsLogSaysWhichBrokerRunsItAndWhatItFound() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5, 6);
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            pass(orchestrator("broker-1"));
            assertTrue(log.messages().contains("switch epoch=1 migration BUILD on broker broker-1: 2 ledger(s) to "
                    + "copy to bookie-cluster=b"), String.valueOf(log.messages()));
        }
    }

    @Test
    void buildsLogLineSaysHowLongItTookAndHowFastItCopied() {
        long second = TimeUnit.SECONDS.toNanos(1);
        // 2.5 s from a start anywhere on the nanosecond clock; 3 copied and 2 found present, 5 MB copied
        String[] rate = MigrationRun.buildRate(7 * second, 7 * second + 5 * second / 2, 3, 2, 5_000_000);
        assertEquals(List.of(String.format("%.2f", 2.5), String.format("%.1f", 2.0), String.format("%.2f", 2.0)),
                List.of(rate));
        // a BUILD with nothing to copy counts as a millisecond, not a division by zero
        assertEquals(String.format("%.1f", 4000.0), MigrationRun.buildRate(second, second, 4, 0, 0)[1]);
        assertEquals(" (2 promoted before)", MigrationRun.promotedBefore(2));
        assertEquals("", MigrationRun.promotedBefore(0), "a run that starts afresh says nothing of it");
    }

    @Test
    void buildCountsEveryOutcomeInTheStateTheIssuesAndTheMetrics() throws Exception {
        switchedAt(LONG_AGO);
        schemas(4, 5, 6, 7);
        clusters.put("a", 4, new FakeClusters.Ledger(false, "open", Map.of()));      // stays open
        clusters.put("b", 7, "another ledger 7", "schema");                          // collides
        AtomicInteger triesOfTheOpenOne = new AtomicInteger();
        LedgerCopier copier = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                if (id == 4) {
                    triesOfTheOpenOne.incrementAndGet();
                }
                return id == 6 ? CompletableFuture.completedFuture(new Outcome(Result.FAILED, 0, "entries differ"))
                        : super.copy(id, from, to, pace);
            }
        };
        pass(orchestrator("broker-1", registry, copier, Clock.systemUTC(), FAST, 10));
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE_WITH_FAILURES, s.phase(), String.valueOf(s));
        assertEquals(3, triesOfTheOpenOne.get(), "an open ledger is tried three times, then left");
        assertEquals(1, s.copied());
        assertEquals(1, s.failed());
        assertEquals(1, s.collisions());
        assertEquals(1, s.skipped());
        assertEquals(1, s.promoted());
        assertEquals(0, s.notPromoted(), "failed, collided and skipped ledgers are not counted as not promoted");
        // the status lists the issues by ledger id, whatever kind of issue each is
        assertEquals("[4 SKIPPED, 6 FAILED, 7 COLLISION]", issues(s));
        assertEquals(new LedgerIssue(6, "SCHEMA", "a", "FAILED", "entries differ"), s.issues().get(1));
        // copied in parallel: in any order
        assertEquals(List.of("copied a->b " + "schema-5".length(), "failed on b"), reported.stream().sorted().toList());
        assertEquals("a", home(6).orElseThrow());
    }

    @Test
    void aBuildWithNothingOpenDoesNotWaitForOpenLedgersToClose() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5, 6);
        // an open ledger is tried again after a minute: a run with none ends at once
        MigrationOrchestrator o = orchestrator("broker-1", registry, bed.copier, Clock.systemUTC(),
                new MigrationOrchestrator.Waits(100, 60_000), 10);
        o.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.DONE, state().orElseThrow().phase());
    }

    @Test
    void buildWritesItsProgressOncePerPersistInterval() throws Exception {
        switchedAt(LONG_AGO);
        schemas(1, 2, 3, 4, 5, 6);
        HandClock clock = new HandClock(1_000_000_000L);
        // each copy takes half a persist interval of the run's clock; before each, the copier reads the stored count
        List<Integer> storedBeforeCopy = Collections.synchronizedList(new ArrayList<>());
        LedgerCopier copier = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                return registry.read(registry.paths().orchestrator(1), MigrationState.class).thenCompose(st -> {
                    storedBeforeCopy.add(st.value().copied());
                    clock.advance(MigrationOrchestrator.PERSIST_INTERVAL_MILLIS / 2);
                    return super.copy(id, from, to, pace);
                });
            }
        };
        MigrationOrchestrator o = new MigrationOrchestrator(registry, inventory, copier,
                new SwitchConfig.Migration(1, 0, 10, 24), () -> "broker-1", bed.scheduler,
                PulsarByteBudget::refilledAt, clock, metrics, new MigrationSafetyTest.HandSwitchBack(registry), FAST);
        orchestrators.add(o);
        pass(o);
        assertEquals(Phase.DONE, state().orElseThrow().phase());
        // written after the first copy, then whenever a whole interval has passed since the last write: after the
        // third and the fifth
        assertEquals(List.of(0, 1, 1, 3, 3, 5), storedBeforeCopy);
    }

    @Test
    void theLedgersLengthsAreLearntAtMostFourAtATime() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        List<CompletableFuture<Optional<LedgerCopier.LedgerFacts>>> answers =
                Collections.synchronizedList(new ArrayList<>());
        LedgerCopier slowMetadata = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                asked.incrementAndGet();
                CompletableFuture<Optional<LedgerFacts>> answer = new CompletableFuture<>();
                answers.add(answer);
                return answer;
            }
        };
        MigrationOrchestrator o = orchestrator("broker-1", registry, slowMetadata, Clock.systemUTC(), FAST, 10);
        List<MigrationPlan.Item> items = new ArrayList<>();
        for (long id = 1; id <= 10; id++) {
            items.add(new MigrationPlan.Item(id, LedgerKind.SCHEMA, "a", "t/ns/s" + id, List.of()));
        }
        MigrationTally tally = new MigrationTally(items.size(), List.of(), 0);
        new PlannedLengths(o, new RunWatch(o, 1)).sizeUp(items, tally);
        assertEquals(4, asked.get(), "the copies read the same metadata: four lengths are asked for at once");
        answers.get(0).complete(Optional.of(new LedgerCopier.LedgerFacts(true, 100, 0, "schema")));
        bugs.waitUntil(TestWaits.SECONDS, () -> asked.get() == 5, "the next length asked for once one is learnt");
        bugs.waitUntil(TestWaits.SECONDS, () -> tally.bytesRemaining() == 100, "the length learnt is counted");
    }

    @Test
    void aRetriedMigrationsCopyListStillNamesTheCopiesOfItsFirstRun() throws Exception {
        switchedAt(LONG_AGO);
        schemas(4, 5);
        clusters.put("a", 4, new FakeClusters.Ledger(false, "open", Map.of()));
        MigrationOrchestrator o = orchestrator("broker-1");
        pass(o);
        assertEquals(Phase.DONE_WITH_FAILURES, state().orElseThrow().phase());
        // ledger 4 is closed now; 5, home on b, is not planned again
        clusters.put("a", 4, "schema-4", "schema");
        o.retry(1).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> state().orElseThrow().phase() == Phase.DONE, "the re-run ends");
        // a rollback deletes what this list names: both runs' copies
        Set<Long> listed = new TreeSet<>();
        registry.readCopies(1).get().values().forEach(listed::addAll);
        assertEquals(Set.of(4L, 5L), listed);
        assertEquals(2, state().orElseThrow().copies());
    }

    // ---- the run's looks at its state while it copies ----

    /**
     * The bed's clusters, each copy taking 50 ms; {@code started} counts the copies started, {@code then} is run as
     * the seventh starts (three at a time: 100 ms into BUILD).
     */
    private LedgerCopier slowCopies(AtomicInteger started, Runnable then) {
        return new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                if (started.incrementAndGet() == 7) {
                    then.run();
                }
                CompletableFuture<Void> later = new CompletableFuture<>();
                bed.scheduler.schedule(() -> later.complete(null), 50, TimeUnit.MILLISECONDS);
                return later.thenCompose(v -> super.copy(id, from, to, pace));
            }
        };
    }

    /** Waits with a look at the run's state every 10 ms while it copies. */
    private static final MigrationOrchestrator.Waits WATCHED = new MigrationOrchestrator.Waits(100, 20,
            MigrationOrchestrator.PERSIST_INTERVAL_MILLIS, 10);

    @Test
    void aRunThatLooksAtItsStateWhileItCopiesCopiesEverythingWhenNothingStopsIt() throws Exception {
        switchedAt(LONG_AGO);
        schemas(1, 2, 3, 4, 5, 6, 7, 8, 9);
        AtomicInteger started = new AtomicInteger();
        pass(orchestrator("broker-1", registry, slowCopies(started, () -> { }), Clock.systemUTC(), WATCHED, 10));
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE, s.phase(), String.valueOf(s));
        assertEquals(9, s.promoted(), "copied over many looks at the state, all of them");
    }

    @Test
    void aRunStopsCopyingAtItsNextLookAtItsStateOnceItIsSuperseded() throws Exception {
        switchedAt(LONG_AGO);
        long[] ids = java.util.stream.LongStream.rangeClosed(1, 30).toArray();
        schemas(ids);
        AtomicInteger started = new AtomicInteger();
        // 100 ms into BUILD (after several looks), another broker marks the migration superseded
        Runnable superseded = () -> registry.update(registry.paths().orchestrator(1), MigrationState.class,
                cur -> cur.map(x -> x.moveTo(Phase.SUPERSEDED, 0)));
        try (LogCapture log = new LogCapture(MigrationRun.class)) {
            pass(orchestrator("broker-1", registry, slowCopies(started, superseded), Clock.systemUTC(), WATCHED, 10));
            assertEquals(List.of("switch epoch=1 migration on broker broker-1 stops its copies: SUPERSEDED owned by "
                    + "broker-1"), log.messages().stream().filter(m -> m.contains("stops its copies")).toList());
        }
        assertEquals(Phase.SUPERSEDED, state().orElseThrow().phase());
        assertTrue(started.get() < ids.length, "copying stopped soon after: " + started.get() + " copies started");
        assertTrue(registry.readRelocations(java.util.Arrays.stream(ids).boxed().toList()).get().values().stream()
                .allMatch(Optional::isEmpty), "nothing promoted");
    }

    // ---- PROMOTE ----

    @Test
    void promotionGoesInLedgerIdOrderWhateverOrderTheCopiesFinishedIn() throws Exception {
        switchedAt(LONG_AGO);
        schemas(2, 3, 4, 5, 6, 7);
        // 2 and 3 finish copying last; broker-2 applies no relocation epoch, which holds PROMOTE after its first batch
        bed.broker("broker-2", 1, "b", 0, Map.of());
        CompletableFuture<Void> othersCopied = new CompletableFuture<>();
        AtomicInteger others = new AtomicInteger();
        LedgerCopier copier = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                if (id <= 3) {
                    return othersCopied.thenCompose(v -> super.copy(id, from, to, pace));
                }
                return super.copy(id, from, to, pace).whenComplete((out, e) -> {
                    if (others.incrementAndGet() == 4) {
                        othersCopied.complete(null);
                    }
                });
            }
        };
        MigrationOrchestrator o = orchestrator("broker-1", registry, copier, Clock.systemUTC(),
                new MigrationOrchestrator.Waits(60_000, 20), 2);
        CompletableFuture<Void> run = o.tick();
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> registry.listRelocations().get().size() >= 2,
                "the first batch promoted");
        assertEquals(Set.of(2L, 3L), registry.listRelocations().get().keySet(), "the lowest ids first");
        bed.broker("broker-2", 1, "b", Long.MAX_VALUE, Map.of());
        run.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(6, state().orElseThrow().promoted());
        assertEquals(List.of(6L, 7L), registry.readRelocationEpochRecord().get().changed(),
                "each batch's epoch lists its ledgers: a broker one epoch behind re-reads only those");
    }

    @Test
    void aCopyThatVanishedOrALedgerRelocatedElsewhereMeanwhileIsNotPromotedAndTheIssueSaysWhy() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5, 6, 7, 8);
        // while each is copied: 5's copy disappears from b; 6 is relocated to c and 7 to b by other switches
        LedgerCopier copier = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                return super.copy(id, from, to, pace).thenCompose(out -> {
                    if (id == 5) {
                        return clusters.delete(5, "b").thenApply(v -> out);
                    }
                    if (id == 6 || id == 7) {
                        return registry.updateRelocations(List.of(id), (i, cur) -> Optional.of(new Relocation(
                                Relocation.FORMAT_VERSION, id, id == 6 ? "c" : "b", "a", "SCHEMA", 0, 0)))
                                .thenApply(v -> out);
                    }
                    return CompletableFuture.completedFuture(out);
                });
            }
        };
        pass(orchestrator("broker-1", registry, copier, Clock.systemUTC(), FAST, 10));
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE_WITH_FAILURES, s.phase(), String.valueOf(s));
        assertEquals("a", home(5).orElseThrow(), "a copy that is not there never becomes the home");
        assertEquals("c", home(6).orElseThrow(), "a home set meanwhile is kept");
        assertEquals(List.of(
                new LedgerIssue(5, "SCHEMA", "a", "NOT_PROMOTED", "its copy on b disappeared before it could be "
                        + "promoted"),
                new LedgerIssue(6, "SCHEMA", "a", "NOT_PROMOTED", "its home changed while it was copied (now c)")),
                s.issues());
        assertEquals(2, s.notPromoted());
        // 7, made home on b meanwhile, is left as it was written, and counts as promoted like 8
        Relocation seven = relocation(7);
        assertEquals("b", seven.home());
        assertEquals(0, seven.switchEpoch(), String.valueOf(seven));
        assertEquals("b", home(8).orElseThrow());
        assertEquals(2, s.promoted());
    }

    @Test
    void aRunSupersededWhileItCopiedPromotesNothingAndSaysSo() throws Exception {
        switchedAt(LONG_AGO);
        schemas(5);
        // the operator switches on (to c) while switch 1's ledger is copied
        LedgerCopier copier = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                return super.copy(id, from, to, pace).thenCompose(out -> registry.update(
                        registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                                new SwitchDirective(1, "c", "b", 2, LONG_AGO, 2L << 32))).thenApply(v -> out));
            }
        };
        pass(orchestrator("broker-1", registry, copier, Clock.systemUTC(), FAST, 10));
        assertEquals(Phase.SUPERSEDED, state().orElseThrow().phase());
        assertEquals("a", home(5).orElseThrow(), "switch 2's migration moves it, not switch 1's");
    }

    @Test
    void aLedgerRelocatedBeforeIsPromotedNamingTheClusterThatIssuedIt() throws Exception {
        // ledger 9 (issued by a) was relocated to c by an earlier switch; its copy there is what switch 1 moves
        switchedAt(LONG_AGO);
        schemas(9);
        clusters.put("c", 9, "schema-9", "schema");
        registry.updateRelocations(List.of(9L), (i, cur) -> Optional.of(new Relocation(Relocation.FORMAT_VERSION, 9,
                "c", "a", "SCHEMA", 0, 0))).get();
        pass(orchestrator("broker-1"));
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE, s.phase(), String.valueOf(s));
        Relocation nine = relocation(9);
        assertEquals("b", nine.home());
        assertEquals("a", nine.from(), "the cluster that issued it stays named: its original may be all that is left");
        // the earlier switch's relocation is not this migration's promotion
        assertEquals(1, s.planned());
        assertEquals(1, s.promoted());
    }

    // ---- the run's last look at the homes ----

    @Test
    void theLastLookNamesAPlannedLedgerLeftBehindButNotOneNothingReferencesAnyMore() throws Exception {
        switchedAt(LONG_AGO);
        schemas(4, 5, 6);
        clusters.put("a", 4, new FakeClusters.Ledger(false, "open", Map.of())); // skipped
        // the relocation writes of 5 and 6 are acknowledged and lost; 6's schema is deleted right then
        Set<String> lost = Set.of(registry.paths().relocation(5), registry.paths().relocation(6));
        MetadataPort port = new ForwardingPort(new PulsarMetadataPort(bed.store)) {
            @Override
            public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean eph) {
                if (!lost.contains(path)) {
                    return super.put(path, value, expected, eph);
                }
                if (path.equals(registry.paths().relocation(6))) {
                    references = references.stream().filter(r -> r.ledgerId() != 6).toList();
                }
                return CompletableFuture.completedFuture(0L);
            }
        };
        pass(orchestrator("broker-1", new RegistryStore(port, registry.paths()), bed.copier, Clock.systemUTC(),
                FAST, 10));
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE_WITH_FAILURES, s.phase(), String.valueOf(s));
        assertEquals("[4 SKIPPED, 5 NOT_PROMOTED]", issues(s), "nothing needs 6 where it is");
        assertTrue(s.issues().get(1).detail().startsWith("home is still a (t/ns/s5)"), s.issues().get(1).detail());
        assertEquals(1, s.notPromoted());
    }

    @Test
    void aCompactedTopicLearntByTheEndOfTheRunKeepsItsIssueWhileTheLedgerItUsesIsNotHome() throws Exception {
        switchedAt(LONG_AGO);
        clusters.put("a", 7, "compacted-v1", "compacted-ledger");
        clusters.put("a", 8, "compacted-v2", "compacted-ledger");
        references = List.of(new LedgerReference(7, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction"));
        unknownUntil = 1;
        // when the run plans, topic c cannot be asked (its stored cursor names 7); by its end it names 8, not moved
        LedgerCopier copier = new FakeClusters.Delegating(bed.copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                references = List.of(new LedgerReference(8, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction"));
                return super.copy(id, from, to, pace);
            }
        };
        pass(orchestrator("broker-1", registry, copier, Clock.systemUTC(), FAST, 10));
        MigrationState s = state().orElseThrow();
        assertEquals(Phase.DONE_WITH_FAILURES, s.phase(), String.valueOf(s));
        assertEquals("[7 INVENTORY_INCOMPLETE]", issues(s));
    }

    @Test
    void aCompactedTopicLearntByTheEndOfTheRunLeavesNoIssueOnceItsCompactedLedgersAreHome() throws Exception {
        switchedAt(LONG_AGO);
        clusters.put("a", 7, "compacted-v1", "compacted-ledger");
        clusters.put("a", 3, new FakeClusters.Ledger(false, "open cursor", Map.of()));
        clusters.put("a", 9, "compacted-d", "compacted-ledger");
        clusters.put("b", 9, "another ledger 9", "schema");
        // none of these is home on b at the end, and none is one of topic c's compacted ledgers: a data ledger of c,
        // c's cursor (open: skipped), topic d's compacted ledger (it collides)
        references = List.of(new LedgerReference(7, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction"),
                new LedgerReference(1, LedgerKind.DATA, "t/ns/persistent/c"),
                new LedgerReference(3, LedgerKind.CURSOR, "t/ns/persistent/c/sub"),
                new LedgerReference(9, LedgerKind.COMPACTION, "t/ns/persistent/d/__compaction"));
        unknownUntil = 1;
        pass(orchestrator("broker-1"));
        MigrationState s = state().orElseThrow();
        assertEquals("b", home(7).orElseThrow());
        assertEquals("[3 SKIPPED, 9 COLLISION]", issues(s), "topic c's compacted ledger moved: no issue for c");
    }
}
