package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RelocationEpoch;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The orchestrator's bookkeeping on an in-memory metadata store with a scripted copier: a run stopped in
 * the middle of PROMOTE is finished by another broker's orchestrator, each ledger promoted exactly once,
 * and data, open and colliding ledgers are handled as documented.
 */
class MigrationOrchestratorTest {
    /** The copy rate's budget, as the broker builds it. */
    private static final io.bcswitch.migration.ByteBudget.Factory PACE = PulsarByteBudget::refilledAt;
    private static final long B_FIRST = 1L << 32;
    /** BUILD's state write while copying: a tenth of a broker's, so that a test sees several in well under a second. */
    private static final long PERSIST_MILLIS = MigrationOrchestrator.PERSIST_INTERVAL_MILLIS / 10;

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private ScheduledExecutorService scheduler;
    private final Map<Long, AtomicInteger> copies = new ConcurrentHashMap<>();
    private final PassBugs bugs = new PassBugs();
    /** The operator fixed what kept 13 open and removed what collided with 14. */
    private final java.util.concurrent.atomic.AtomicBoolean fixed = new java.util.concurrent.atomic.AtomicBoolean();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        scheduler = Executors.newSingleThreadScheduledExecutor();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0), -1).get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 0, B_FIRST), -1).get();
        for (String c : List.of("a", "b")) {
            registry.write(registry.paths().cluster(c), new io.bcswitch.registry.BookieClusterRecord(1, c, "zk:" + c,
                    c.equals("b") ? io.bcswitch.registry.ClusterStatus.ACTIVE
                            : io.bcswitch.registry.ClusterStatus.STANDBY, 1), -1).get();
        }
        registry.writeEphemeral(registry.paths().broker("broker-1"),
                new BrokerCutoverRecord(1, "broker-1", 1, "b", 0, 0, 0, 1, 2)).get();
        // the orchestrator's own broker follows the relocation table at once (its agent is not part of the test)
        registry.writeEphemeral(registry.paths().relocationApplied("broker-1"),
                new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, Long.MAX_VALUE, 0)).get();
    }

    /** Every orchestrator a test made, closed after it also when it fails. */
    private final List<MigrationOrchestrator> made = new java.util.concurrent.CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        made.forEach(MigrationOrchestrator::close);
        scheduler.shutdownNow();
        store.close();
    }

    /** Copies succeed once per ledger, then the copy is found present; ledger 13 stays open; 14 collides. */
    private final LedgerCopier copier = new LedgerCopier() {
        @Override
        public CompletableFuture<Outcome> copy(long id, String from, String to,
                                               LongFunction<CompletableFuture<Void>> pace) {
            if (id == 13 && !fixed.get()) {
                return CompletableFuture.completedFuture(new Outcome(Result.NOT_CLOSED, 0, "open"));
            }
            if (id == 14 && !fixed.get()) {
                return CompletableFuture.completedFuture(new Outcome(Result.COLLISION, 0, "different"));
            }
            int n = copies.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
            return CompletableFuture.completedFuture(n == 1 ? new Outcome(Result.COPIED, 100, "copied")
                    : new Outcome(Result.ALREADY_PRESENT, 0, "present"));
        }

        @Override
        public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
            // the copies made on b are there (and closed), and every original on a
            return CompletableFuture.completedFuture(cluster.equals("b") && copies.containsKey(id)
                    || cluster.equals("a") ? Optional.of(new LedgerFacts(true, 100, 0, "schema")) : Optional.empty());
        }

        @Override
        public CompletableFuture<List<Long>> list(String cluster) {
            return CompletableFuture.completedFuture(List.of());
        }

        @Override
        public CompletableFuture<Boolean> sameEntries(long id, String a, String b,
                                                      LongFunction<CompletableFuture<Void>> pace) {
            return CompletableFuture.completedFuture(true);
        }

        @Override
        public CompletableFuture<Void> delete(long id, String cluster) {
            return CompletableFuture.completedFuture(null);
        }
    };

    private List<LedgerReference> refs() {
        List<LedgerReference> r = new ArrayList<>();
        r.add(new LedgerReference(1, LedgerKind.DATA, "t/ns/persistent/x"));       // data: never copied
        for (long id = 2; id <= 12; id++) {
            r.add(new LedgerReference(id, LedgerKind.SCHEMA, "t/ns/x"));
        }
        r.add(new LedgerReference(13, LedgerKind.CURSOR, "t/ns/persistent/x/sub")); // open
        r.add(new LedgerReference(14, LedgerKind.COMPACTION, "t/ns/persistent/x"));  // collides
        r.add(new LedgerReference(B_FIRST + 1, LedgerKind.CURSOR, "t/ns/persistent/y/sub")); // already on b
        return r;
    }

    private MigrationOrchestrator orchestrator(String broker, MigrationMetrics metrics) {
        return orchestrator(broker, metrics, copier, 3, MigrationOrchestrator.APPLY_WAIT_MILLIS);
    }

    private MigrationOrchestrator orchestrator(String broker, MigrationMetrics metrics, LedgerCopier with,
                                               int concurrency, long applyWaitMillis) {
        MigrationSafetyTest.HandSwitchBack back = new MigrationSafetyTest.HandSwitchBack(registry);
        MigrationOrchestrator o = back.runsOn(new MigrationOrchestrator(registry, () -> CompletableFuture
                .completedFuture(refs()), with, new SwitchConfig.Migration(concurrency, 0, 2, 24), () -> broker,
                scheduler, PACE, Clock.systemUTC(), metrics, back, new MigrationOrchestrator.Waits(applyWaitMillis, 100,
                PERSIST_MILLIS)));
        made.add(o);
        return o;
    }

    /** Another live broker's applied relocation epoch, as its agent would publish it. */
    private void applied(String broker, long epoch) throws Exception {
        // a live broker with the plugin: it applied switch 1 and finished its cutover
        registry.writeEphemeral(registry.paths().broker(broker),
                new BrokerCutoverRecord(1, broker, 1, "b", 0, 0, 0, 1, 2)).get();
        registry.writeEphemeral(registry.paths().relocationApplied(broker), new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, epoch, 0)).get();
    }

    /**
     * The test's copier, each copy taking 40 ms; records the most copies at once, and tells {@code onStart} how many
     * have started (the one starting included).
     */
    private LedgerCopier slowCopier(AtomicInteger maxInFlight, java.util.function.IntConsumer onStart) {
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger started = new AtomicInteger();
        return new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                onStart.accept(started.incrementAndGet());
                CompletableFuture<Outcome> out = new CompletableFuture<>();
                scheduler.schedule(() -> {
                    inFlight.decrementAndGet();
                    super.copy(id, from, to, pace).thenAccept(out::complete);
                }, 40, TimeUnit.MILLISECONDS);
                return out;
            }
        };
    }

    @Test
    void copiesAtMostMigrationConcurrencyLedgersAtOnce() throws Exception {
        AtomicInteger maxInFlight = new AtomicInteger();
        LedgerCopier slow = slowCopier(maxInFlight, n -> { });
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs, slow, 3, 1_000)) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
        }
        assertEquals(3, maxInFlight.get(), "13 ledgers to copy, migrationConcurrency=3");
        assertEquals(11, copies.size(), "every closed, non-colliding ledger copied");
    }

    @Test
    void whileItCopiesTheStateSaysHowManyBytesAreStillToCopy() throws Exception {
        // one copy at a time, 60 ms each: the state is written every PERSIST_MILLIS while copying
        LedgerCopier slow = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                CompletableFuture<Outcome> out = new CompletableFuture<>();
                scheduler.schedule(() -> super.copy(id, from, to, pace).thenAccept(out::complete), 60,
                        TimeUnit.MILLISECONDS);
                return out;
            }
        };
        List<MigrationState> seenWhileBuilding = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs, slow, 1,
                MigrationOrchestrator.APPLY_WAIT_MILLIS)) {
            o.switchAccepted(1);
            bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
                var st = o.readState(1).get();
                if (st.present() && st.value().phase() == Phase.BUILD && st.value().copied() > 0) {
                    seenWhileBuilding.add(st.value());
                }
                return st.present() && st.value().phase().terminal();
            }, "the migration ends");
            MigrationState end = o.readState(1).get().value();
            assertEquals(0, end.bytesRemaining());
        }
        assertFalse(seenWhileBuilding.isEmpty(), "the state was read while copying");
        for (MigrationState st : seenWhileBuilding) {
            // 13 ledgers planned on a, 100 bytes each (the copier's facts); settled: copied, found present, collided
            long unsettled = 13 - st.copied() - st.alreadyPresent() - st.collisions() - st.failed();
            assertEquals(100 * unsettled, st.bytesRemaining(), "copied " + st.copied() + " of " + st.planned());
        }
        assertTrue(seenWhileBuilding.stream().anyMatch(st -> st.bytesRemaining() > 0));
    }

    @Test
    void aConcurrencyChangedWhileCopyingAppliesToTheCopyingUnderWay() throws Exception {
        io.bcswitch.tuning.LiveTuning tuning = new io.bcswitch.tuning.LiveTuning(
                new io.bcswitch.tuning.LiveTuning.Values(0, 1, 150));
        AtomicInteger maxInFlight = new AtomicInteger();
        LedgerCopier slow = slowCopier(maxInFlight, started -> {
            if (started == 3) {
                // the operator raises it while the third ledger is being copied
                tuning.apply(new io.bcswitch.registry.TuningOverrides(1, null, 3, null, 0));
            }
        });
        MigrationSafetyTest.HandSwitchBack back = new MigrationSafetyTest.HandSwitchBack(registry);
        try (MigrationOrchestrator o = back.runsOn(new MigrationOrchestrator(registry,
                () -> CompletableFuture.completedFuture(refs()), slow, new SwitchConfig.Migration(1, 0, 2, 24), tuning,
                () -> "broker-1", scheduler, PACE, Clock.systemUTC(), bugs, back,
                new MigrationOrchestrator.Waits(MigrationOrchestrator.APPLY_WAIT_MILLIS, 100)))) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
        }
        assertEquals(3, maxInFlight.get(), "one at a time, then three once the operator asked for three");
        assertEquals(11, copies.size(), "every closed, non-colliding ledger copied once");
    }

    @Test
    void eachPromoteBatchWaitsUntilEveryLiveBrokerAppliedThePreviousOne() throws Exception {
        applied("broker-2", 0);
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs, copier, 3, 60_000)) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.PROMOTE);
            bugs.waitUntil(TestWaits.SECONDS, () -> registry.listRelocations().get().size() >= 2, "a batch");
            // the wait looks for broker-2's applied epoch every 100 ms: a batch it did not wait for would come within
            Thread.sleep(250);
            assertEquals(2, registry.listRelocations().get().size(), "one batch, then waits for broker-2");
            assertEquals(Phase.PROMOTE, o.readState(1).get().value().phase());
            long epoch = registry.readRelocationEpoch().get();
            applied("broker-2", epoch);
            bugs.waitUntil(TestWaits.SECONDS, () -> registry.listRelocations().get().size() >= 4, "the next batch");
            Thread.sleep(250);
            assertTrue(registry.listRelocations().get().size() == 4, "the next batch only");
            applied("broker-2", Long.MAX_VALUE);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
            assertEquals(11, o.readState(1).get().value().promoted());
        }
    }

    @Test
    void promoteGoesOnWhenALiveBrokerNeverApplies() throws Exception {
        applied("broker-2", 0);
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs, copier, 3, 100)) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
            assertEquals(11, o.readState(1).get().value().promoted());
            assertEquals(11, registry.listRelocations().get().size());
        }
    }

    /**
     * Broker-1 pauses in the middle of a copy (a long GC pause) long enough for its metadata session to expire;
     * broker-2 takes the migration over and finishes it. Broker-1's run then wakes up: whatever it writes must neither
     * overwrite nor drop the copies broker-2 recorded (a rollback deletes what they list), and it copies nothing more.
     */
    @Test
    void aRunThatLostTheMigrationWhilePausedNeitherOverwritesNorDropsTheNewOwnersCopiesAndStops() throws Exception {
        CompletableFuture<Void> wakeUp = new CompletableFuture<>();
        CompletableFuture<Void> paused = new CompletableFuture<>();
        List<Long> copiedByFirst = new java.util.concurrent.CopyOnWriteArrayList<>();
        LedgerCopier pausing = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                copiedByFirst.add(id);
                if (id != 5) {
                    return super.copy(id, from, to, pace);
                }
                paused.complete(null);
                return wakeUp.thenCompose(v -> super.copy(id, from, to, pace));
            }
        };
        MigrationOrchestrator first = orchestrator("broker-1", bugs, pausing, 1, 60_000);
        first.switchAccepted(1);
        paused.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        // broker-1's session expired: its lock and liveness records are gone; broker-2 takes over and finishes
        store.delete(registry.paths().orchestratorLock(), Optional.empty()).get();
        store.delete(registry.paths().broker("broker-1"), Optional.empty()).get();
        store.delete(registry.paths().relocationApplied("broker-1"), Optional.empty()).get();
        applied("broker-2", Long.MAX_VALUE);
        MigrationOrchestrator second = orchestrator("broker-2", bugs, copier, 3, 60_000);
        second.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.DONE_WITH_FAILURES, second.readState(1).get().value().phase());
        java.util.Set<Long> recorded = new java.util.TreeSet<>();
        registry.readCopies(1).get().values().forEach(recorded::addAll);
        assertEquals(java.util.Set.of(2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L), recorded);
        int copiesBefore = copiedByFirst.size();

        wakeUp.complete(null);
        // a pass queued now runs after the woken one has ended
        first.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        java.util.Set<Long> after = new java.util.TreeSet<>();
        registry.readCopies(1).get().values().forEach(after::addAll);
        assertEquals(recorded, after, "broker-2's copies are all still listed");
        assertEquals(copiesBefore, copiedByFirst.size(), "the woken run copies nothing more");
        assertEquals(Phase.DONE_WITH_FAILURES, second.readState(1).get().value().phase());
        first.close();
        second.close();
    }

    @Test
    void anOrchestratorThatLostItsLockStopsWhenAnotherBrokerHasTakenOver() throws Exception {
        applied("broker-3", 0); // a lagging broker holds PROMOTE after its first batch
        AtomicInteger batchesOfFirst = new AtomicInteger();
        MigrationOrchestrator first = orchestrator("broker-1", new MigrationMetrics() {
            @Override
            public void promoted(String cluster, int ledgers) {
                batchesOfFirst.incrementAndGet();
            }
        }, copier, 3, 60_000);
        first.switchAccepted(1);
        awaitPhase(first, Phase.PROMOTE);
        // the batch's relocations are written before its metric counts it: await both
        bugs.waitUntil(TestWaits.SECONDS,
                () -> registry.listRelocations().get().size() >= 2 && batchesOfFirst.get() >= 1, "the first batch promoted");
        assertEquals(1, batchesOfFirst.get());

        // broker-1's metadata session expired (its lock and liveness record are gone) but it keeps running;
        // broker-2 takes the migration over
        store.delete(registry.paths().orchestratorLock(), Optional.empty()).get();
        store.delete(registry.paths().broker("broker-1"), Optional.empty()).get();
        store.delete(registry.paths().relocationApplied("broker-1"), Optional.empty()).get();
        applied("broker-2", Long.MAX_VALUE);
        AtomicInteger presentForSecond = new AtomicInteger();
        AtomicInteger collisionsForSecond = new AtomicInteger();
        MigrationOrchestrator second = orchestrator("broker-2", new MigrationMetrics() {
            @Override
            public void alreadyPresent(String cluster) {
                presentForSecond.incrementAndGet();
            }

            @Override
            public void collision(String cluster) {
                collisionsForSecond.incrementAndGet();
            }
        }, copier, 3, 60_000);
        CompletableFuture<Void> pass = second.tick();
        bugs.waitUntil(TestWaits.SECONDS,
                () -> first.readState(1).get().value().owner().equals("broker-2"), "broker-2 owns the run");
        applied("broker-3", Long.MAX_VALUE);
        pass.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);

        MigrationState done = second.readState(1).get().value();
        assertEquals(Phase.DONE_WITH_FAILURES, done.phase(), String.valueOf(done));
        assertEquals("broker-2", done.owner());
        assertEquals(11, done.promoted());
        Thread.sleep(300);
        assertEquals(1, batchesOfFirst.get(), "the broker that lost the migration promoted nothing more");
        // the copies the first run made are found again, identical: counted apart from the one collision (ledger 14)
        long copiedByFirst = copies.values().stream().filter(n -> n.get() >= 2).count();
        assertTrue(copiedByFirst > 0, "the second run met the first run's copies: " + copies);
        assertEquals(copiedByFirst, presentForSecond.get());
        assertEquals(1, collisionsForSecond.get());
        first.close();
        second.close();
    }

    @Test
    void aResumedRunFirstHasBrokersReReadTheWholeTable() throws Exception {
        // a run promoted 2 and 3 (compare-and-sets done) and stopped before the epoch bump that lists them
        for (long id : List.of(2L, 3L)) {
            registry.updateRelocations(List.of(id), (i, cur) -> Optional.of(new io.bcswitch.registry.Relocation(
                    io.bcswitch.registry.Relocation.FORMAT_VERSION, id, "b", "a", "SCHEMA", 1, 0))).get();
        }
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-0", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0), -1).get();
        applied("broker-3", 0); // a live broker that has not caught up holds PROMOTE after each announcement
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs, copier, 3, 60_000)) {
            CompletableFuture<Void> pass = o.tick();
            bugs.waitUntil(TestWaits.PASS_SECONDS,
                    () -> registry.readRelocationEpoch().get() >= 1, "a relocation epoch announced");
            Thread.sleep(200);
            var first = registry.readRelocationEpochRecord().get();
            assertEquals(1, first.epoch(), "nothing promoted before the announcement is applied");
            assertEquals(null, first.changed(), "brokers are told to re-read the whole table (2 and 3) first");
            applied("broker-3", Long.MAX_VALUE);
            pass.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
            MigrationState done = o.readState(1).get().value();
            assertEquals(Phase.DONE_WITH_FAILURES, done.phase(), String.valueOf(done));
            assertEquals(11, done.promoted());
        }
    }

    @Test
    void aFinishedMigrationRunsAgainOnRequestButNeverTwiceAtOnce() throws Exception {
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs, copier, 3, 60_000)) {
            assertConflict(o.retry(1), "has not started yet");
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
            assertEquals(11, o.readState(1).get().value().promoted());

            fixed.set(true);
            applied("broker-3", 0); // holds the re-run in PROMOTE
            MigrationState again = o.retry(1).get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(Phase.BUILD, again.phase());
            assertEquals("broker-1", again.owner());
            awaitPhase(o, Phase.PROMOTE);
            Thread.sleep(300); // the pass now waits (60 s at most) for broker-3 to apply the announcement
            // refused at once, not after the pass that holds the driver: the state already says no
            // a run under way is named with the broker running it
            assertConflict(o.retry(1), "is PROMOTE on broker broker-1; only a finished migration");
            applied("broker-3", Long.MAX_VALUE);
            awaitPhase(o, Phase.DONE);
            MigrationState done = o.readState(1).get().value();
            assertEquals(13, done.promoted(), "the open and the colliding ledger moved too: " + done);
            assertEquals(0, done.collisions());
            assertEquals(0, done.skipped());
            assertEquals(13, registry.listRelocations().get().size());
            copies.forEach((id, n) -> assertTrue(n.get() <= 2, "ledger " + id + " copied once, then found present"));
        }
    }

    /**
     * The operator asks for the re-run while the pass that finished the migration is still releasing its lock: the
     * request waits behind that pass and is then run by a pass of its own (it once found the finishing pass still
     * marked as queued and ran none).
     */
    @Test
    void aRetryAskedForWhileTheFinishingPassReleasesItsLockRunsAgain() throws Exception {
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> releasing = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean(true);
        String lock = registry.paths().orchestratorLock();
        MetadataStoreExtended held = (MetadataStoreExtended) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {MetadataStoreExtended.class}, (proxy, m, args) -> {
                    Object out;
                    try {
                        out = m.invoke(store, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (m.getName().equals("delete") && lock.equals(args[0]) && hold.getAndSet(false)) {
                        releasing.complete(null);
                        return ((CompletableFuture<?>) out).thenCompose(v -> release);
                    }
                    return out;
                });
        registry = new RegistryStore(new PulsarMetadataPort(held), new RegistryPaths("/bcs"));
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs)) {
            o.switchAccepted(1);
            releasing.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
            assertEquals(Phase.DONE_WITH_FAILURES, o.readState(1).get().value().phase());
            fixed.set(true);
            CompletableFuture<MigrationState> again = o.retry(1);
            Thread.sleep(100);
            assertTrue(!again.isDone(), "the request waits for the running pass");
            release.complete(null);
            assertEquals(Phase.BUILD, again.get(TestWaits.SECONDS, TimeUnit.SECONDS).phase());
            awaitPhase(o, Phase.DONE);
            assertEquals(13, o.readState(1).get().value().promoted());
        }
    }

    @Test
    void aRolledBackMigrationDoesNotRunAgain() throws Exception {
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs)) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
            o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            byte[] before = store.get(registry.paths().orchestrator(1)).get().orElseThrow().getValue();
            // an ended one is not: no broker runs it
            assertConflict(o.retry(1), "is ROLLED_BACK; only a finished migration");
            assertEquals(new String(before, java.nio.charset.StandardCharsets.UTF_8), new String(
                    store.get(registry.paths().orchestrator(1)).get().orElseThrow().getValue(),
                    java.nio.charset.StandardCharsets.UTF_8), "a refused retry changes nothing");
        }
    }

    /**
     * A rollback another pass finished first (the request recorded it; a background pass on this or another broker
     * took the lock before the request's own finish ran) still answers with the switch back that pass made: the
     * answer once carried no switch at all and pulsar-admin failed on it.
     */
    @Test
    void aRollbackFinishedByAnotherPassAnswersWithItsSwitchBack() throws Exception {
        try (MigrationOrchestrator o = orchestrator("broker-1", bugs)) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
            var first = o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            var again = o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(Phase.ROLLED_BACK, again.state().phase());
            assertTrue(again.switched() != null, "the answer names the switch back");
            assertEquals(first.switched().directive(), again.switched().directive());
            assertEquals("a", again.switched().directive().target());
            assertEquals(2, again.switched().directive().epoch());
        }
    }

    /**
     * An operator's switch committed between the rollback's flip and its switch back: the rollback's switch back
     * loses the compare-and-set. The newer switch decides where the brokers go, so the rollback is finished at once
     * (ROLLED_BACK, no switch back in the answer): it once stayed ROLLING_BACK until a pass 30 s later, and its
     * request answered 409 although its flip was made.
     */
    @Test
    void aRollbackWhoseSwitchBackLosesToAConcurrentSwitchFinishesAtOnce() throws Exception {
        MigrationSafetyTest.HandSwitchBack hand = new MigrationSafetyTest.HandSwitchBack(registry);
        MigrationOrchestrator.SwitchBack losing = cluster -> hand.switchTo("c").thenCompose(won ->
                CompletableFuture.failedFuture(io.bcswitch.registry.RegistryException.conflict(
                        "another switch was committed concurrently; check status and retry")));
        try (MigrationOrchestrator o = hand.runsOn(new MigrationOrchestrator(registry,
                () -> CompletableFuture.completedFuture(refs()), copier, new SwitchConfig.Migration(3, 0, 2, 24),
                () -> "broker-1", scheduler, PACE, Clock.systemUTC(), bugs, losing,
                new MigrationOrchestrator.Waits(MigrationOrchestrator.APPLY_WAIT_MILLIS, 100, PERSIST_MILLIS)))) {
            o.switchAccepted(1);
            awaitPhase(o, Phase.DONE_WITH_FAILURES);
            var outcome = o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(Phase.ROLLED_BACK, outcome.state().phase());
            assertEquals(null, outcome.switched(), "the newer switch, not the rollback, moved the brokers");
            assertEquals(Phase.ROLLED_BACK, o.readState(1).get().value().phase());
            assertEquals("c", registry.readDirective().get().value().target());
        }
    }

    private static void assertConflict(CompletableFuture<?> f, String text) {
        try {
            f.get(TestWaits.SECONDS, TimeUnit.SECONDS);
            throw new AssertionError("expected a conflict: " + text);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            assertTrue(c instanceof io.bcswitch.registry.RegistryException r
                    && r.kind() == io.bcswitch.registry.RegistryException.Kind.CONFLICT
                    && c.getMessage().contains(text), String.valueOf(c));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void promoteInterruptedOnOneBrokerIsFinishedByAnother() throws Exception {
        // the first broker stops after its second promotion batch (as if it died)
        AtomicInteger batches = new AtomicInteger();
        MigrationOrchestrator[] first = new MigrationOrchestrator[1];
        first[0] = orchestrator("broker-1", new MigrationMetrics() {
            @Override
            public void promoted(String cluster, int ledgers) {
                if (batches.incrementAndGet() == 2) {
                    first[0].close();
                }
            }
        });
        first[0].switchAccepted(1);
        awaitPhase(first[0], Phase.PROMOTE);
        bugs.waitUntil(TestWaits.SECONDS, () -> batches.get() >= 2, "the second batch");
        Thread.sleep(150); // a closed orchestrator writes nothing more
        MigrationState stopped = first[0].readState(1).get().value();
        assertEquals(Phase.PROMOTE, stopped.phase(), String.valueOf(stopped));
        int relocatedBefore = registry.listRelocations().get().size();
        assertEquals(4, relocatedBefore, "two batches of two");

        // another broker takes over (the first one's lock is gone with it)
        applied("broker-2", Long.MAX_VALUE);
        store.delete(registry.paths().broker("broker-1"), Optional.empty()).get();
        store.delete(registry.paths().relocationApplied("broker-1"), Optional.empty()).get();
        MigrationOrchestrator second = orchestrator("broker-2", MigrationMetrics.NONE);
        second.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        MigrationState done = second.readState(1).get().value();
        assertEquals(Phase.DONE_WITH_FAILURES, done.phase(), String.valueOf(done));
        assertEquals("broker-2", done.owner());
        assertEquals(13, done.planned(), "11 schema ledgers, the open cursor ledger, the compacted ledger");
        assertEquals(11, done.promoted());
        assertEquals(1, done.collisions());
        assertEquals(1, done.skipped());
        assertEquals(11, registry.listRelocations().get().size());
        registry.listRelocations().get().values().forEach(r -> assertEquals("b", r.home()));
        copies.forEach((id, n) -> assertTrue(n.get() <= 2, "ledger " + id + " copied at most once, then found"));
        assertTrue(copies.values().stream().allMatch(n -> n.get() >= 1));
        assertTrue(done.issues().stream().anyMatch(i -> i.ledgerId() == 14 && i.result().equals("COLLISION")));
        assertTrue(done.issues().stream().anyMatch(i -> i.ledgerId() == 13 && i.result().equals("SKIPPED")));
        // one bump per batch (2 by the first broker, then 2+2+2+1), and one as the second run's PROMOTE starts on a
        // table that is not empty (every broker re-reads it whole); the first run started on an empty one
        assertEquals(7, registry.readRelocationEpoch().get(), "one epoch bump per batch and one per resumed run");
        second.close();
    }

    /** Awaiting the end of a run (DONE or DONE_WITH_FAILURES), any other end fails the test at once. */
    private void awaitPhase(MigrationOrchestrator o, Phase phase) throws Exception {
        boolean awaitingTheEnd = phase == Phase.DONE || phase == Phase.DONE_WITH_FAILURES;
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            var s = o.readState(1).get();
            if (s.present() && awaitingTheEnd && s.value().phase().terminal() && s.value().phase() != phase) {
                throw new AssertionError("the migration ended " + s.value().phase() + ", not " + phase + ": "
                        + s.value());
            }
            return s.present() && s.value().phase() == phase;
        }, "phase " + phase);
    }

    /** Polls {@code condition} every 20 ms for at most {@code seconds}; fails the test naming {@code what} if not. */
}
