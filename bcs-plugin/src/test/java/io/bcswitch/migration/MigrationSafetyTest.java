package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.precheck.ClusterLocation;
import io.bcswitch.precheck.ClusterMetadata;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.ForwardingPort;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.RelocationEpoch;
import io.bcswitch.registry.StoreSnapshot;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.switching.SwitchService;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Operator sequences that used to lose a ledger or wedge the migration, on an in-memory metadata store and
 * {@link FakeClusters}: rollback then switch to the same cluster again; a ledger relocated a second time; a
 * rollback whose switch fails; cleanup of a stray that is not ours, of a ledger referenced again since the
 * plan, and of an original whose home copy is missing.
 */
class MigrationSafetyTest {
    /**
     * The run's waits on other brokers, on open ledgers and between its looks at its state while it copies, short: no
     * test here depends on their length.
     */
    static final MigrationOrchestrator.Waits FAST = new MigrationOrchestrator.Waits(100, 100,
            MigrationOrchestrator.PERSIST_INTERVAL_MILLIS, 100);
    /** The copy rate's budget, as the broker builds it. */
    private static final io.bcswitch.migration.ByteBudget.Factory PACE = PulsarByteBudget::refilledAt;
    private static final long B_FIRST = 1L << 32;
    private static final long SCHEMA_LEDGER = 5;
    private static final SwitchConfig.Migration CONFIG = new SwitchConfig.Migration(2, 0, 10, 24);

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private ScheduledExecutorService scheduler;
    private final FakeClusters clusters = new FakeClusters();
    /** What the components under test read and delete through: {@link #clusters}, answering later. */
    private final LedgerCopier copier = clusters.answeringLater();
    private volatile List<LedgerReference> references = List.of(
            new LedgerReference(SCHEMA_LEDGER, LedgerKind.SCHEMA, "t/ns/x"));
    private final List<MigrationOrchestrator> orchestrators = new ArrayList<>();
    private final PassBugs bugs = new PassBugs();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        scheduler = Executors.newSingleThreadScheduledExecutor();
        clusters.put("a", SCHEMA_LEDGER, "schema-v1", "schema");
    }

    @AfterEach
    void tearDown() throws Exception {
        orchestrators.forEach(MigrationOrchestrator::close);
        scheduler.shutdownNow();
        store.close();
    }

    private MigrationOrchestrator orchestrator(String broker) {
        return orchestrator(broker, true);
    }

    /**
     * @param acceptsSwitchBacks whether a rollback's switch back is accepted on this broker (as in production), so
     *                           that its migration runs in the next pass; false leaves it to the start grace, for a
     *                           test that looks at what the rollback alone did
     */
    private MigrationOrchestrator orchestrator(String broker, boolean acceptsSwitchBacks) {
        HandSwitchBack back = new HandSwitchBack(registry);
        MigrationOrchestrator o = new MigrationOrchestrator(registry,
                () -> CompletableFuture.completedFuture(references), copier,
                CONFIG, () -> broker, scheduler, PACE, Clock.systemUTC(),
                bugs, back, FAST);
        if (acceptsSwitchBacks) {
            back.runsOn(o);
        }
        orchestrators.add(o);
        return o;
    }

    /** The inventory as the test has set {@link #references} at the moment it is asked. */
    private LedgerInventory currentReferences() {
        return () -> CompletableFuture.completedFuture(references);
    }

    /**
     * broker-1's orchestrator over {@code registry}, {@code inventory} and {@code copier}, accepting the switches back
     * that its rollbacks make, closed after the test.
     */
    private MigrationOrchestrator running(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier) {
        HandSwitchBack back = new HandSwitchBack(registry);
        MigrationOrchestrator o = back.runsOn(new MigrationOrchestrator(registry, inventory, copier, CONFIG,
                () -> "broker-1", scheduler, PACE, Clock.systemUTC(), bugs, back, FAST));
        orchestrators.add(o);
        return o;
    }

    /** The registry as it is after switch {@code epoch} to {@code target} (ranges appended in order). */
    private void switched(long epoch, String target, String origin, long firstId) throws Exception {
        for (String c : List.of(origin, target)) { // registered, as a switch needs them (a rollback goes back to one)
            registry.update(registry.paths().cluster(c), BookieClusterRecord.class, cur -> cur.isPresent()
                    ? Optional.empty() : Optional.of(new BookieClusterRecord(1, c,
                    "zk+hierarchical://zk-" + c + ":2181/ledgers", ClusterStatus.STANDBY, 1))).get();
        }
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(
                cur.orElse(RangeTable.bootstrap("a", 0)).with(new IdRange(target, firstId, epoch, 0)))).get();
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                new SwitchDirective(1, target, origin, epoch, System.currentTimeMillis(), firstId))).get();
        // every live broker applied it and finished its cutover
        for (String b : liveBrokers) {
            registry.writeEphemeral(registry.paths().broker(b),
                    new BrokerCutoverRecord(1, b, epoch, target, 0, 0, 0, 1, 2)).get();
        }
    }

    /** Brokers of the test (each with the plugin), kept applying every switch by {@link #switched}. */
    private final java.util.Set<String> liveBrokers = new java.util.concurrent.CopyOnWriteArraySet<>(
            java.util.Set.of("broker-1"));

    /**
     * A switch back as SwitchService makes one, without the precheck: the next epoch's range appended, the
     * directive written, broker-1 applied it and finished its cutover.
     */
    /**
     * A switch back written into the registry by hand, then accepted on the broker whose orchestrator asked for it,
     * as SwitchService has the broker that commits a switch do: that broker runs the new switch's migration at once,
     * the others leave it alone for {@link MigrationPass#START_GRACE_MILLIS}.
     */
    static final class HandSwitchBack implements MigrationOrchestrator.SwitchBack {
        private final RegistryStore registry;
        private final java.util.concurrent.atomic.AtomicReference<MigrationOrchestrator> runsOn =
                new java.util.concurrent.atomic.AtomicReference<>();

        HandSwitchBack(RegistryStore registry) {
            this.registry = registry;
        }

        /** {@code o}, which this switch back is given to and which accepts the switches it makes. */
        MigrationOrchestrator runsOn(MigrationOrchestrator o) {
            runsOn.set(o);
            return o;
        }

        @Override
        public CompletableFuture<io.bcswitch.switching.SwitchResult> switchTo(String cluster) {
            return registry.readDirective().thenCompose(d -> {
                long epoch = d.value().epoch() + 1;
                SwitchDirective next = new SwitchDirective(1, cluster, d.value().target(), epoch,
                        System.currentTimeMillis(), (epoch + 10) << 32);
                return registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(
                                cur.orElse(RangeTable.bootstrap("a", 0)).with(d.value().range()).with(next.range())))
                        .thenCompose(t -> registry.write(registry.paths().switchTarget(), next, d.version()))
                        .thenCompose(v -> registry.listBrokerProgress()).thenCompose(records -> {
                            List<CompletableFuture<Void>> writes = new ArrayList<>();
                            records.forEach(r -> writes.add(registry.writeEphemeral(registry.paths().broker(r.broker()),
                                    new BrokerCutoverRecord(1, r.broker(), epoch, cluster, 0, 0, 0, 1, 2))));
                            return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
                        })
                        .thenApply(v -> {
                            MigrationOrchestrator o = runsOn.get();
                            if (o != null) {
                                o.switchAccepted(epoch);
                            }
                            return new io.bcswitch.switching.SwitchResult(next, null);
                        });
            });
        }
    }

    private void applied(String broker, long relocationEpoch) throws Exception {
        if (liveBrokers.add(broker)) {
            var d = registry.readDirective().get().value();
            registry.writeEphemeral(registry.paths().broker(broker),
                    new BrokerCutoverRecord(1, broker, d.epoch(), d.target(), 0, 0, 0, 1, 2)).get();
        }
        registry.writeEphemeral(registry.paths().relocationApplied(broker),
                new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, relocationEpoch, 0)).get();
    }

    /**
     * The orchestrator's own passes (every 50 ms here) take the migration there; the test awaits the state. Awaiting
     * the end of a run (DONE or DONE_WITH_FAILURES), any other end fails the test at once: nothing but an operator
     * moves a migration on from there.
     */
    private MigrationState awaitPhase(MigrationOrchestrator o, long epoch, Phase phase) throws Exception {
        o.start(50);
        boolean awaitingTheEnd = phase == Phase.DONE || phase == Phase.DONE_WITH_FAILURES;
        try {
            CompletableFuture<MigrationState> reached = o.await(epoch,
                    x -> x.phase() == phase || awaitingTheEnd && x.phase().terminal());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TestWaits.PASS_SECONDS);
            while (!reached.isDone() && System.nanoTime() < deadline) {
                bugs.check(); // a pass that failed on a bug gets nowhere: no need to wait out the limit
                Thread.sleep(20);
            }
            MigrationState s = reached.getNow(null);
            if (s == null) {
                throw new java.util.concurrent.TimeoutException();
            }
            if (s.phase() != phase) {
                throw new AssertionError("migration of epoch " + epoch + " ended " + s.phase() + ", not " + phase
                        + ": " + s);
            }
            return s;
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("migration of epoch " + epoch + " does not reach " + phase + ": "
                    + o.readState(epoch).get().value());
        }
    }

    private Optional<String> home(long id) throws Exception {
        return RegistryView.read(registry).get().home(id);
    }

    @Test
    void rollbackThenSwitchingToTheSameClusterAgainNeverDeletesTheLedgersNewHome() throws Exception {
        MigrationOrchestrator o = migratedToB();
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());

        // broker-2 lags behind the relocation table: the rollback's deletion of the copy on b waits for it
        applied("broker-2", registry.readRelocationEpoch().get());
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(2, registry.readDirective().get().value().epoch(), "switched back to a");
        // the operator switches to b again before broker-2 has caught up
        switched(3, "b", "a", 30L << 32);
        o.switchAccepted(3); // committed on this broker
        awaitPhase(o, 3, Phase.DONE);
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow(), "promoted to b again by the migration of epoch 3");
        assertEquals(0, o.readState(1).get().value().pendingDeletionCount(),
                "promoted again: off switch 1's deletion list, and its count with it");
        assertTrue(registry.readCopies(1).get().values().stream().noneMatch(l -> l.contains(SCHEMA_LEDGER)));

        applied("broker-2", Long.MAX_VALUE); // broker-2 catches up: the old epoch's deletions may run now
        tickPasses(o, 12);
        assertTrue(clusters.has("b", SCHEMA_LEDGER), "ledger " + SCHEMA_LEDGER + " is home on b: never deleted there");
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());
    }

    @Test
    void aLedgerRelocatedOnceIsRelocatedAgainByTheNextSwitch() throws Exception {
        // epoch 1 (a -> b) relocated the schema ledger to b; now c becomes active
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(RangeTable.bootstrap("a", 0)
                .with(new IdRange("b", B_FIRST, 1, 0)))).get();
        clusters.put("b", SCHEMA_LEDGER, clusters.get("a", SCHEMA_LEDGER));
        registry.updateRelocations(List.of(SCHEMA_LEDGER), (id, cur) -> Optional.of(new Relocation(
                Relocation.FORMAT_VERSION, SCHEMA_LEDGER, "b", "a", "SCHEMA", 1, 0))).get();
        registry.bumpRelocationEpoch(0, null).get();
        switched(2, "c", "b", 2L << 32);
        applied("broker-1", Long.MAX_VALUE);

        MigrationOrchestrator o = orchestrator("broker-1");
        o.switchAccepted(2);
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            o.tick();
            var s = o.readState(2).get();
            return s.present() && s.value().phase().terminal();
        }, "the migration of epoch 2 finishes");
        MigrationState done = o.readState(2).get().value();
        assertTrue(clusters.has("c", SCHEMA_LEDGER), "copied to c");
        assertEquals("c", home(SCHEMA_LEDGER).orElseThrow(),
                "the ledger's home moved on to c (migration " + done.phase() + ", promoted " + done.promoted() + ")");
        assertEquals(Phase.DONE, done.phase(), String.valueOf(done));
    }

    @Test
    void whenTheHomeOfARelocatedLedgerDiesTheNextMigrationCopiesItFromTheOriginal() throws Exception {
        MigrationOrchestrator o = migratedToB();
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());

        // b's bookies die: the operator switches to c; the schema ledger's original is still on a
        clusters.unreachable("b", true);
        switched(2, "c", "b", 2L << 32);
        o.switchAccepted(2);
        MigrationState done = awaitPhase(o, 2, Phase.DONE);
        assertEquals("c", home(SCHEMA_LEDGER).orElseThrow(), String.valueOf(done));
        assertEquals(clusters.get("a", SCHEMA_LEDGER).payload(), clusters.get("c", SCHEMA_LEDGER).payload());
    }

    /**
     * Found on a cluster of separate processes: after ZooKeeper's outage a bookie of the source exited and was
     * restarted by its supervisor while BUILD read from it, and the run ended DONE_WITH_FAILURES for a ledger
     * that a copy a few seconds later moved without a fault. A copy that failed because a cluster cannot be reached
     * for now is tried again, further apart each time.
     */
    @Test
    void aCopyThatFailsWhileTheSourceRestartsIsTriedAgainAndTheRunEndsDone() throws Exception {
        MigrationState done = migratedToBWhileAFails(2, Phase.DONE);
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow(), String.valueOf(done));
        assertEquals(3, clusters.copyAttempts(SCHEMA_LEDGER), "two failed tries, then the copy");
        assertEquals(0, done.failed(), String.valueOf(done));
    }

    /** ... for a while only: a source that stays away fails the ledger after the last try; it stays home. */
    @Test
    void aSourceThatStaysAwayFailsTheLedgerAfterItsLastTry() throws Exception {
        MigrationState done = migratedToBWhileAFails(100, Phase.DONE_WITH_FAILURES);
        assertEquals(1 + BuildPhase.RETRY_WAITS.length, clusters.copyAttempts(SCHEMA_LEDGER), String.valueOf(done));
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow(), String.valueOf(done));
        assertFalse(clusters.has("b", SCHEMA_LEDGER));
    }

    /** Switch 1 (a -> b) and its migration, whose first {@code copies} copies from a fail as worth trying again. */
    private MigrationState migratedToBWhileAFails(int copies, Phase expected) throws Exception {
        switchedToB();
        clusters.restartingFor("a", copies);
        MigrationOrchestrator o = orchestrator("broker-1");
        o.switchAccepted(1);
        return awaitPhase(o, 1, expected);
    }

    /** A failure that a later try cannot mend (here: the fake's dead source, not marked retriable) is tried once. */
    @Test
    void aFailureNotWorthTryingAgainIsTriedOnce() throws Exception {
        switchedToB();
        clusters.unreachable("a", true);
        MigrationOrchestrator o = orchestrator("broker-1");
        o.switchAccepted(1);
        MigrationState done = awaitPhase(o, 1, Phase.DONE_WITH_FAILURES);
        assertEquals(1, clusters.copyAttempts(SCHEMA_LEDGER), String.valueOf(done));
    }

    /** Metadata of every cluster answers; advancing a's id generator fails while {@code aBroken}. */
    private final AtomicBoolean aBroken = new AtomicBoolean();
    private final AtomicInteger aAdvances = new AtomicInteger();

    /**
     * A rollback whose switch back failed is tried again by the passes, not before its pause is over (each try
     * advances a's id generator, which may be the thing that fails), and is counted once when it is finished.
     */
    @Test
    void aFailedRollbackIsFinishedByThePassesOnceItsPauseIsOver() throws Exception {
        switchedToB();
        HandClock clock = new HandClock(System.currentTimeMillis());
        List<String> rolledBack = new java.util.concurrent.CopyOnWriteArrayList<>();
        MigrationMetrics metrics = new MigrationMetrics() {
            @Override
            public void rolledBack(String cluster) {
                rolledBack.add(cluster);
            }
        };
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            SwitchService switches = new SwitchService(registry, metadata, 2, clock,
                    () -> CompletableFuture.completedFuture(references));
            MigrationOrchestrator o = new MigrationOrchestrator(registry,
                    () -> CompletableFuture.completedFuture(references), copier, CONFIG, () -> "broker-1", scheduler,
                    PACE, clock, metrics, switches::switchTo, FAST);
            orchestrators.add(o);
            o.switchAccepted(1);
            awaitPhase(o, 1, Phase.DONE);
            MigrationService service = migrationService(o, switches, clock);
            aBroken.set(true);
            assertThrows(Exception.class, () -> service.rollback().get(TestWaits.SECONDS, TimeUnit.SECONDS));
            aBroken.set(false);
            int advances = aAdvances.get();

            clock.advance(Rollback.ROLLBACK_RESUME_MILLIS - 1);
            o.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(Phase.ROLLING_BACK, o.readState(1).get().value().phase(), "the pause is not over");
            assertEquals(advances, aAdvances.get(), "not tried again yet");
            assertEquals(List.of(), rolledBack);

            clock.advance(1);
            o.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            MigrationState done = o.readState(1).get().value();
            assertEquals(Phase.ROLLED_BACK, done.phase(), String.valueOf(done));
            assertEquals(null, done.rollbackError());
            assertEquals("a", registry.readDirective().get().value().target());
            assertEquals(List.of("b"), rolledBack);
            o.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(List.of("b"), rolledBack, "counted once");
        }
    }

    private MigrationService service(MigrationOrchestrator o, ClusterMetadataAccess metadata) {
        return migrationService(o, switchService(metadata), Clock.systemUTC());
    }

    /** The broker's switch service over the test's registry and references. */
    private SwitchService switchService(ClusterMetadataAccess metadata) {
        return new SwitchService(registry, metadata, 2, Clock.systemUTC(),
                () -> CompletableFuture.completedFuture(references));
    }

    /** The migration service a broker builds around {@code o}, reading time from {@code clock}. */
    private MigrationService migrationService(MigrationOrchestrator o, SwitchService switches, Clock clock) {
        return new MigrationService(registry, switches, o, cleanupService(o), drain(), CONFIG, clock, null);
    }

    private static void assertRefused(CompletableFuture<?> f, String text) {
        var e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> f.get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(String.valueOf(e.getCause().getMessage()).contains(text), e.getCause().getMessage());
    }

    @Test
    void operatorActionsBeforeAnySwitchAreRefusedSayingWhyAndChangeNothing() throws Exception {
        MigrationOrchestrator o = orchestrator("broker-1");
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            MigrationService service = service(o, metadata);
            java.util.Map<String, String> before = StoreSnapshot.of(store);
            assertRefused(service.rollback(), "no switch has been made; there is nothing to roll back");
            assertRefused(service.retryMigration(), "no switch has been made; there is no migration to run again");
            assertRefused(service.verify(false), "verify is not available here");
            assertEquals(Optional.empty(), service.latest().get());
            assertEquals(before, StoreSnapshot.of(store));
        }
    }

    @Test
    void operatorActionsAfterAMigrationGoToTheLatestSwitchAndTheNamedCluster() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        clusters.put("a", 20, "left-over", "managed-ledger");
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            MigrationService service = service(o, metadata);
            assertEquals(1, service.latest().get().orElseThrow().switchEpoch());
            List<CleanupTarget> onA = service.cleanupTargets("a").get();
            assertTrue(onA.contains(new CleanupTarget(20, "a", "UNREFERENCED")), String.valueOf(onA));
            assertEquals(onA, service.cleanupTargets(null).get(), "every cluster but the active one: a");
            assertEquals("a", service.drainReport("a").get().cluster());
            assertRefused(service.closeClient("b"), "'b' is the active cluster; its clients stay open");
            CleanupResult dry = service.cleanup("a", true, 0, true).get();
            assertTrue(dry.dryRun() && dry.targets().equals(onA), String.valueOf(dry));
            assertTrue(clusters.has("a", 20));
            MigrationState again = service.retryMigration().get();
            assertEquals(1, again.switchEpoch());
            awaitPhase(o, 1, Phase.DONE);
        }
    }

    private ClusterMetadataAccess fakeMetadata() {
        return new ClusterMetadataAccess(1000, PulsarMetadataPort::probe) {
            @Override
            public CompletableFuture<ClusterMetadata> forLocation(ClusterLocation location) {
                boolean isA = location.uri().contains("//zk-a");
                return CompletableFuture.completedFuture(new ClusterMetadata() {
                    @Override
                    public CompletableFuture<ClusterFacts> facts() {
                        return CompletableFuture.completedFuture(new ClusterFacts(
                                "org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory", true, 0, -1, 3, 0));
                    }

                    @Override
                    public CompletableFuture<Void> advanceHighOrderBits(long hob) {
                        if (isA) {
                            aAdvances.incrementAndGet();
                            if (aBroken.get()) {
                                return CompletableFuture.failedFuture(new IllegalStateException(
                                        "metadata service of a stopped answering"));
                            }
                        }
                        return CompletableFuture.completedFuture(null);
                    }
                });
            }
        };
    }

    @Test
    void aRollbackWhoseSwitchFailsIsNeverReportedDoneAndCanBeFinished() throws Exception {
        switchedToB();

        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            SwitchService switches = switchService(metadata);
            MigrationOrchestrator o = new MigrationOrchestrator(registry,
                    () -> CompletableFuture.completedFuture(references), copier,
                    CONFIG, () -> "broker-1", scheduler, PACE, Clock.systemUTC(),
                    MigrationMetrics.NONE, switches::switchTo, FAST);
            orchestrators.add(o);
            o.switchAccepted(1);
            awaitPhase(o, 1, Phase.DONE);
            MigrationService service = migrationService(o, switches, Clock.systemUTC());

            aBroken.set(true);
            java.util.concurrent.ExecutionException refused = assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> service.rollback().get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertTrue(String.valueOf(refused.getCause().getMessage()).contains("stopped"),
                    "the answer says why: " + refused.getCause());
            assertEquals("b", registry.readDirective().get().value().target(), "the switch back did not happen");
            MigrationState afterFailure = o.readState(1).get().value();
            assertNotEquals(Phase.ROLLED_BACK, afterFailure.phase(),
                    "not reported rolled back while b is still active: " + afterFailure);
            assertEquals(Phase.ROLLING_BACK, afterFailure.phase(), "the rollback is recorded: " + afterFailure);
            assertTrue(afterFailure.rollbackError() != null && afterFailure.rollbackError().contains("stopped"),
                    "status says why it is not finished: " + afterFailure);
            assertEquals("a", home(SCHEMA_LEDGER).orElseThrow(), "reads went back to the original before the switch");
            assertEquals(null, registry.readRelocationEpochRecord().get().changed(),
                    "the flip is announced to every broker as a re-read of the whole table");
            // even with nothing referenced left on a (its topics deleted meanwhile), cleanup or close-client never
            // deprecates the cluster the rollback goes back to: the switch back would be refused for good
            List<LedgerReference> saved = references;
            references = List.of();
            assertFalse(cleanupService(o).deprecateIfDrained("a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertEquals(ClusterStatus.STANDBY, registry.getCluster("a").get().orElseThrow().status());
            references = saved;
            java.util.concurrent.ExecutionException notAgain = assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> o.retry(1).get(TestWaits.SECONDS, TimeUnit.SECONDS),
                    "a migration being rolled back is not run again");
            assertTrue(notAgain.getCause() instanceof io.bcswitch.registry.RegistryException r
                    && r.kind() == io.bcswitch.registry.RegistryException.Kind.CONFLICT
                    && r.getMessage().contains("only a finished migration"), String.valueOf(notAgain.getCause()));

            aBroken.set(false);
            // asking again finishes it, even once the rollback window has passed: a rollback under way is never
            // left half done by the window
            MigrationService aDayLater = migrationService(o, switches, Clock.offset(Clock.systemUTC(),
                    java.time.Duration.ofHours(CONFIG.rollbackWindowHours()).plusMinutes(1)));
            aDayLater.rollback().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals("a", registry.readDirective().get().value().target());
            assertEquals(2, registry.readDirective().get().value().epoch());
            assertEquals(Phase.ROLLED_BACK, o.readState(1).get().value().phase());
            assertEquals(null, o.readState(1).get().value().rollbackError());
        }
    }

    private DrainReports drain() {
        return new DrainReports(registry, () -> CompletableFuture.completedFuture(references), copier,
                ml -> CompletableFuture.completedFuture(new RetentionLookup.Retention(0, "test")));
    }

    private CleanupService cleanupService(MigrationOrchestrator o) {
        return new CleanupService(registry, () -> CompletableFuture.completedFuture(references), copier, o, drain(),
                CONFIG, MigrationMetrics.NONE, Clock.systemUTC());
    }

    /** Switch 1 (a -> b) applied by broker-1 and its migration finished (no cluster records written). */
    private MigrationOrchestrator migratedToB() throws Exception {
        switched(1, "b", "a", B_FIRST);
        applied("broker-1", Long.MAX_VALUE);
        MigrationOrchestrator o = orchestrator("broker-1");
        o.switchAccepted(1);
        awaitPhase(o, 1, Phase.DONE);
        return o;
    }

    /** Switch 1 (a -> b) made and applied by broker-1; the migration not started. */
    private void switchedToB() throws Exception {
        registry.write(registry.paths().cluster("a"), new BookieClusterRecord(1, "a",
                "zk+hierarchical://zk-a:2181/ledgers", ClusterStatus.STANDBY, 1), -1).get();
        registry.write(registry.paths().cluster("b"), new BookieClusterRecord(1, "b",
                "zk+hierarchical://zk-b:2181/ledgers", ClusterStatus.ACTIVE, 1), -1).get();
        switched(1, "b", "a", B_FIRST);
        applied("broker-1", Long.MAX_VALUE);
    }

    /** After switch 1 (a -> b): migration finished, every broker caught up. */
    private MigrationOrchestrator afterFinishedMigration() throws Exception {
        return afterFinishedMigration(true);
    }

    private MigrationOrchestrator afterFinishedMigration(boolean acceptsSwitchBacks) throws Exception {
        switchedToB();
        MigrationOrchestrator o = orchestrator("broker-1", acceptsSwitchBacks);
        o.switchAccepted(1);
        awaitPhase(o, 1, Phase.DONE);
        return o;
    }

    @Test
    void aLedgerPulsarDeletesWhileItIsCopiedIsNotPromoted() throws Exception {
        // found by the sequence explorer (seed -8719613393222291990): the copy of a ledger Pulsar deleted between
        // BUILD and PROMOTE became its home, a rollback then kept it there (its original gone) and cleanup would
        // delete it where it is home
        switchedToB();
        LedgerCopier deletedByPulsar = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String dst,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                return super.copy(id, from, dst, pace).thenCompose(out -> {
                    // the schema is deleted right after its ledger was copied: Pulsar deletes it where it is home
                    references = List.of();
                    return clusters.delete(id, from).thenApply(v -> out);
                });
            }
        };
        MigrationOrchestrator o = running(registry, currentReferences(), deletedByPulsar);
        o.switchAccepted(1);
        MigrationState s = awaitPhase(o, 1, Phase.DONE);
        assertEquals(0, s.promoted(), String.valueOf(s));
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow(), "a deleted ledger's copy never becomes its home");
        assertFalse(clusters.has("b", SCHEMA_LEDGER), "nor is it left on b, where nothing would ever delete it");
    }

    @Test
    void aLedgerPulsarDeletesRightBeforeItsCopyBecomesHomeLeavesNoCopy() throws Exception {
        // found by CI (SchemaRoutingTest on Pulsar 4.0): the schema was deleted after PROMOTE had checked that its
        // original still existed and before the relocation was written; the copy became the home of a ledger Pulsar
        // had deleted, on the active cluster, where nothing reads it and nothing ever deletes it
        promotedWhilePulsarDeletes(true, false);
    }

    @Test
    void aLedgerPulsarDeletesThroughItsOldHomeRightAfterItsCopyBecameHomeLeavesNoCopy() throws Exception {
        // the same, with the delete right after the relocation was written, by a broker still routing by the table
        // before it (it deletes the original)
        promotedWhilePulsarDeletes(false, false);
    }

    @Test
    void aPromotedCopyWhoseOriginalVanishedButIsStillReferencedStays() throws Exception {
        // not Pulsar's delete: the original is gone from a while the schema still names the ledger; the copy is all
        // that is left of it
        promotedWhilePulsarDeletes(true, true);
    }

    /**
     * Runs switch 1's migration with Pulsar deleting {@link #SCHEMA_LEDGER} on a (where every broker still routes it)
     * right before or right after the relocation that makes its copy on b home is written.
     */
    private void promotedWhilePulsarDeletes(boolean beforeTheWrite, boolean stillReferenced) throws Exception {
        switchedToB();
        String relocationNode = registry.paths().relocation(SCHEMA_LEDGER);
        AtomicInteger deletes = new AtomicInteger();
        MetadataPort port = new ForwardingPort(new PulsarMetadataPort(store)) {
            @Override
            public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean eph) {
                if (!path.equals(relocationNode) || deletes.getAndIncrement() > 0) {
                    return super.put(path, value, expected, eph);
                }
                Runnable pulsarDeletes = () -> {
                    if (!stillReferenced) {
                        references = List.of();
                    }
                    clusters.delete(SCHEMA_LEDGER, "a").join();
                };
                if (beforeTheWrite) {
                    pulsarDeletes.run();
                    return super.put(path, value, expected, eph);
                }
                return super.put(path, value, expected, eph).whenComplete((v, e) -> pulsarDeletes.run());
            }
        };
        RegistryStore racing = new RegistryStore(port, registry.paths());
        MigrationOrchestrator o = running(racing, currentReferences(), copier);
        o.switchAccepted(1);
        awaitPhase(o, 1, Phase.DONE);
        assertEquals(1, deletes.get(), "the relocation was written once, with Pulsar's delete beside it");
        assertFalse(clusters.has("a", SCHEMA_LEDGER));
        if (stillReferenced) {
            assertTrue(clusters.has("b", SCHEMA_LEDGER), "the only copy of a referenced ledger is never deleted");
            assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());
        } else {
            assertFalse(clusters.has("b", SCHEMA_LEDGER), "the copy of a ledger Pulsar deleted is not left on b");
        }
    }

    @Test
    void aPlannedLedgerThatIsNotHomeOnTheTargetAfterPromoteIsNamedAndTheMigrationIsNotDone() throws Exception {
        // the store acknowledges the relocation write of the schema but keeps nothing (a write lost for any reason):
        // the run's last look finds the ledger still home on a, and says so rather than ending DONE
        switchedToB();
        String relocationNode = registry.paths().relocation(SCHEMA_LEDGER);
        MetadataPort port = new ForwardingPort(new PulsarMetadataPort(store)) {
            @Override
            public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean eph) {
                return path.equals(relocationNode) ? CompletableFuture.completedFuture(0L)
                        : super.put(path, value, expected, eph);
            }
        };
        // a second planned ledger that is promoted as usual
        long promoted = 6;
        clusters.put("a", promoted, "schema-v2", "schema");
        references = List.of(new LedgerReference(SCHEMA_LEDGER, LedgerKind.SCHEMA, "t/ns/x"),
                new LedgerReference(promoted, LedgerKind.SCHEMA, "t/ns/y"));
        MigrationOrchestrator o = running(new RegistryStore(port, registry.paths()), currentReferences(), copier);
        o.switchAccepted(1);
        MigrationState end = awaitPhase(o, 1, Phase.DONE_WITH_FAILURES);
        assertEquals("a", home(SCHEMA_LEDGER).orElse("a"));
        assertEquals("b", home(promoted).orElseThrow());
        assertEquals(1, end.notPromoted(), end.toString());
        LedgerIssue issue = end.issues().stream().filter(i -> i.ledgerId() == SCHEMA_LEDGER).findFirst()
                .orElseThrow(() -> new AssertionError("no issue for the ledger left behind: " + end.issues()));
        assertEquals("NOT_PROMOTED", issue.result());
        assertTrue(issue.detail().startsWith("home is still a (t/ns/x)"), issue.detail());
        assertTrue(end.issues().stream().noneMatch(i -> i.ledgerId() == promoted), end.issues().toString());
        assertTrue(clusters.has("a", SCHEMA_LEDGER), "the ledger left behind is still readable where it is home");
    }

    @Test
    void aDeleteThatWentToTheOldHomeTakesTheCopyThatBecameHomeWithIt() throws Exception {
        // a broker routed Pulsar's delete of the schema to a before it applied the promotion that made the copy on b
        // home; the delete reached a after PROMOTE's own look: the broker follows its delete up
        MigrationOrchestrator o = afterFinishedMigration();
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());
        long notACopy = 6;
        clusters.put("a", notACopy, "x", "schema");
        assertFalse(o.pulsarDeleted(notACopy, "a")
                .get(TestWaits.SECONDS, TimeUnit.SECONDS), "a ledger never relocated");
        assertFalse(o.pulsarDeleted(SCHEMA_LEDGER, "b")
                .get(TestWaits.SECONDS, TimeUnit.SECONDS), "deleted where it is home");
        assertTrue(clusters.has("b", SCHEMA_LEDGER) && clusters.has("a", SCHEMA_LEDGER));

        clusters.delete(SCHEMA_LEDGER, "a").get();
        assertTrue(o.pulsarDeleted(SCHEMA_LEDGER, "a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertFalse(clusters.has("b", SCHEMA_LEDGER), "the copy that became home of the deleted ledger is deleted");
    }

    @Test
    void aDeleteThatWentToACopyARollbackUnpromotedNeverTakesTheOriginal() throws Exception {
        // after a rollback the original on a is home again; a broker still routing to the copy on b deletes that
        MigrationOrchestrator o = afterFinishedMigration();
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
        clusters.delete(SCHEMA_LEDGER, "b").get();
        assertFalse(o.pulsarDeleted(SCHEMA_LEDGER, "b").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(clusters.has("a", SCHEMA_LEDGER), "an original is never deleted as a copy");
        // nor is a ledger without the copy mark at a home the relocation table names
        long unmarked = 6;
        clusters.put("b", unmarked, "x", "schema");
        registry.updateRelocations(List.of(unmarked), (id, cur) -> Optional.of(new Relocation(
                Relocation.FORMAT_VERSION, unmarked, "b", "a", "SCHEMA", 1, 0))).get();
        assertFalse(o.pulsarDeleted(unmarked, "a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(clusters.has("b", unmarked), "only a copy the migration made is deleted");
    }

    @Test
    void theCopyAnInterruptedRunMadeOfALedgerPulsarDeletedSinceIsDeletedAndNothingElseIs() throws Exception {
        // the schema was copied to b by a run that stopped (its broker restarted) before recording or promoting it;
        // Pulsar then deleted the schema where it is home, on a, and the next run no longer plans it
        switchedToB();
        FakeClusters.Ledger original = clusters.get("a", SCHEMA_LEDGER);
        clusters.put("b", SCHEMA_LEDGER, new FakeClusters.Ledger(true, original.payload(),
                clusters.copyMetadata(original.custom(), "a")));
        clusters.delete(SCHEMA_LEDGER, "a");
        // kept: a copy whose original is still on a, and a ledger under an id of a's range that is not a copy
        long stillOnA = 6;
        clusters.put("a", stillOnA, "other", "schema");
        clusters.put("b", stillOnA, new FakeClusters.Ledger(true, "other",
                clusters.copyMetadata(clusters.get("a", stillOnA).custom(), "a")));
        long notACopy = 7;
        clusters.put("b", notACopy, "foreign", "schema");
        // kept: a copy whose original's cluster does not answer (the copy may be all that is left)
        long unanswered = 8;
        clusters.put("b", unanswered, new FakeClusters.Ledger(true, "x",
                clusters.copyMetadata(original.custom(), "c")));
        clusters.unreachable("c", true);
        references = List.of();

        MigrationOrchestrator o = orchestrator("broker-1");
        o.switchAccepted(1);
        awaitPhase(o, 1, Phase.DONE);
        assertFalse(clusters.has("b", SCHEMA_LEDGER), "the copy of the deleted ledger is deleted");
        assertTrue(clusters.has("b", stillOnA), "a copy whose original exists is kept");
        assertTrue(clusters.has("b", notACopy), "a ledger the migration did not make is kept");
        assertTrue(clusters.has("b", unanswered), "a copy whose source does not answer is kept");
        assertTrue(clusters.has("a", stillOnA));
    }

    @Test
    void aCompactedTopicItsOwnerCannotLoadHoldsUpNeitherTheMigrationNorAnythingElse() throws Exception {
        // found by the sequence explorer (seed 6399508013644044403): the bookies of the cluster a switch leaves
        // were down, so a compacted topic could not load and its owner could not say which compacted ledger it uses;
        // the whole inventory failed with it and BUILD retried for ever
        switchedToB();
        clusters.put("a", 7, "compacted-v1", "compacted-ledger");
        references = List.of(new LedgerReference(SCHEMA_LEDGER, LedgerKind.SCHEMA, "t/ns/x"),
                new LedgerReference(7, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction#CompactedTopicLedger"));
        AtomicBoolean loads = new AtomicBoolean(false);
        io.bcswitch.inventory.LedgerInventory inventory = compactedTopicCUnknownUnless(loads::get);
        MigrationOrchestrator o = running(registry, inventory, copier);
        o.switchAccepted(1);
        MigrationState s = awaitPhase(o, 1, Phase.DONE_WITH_FAILURES);
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow(), "what is known moves: " + s);
        assertEquals("b", home(7).orElseThrow(), "the compacted ledger the stored cursor names moves: " + s);
        assertTrue(s.issues().stream().anyMatch(i -> i.ledgerId() == 7 && i.result().equals("INVENTORY_INCOMPLETE")
                && i.detail().contains("t/ns/persistent/c")), "the topic it could not ask about is an issue: " + s);

        // nothing is deleted or declared drained on the partial picture
        CleanupService cleanup = new CleanupService(registry, inventory, copier, o, new DrainReports(registry,
                inventory, copier, ml -> CompletableFuture.completedFuture(new RetentionLookup.Retention(0, "t"))),
                CONFIG, MigrationMetrics.NONE, Clock.systemUTC());
        var refused = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> cleanup.cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(String.valueOf(refused.getCause()).contains("not all known"), String.valueOf(refused.getCause()));
        assertTrue(clusters.has("a", SCHEMA_LEDGER) && clusters.has("a", 7), "cleanup deleted nothing");

        // the topic loads again: running the migration again finishes it
        loads.set(true);
        o.retry(1).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        MigrationState again = awaitPhase(o, 1, Phase.DONE);
        assertTrue(again.issues().isEmpty(), String.valueOf(again));
    }

    /** References as the test has them; compacted topic t/ns/persistent/c (ledger 7) unknown unless it loads. */
    private io.bcswitch.inventory.LedgerInventory compactedTopicCUnknownUnless(
            java.util.function.BooleanSupplier loads) {
        return new io.bcswitch.inventory.LedgerInventory() {
            @Override
            public CompletableFuture<Picture> picture() {
                return CompletableFuture.completedFuture(new Picture(references, loads.getAsBoolean() ? List.of()
                        : List.of(new Unknown("t/ns/persistent/c", 7, "cannot load the topic"))));
            }

            @Override
            public CompletableFuture<List<LedgerReference>> references() {
                return picture().thenApply(p -> {
                    if (!p.complete()) {
                        throw io.bcswitch.registry.RegistryException.unavailable("not all known: " + p.unknown());
                    }
                    return p.references();
                });
            }
        };
    }

    @Test
    void aCompactedTopicThatCanBeAskedByTheEndOfTheRunLeavesNoIssue() throws Exception {
        switchedToB();
        clusters.put("a", 7, "compacted-v1", "compacted-ledger");
        references = List.of(new LedgerReference(SCHEMA_LEDGER, LedgerKind.SCHEMA, "t/ns/x"),
                new LedgerReference(7, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction#CompactedTopicLedger"));
        AtomicInteger readings = new AtomicInteger();
        // unknown when the run plans, known when it checks the homes at its end: ledger 7 moved, nothing is missing
        MigrationOrchestrator o = running(registry, compactedTopicCUnknownUnless(() -> readings.incrementAndGet() > 1),
                copier);
        o.switchAccepted(1);
        MigrationState s = awaitPhase(o, 1, Phase.DONE);
        assertTrue(s.issues().isEmpty(), String.valueOf(s));
        assertEquals("b", home(7).orElseThrow());
    }

    @Test
    void aCompactedLedgerOfATopicThatCouldNotBeAskedIsWhereItsRelocationSaysNotWhereItsIdWasIssued() throws Exception {
        switchedToB();
        // ledger y was issued by b and moved to a by an earlier migration: its id says b, its relocation says a
        long y = B_FIRST + 5;
        clusters.put("a", y, "compacted-v1", "compacted-ledger");
        registry.updateRelocations(List.of(y), (id, cur) -> Optional.of(new Relocation(Relocation.FORMAT_VERSION, y,
                "a", "b", LedgerKind.COMPACTION.name(), 0, 1L, null, null))).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        LedgerReference schema = new LedgerReference(SCHEMA_LEDGER, LedgerKind.SCHEMA, "t/ns/x");
        LedgerReference compacted = new LedgerReference(y, LedgerKind.COMPACTION,
                "t/ns/persistent/c/__compaction#CompactedTopicLedger");
        AtomicInteger readings = new AtomicInteger();
        // topic c cannot be asked when the run plans (so y is not planned); by the end it can, and names y
        LedgerInventory inventory = new LedgerInventory() {
            @Override
            public CompletableFuture<Picture> picture() {
                return CompletableFuture.completedFuture(readings.incrementAndGet() > 1
                        ? new Picture(List.of(schema, compacted), List.of())
                        : new Picture(List.of(schema), List.of(new LedgerInventory.Unknown("t/ns/persistent/c", 7,
                                "cannot load the topic"))));
            }

            @Override
            public CompletableFuture<List<LedgerReference>> references() {
                return picture().thenApply(LedgerInventory.Picture::references);
            }
        };
        MigrationOrchestrator o = running(registry, inventory, copier);
        o.switchAccepted(1);
        MigrationState s = awaitPhase(o, 1, Phase.DONE_WITH_FAILURES);
        assertTrue(s.issues().stream().anyMatch(i -> i.ledgerId() == 7), "topic c's compacted ledger is on a, not on "
                + "the target: " + s);
        assertEquals("a", home(y).orElseThrow());
    }

    @Test
    void oneRollbacksCopiesThatCannotBeDeletedHoldUpNoOtherRollbacksDeletions() throws Exception {
        // found by review: a rolled-back migration whose copies could not be deleted (every call to its cluster
        // failed) stopped the deletions of every other rolled-back migration, and the dropping of old copy lists
        AtomicBoolean bFails = new AtomicBoolean();
        LedgerCopier bFailing = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                if (bFails.get() && cluster.equals("b")) {
                    throw new IllegalStateException("the client of b is closed"); // thrown, not a failed future
                }
                return super.facts(id, cluster);
            }
        };
        switchedToB();
        registry.write(registry.paths().cluster("c"), new BookieClusterRecord(1, "c",
                "zk+hierarchical://zk-c:2181/ledgers", ClusterStatus.STANDBY, 1), -1).get();
        MigrationOrchestrator o = running(registry, currentReferences(), bFailing);
        o.switchAccepted(1);
        awaitPhase(o, 1, Phase.DONE);
        bFails.set(true);
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS); // its copy on b cannot be deleted from now on
        switched(3, "c", "a", 13L << 32); // between the switch back's range (12 << 32) and the next (14 << 32)
        o.switchAccepted(3); // committed on this broker
        awaitPhase(o, 3, Phase.DONE);
        assertTrue(clusters.has("c", SCHEMA_LEDGER), "migrated to c");
        o.rollBack(3, "c", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);

        // the orchestrator's own passes (started above) do it
        bugs.waitUntil(TestWaits.PASS_SECONDS,
                () -> !clusters.has("c", SCHEMA_LEDGER), "the rolled-back copy on c is deleted");
        assertTrue(clusters.has("b", SCHEMA_LEDGER), "the copy on b waits for b");
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
    }

    @Test
    void cleanupNeverDeletesALedgerThatOnlyFallsInAnotherClustersRange() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        // some other user of cluster a created this ledger; its id happens to be in b's range
        clusters.put("a", B_FIRST + 7, "not ours", "managed-ledger");
        CleanupResult r = cleanupService(o).cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(clusters.has("a", B_FIRST + 7), "a ledger this plugin did not copy is never a stray copy: " + r);
    }

    @Test
    void cleanupNeverDeletesACompactedLedgerNothingInTheStoredMetadataNames() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        // a compaction that finished during the cutover: its ledger is named only by the cursor's own ledger
        clusters.put("a", 8, "compacted-v2", "compacted-ledger");
        clusters.put("a", 9, "left behind", "managed-ledger");
        CleanupResult r = cleanupService(o).cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(clusters.has("a", 8), "a compacted ledger is never deleted as unreferenced: " + r);
        assertTrue(!clusters.has("a", 9), "an unreferenced managed ledger of a's range is: " + r);
    }

    @Test
    void cleanupRechecksReferencesRightBeforeDeleting() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        clusters.put("a", 9, "data", "managed-ledger");
        AtomicInteger reads = new AtomicInteger();
        LedgerReference ref9 = new LedgerReference(9, LedgerKind.DATA, "t/ns/persistent/y");
        CleanupService cleanup = new CleanupService(registry, () -> {
            // a managed ledger names ledger 9 from the second read on (it was being added while we planned)
            List<LedgerReference> refs = new ArrayList<>(references);
            if (reads.incrementAndGet() > 1) {
                refs.add(ref9);
            }
            return CompletableFuture.completedFuture(refs);
        }, copier, o, drain(), CONFIG, MigrationMetrics.NONE, Clock.systemUTC());
        CleanupResult r = cleanup.cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(clusters.has("a", 9), "ledger 9 is referenced when it would be deleted: " + r);
    }

    @Test
    void cleanupAndARollbackNeverOverlap() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        AtomicInteger homeChecks = new AtomicInteger();
        LedgerCopier racing = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                if (cluster.equals("b") && homeChecks.incrementAndGet() == 2) {
                    // the operator's rollback is recorded right after the batch's last check, before it is deleted
                    o.rollBack(1, "b", "a").join();
                }
                return super.facts(id, cluster);
            }
        };
        CleanupService cleanup = new CleanupService(registry, () -> CompletableFuture.completedFuture(references),
                racing, o, drain(), CONFIG, MigrationMetrics.NONE, Clock.systemUTC());
        CleanupResult r = cleanup.cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(clusters.has("a", SCHEMA_LEDGER), "the original the rollback routes back to is kept: " + r);
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
        assertTrue(!r.errors().isEmpty(), "cleanup says why it stopped: " + r);

        // the other order: once cleanup has deleted originals, a rollback is refused
        switched(3, "b", "a", 30L << 32);
        o.switchAccepted(3); // committed on this broker
        awaitPhase(o, 3, Phase.DONE);
        CleanupResult done = cleanupService(o).cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(1, done.deleted(), String.valueOf(done));
        var refused = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> o.rollBack(3, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(refused.getCause().getMessage().contains("original"), refused.getCause().getMessage());
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());
    }

    /** What a refused cleanup of {@code a} says, with {@code a} and the metadata store afterwards unchanged. */
    private String refusedCleanup(MigrationOrchestrator o, boolean force) throws Exception {
        return refusedCleanup(o, "a", force);
    }

    private String refusedCleanup(MigrationOrchestrator o, String src, boolean force) throws Exception {
        java.util.Set<Long> before = new java.util.TreeSet<>(clusters.list(src).get());
        var metadata = io.bcswitch.registry.StoreSnapshot.of(store);
        var e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> cleanupService(o).cleanup(src, false, 0, force).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals(before, new java.util.TreeSet<>(clusters.list(src).get()), "a refused cleanup deletes nothing");
        assertEquals(metadata, io.bcswitch.registry.StoreSnapshot.of(store), "nor writes anything");
        assertEquals(io.bcswitch.registry.RegistryException.Kind.CONFLICT,
                ((io.bcswitch.registry.RegistryException) e.getCause()).kind());
        return e.getCause().getMessage();
    }

    @Test
    void cleanupIsRefusedInsideTheRollbackWindowUnlessForced() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        assertEquals("the latest switch (epoch 1) is inside its rollback window of 24 h; cleanup would make "
                + "rollback impossible. Wait, or pass force", refusedCleanup(o, false));
        assertEquals("bookie cluster 'b' is the active cluster; nothing on it is cleaned up",
                refusedCleanup(o, "b", true));
        assertEquals(1, cleanupService(o).cleanup("a", false, 0, true)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS).deleted());
    }

    @Test
    void cleanupIsRefusedWhileABrokerHasNotFinishedTheCutover() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        // a live broker still rolling its topics over to b
        registry.writeEphemeral(registry.paths().broker("broker-3"),
                new BrokerCutoverRecord(1, "broker-3", 1, "b", 5, 2, 0, 1, 0)).get();
        assertTrue(refusedCleanup(o, true).contains("cutover"));
    }

    @Test
    void cleanupIsRefusedWhileTheMigrationIsUnfinished() throws Exception {
        switchedToB();
        MigrationOrchestrator o = orchestrator("broker-1"); // has not run the switch's migration yet
        assertTrue(refusedCleanup(o, true).contains("migration"));
    }

    @Test
    void cleanupDeletesAtMostMaxDeletionsAndOnlyLedgersPulsarOrThisPluginMade() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        // unreferenced on a, in a's range: two Pulsar ledgers, one of unknown origin (another application's)
        clusters.put("a", 20, "left-over", "managed-ledger");
        clusters.put("a", 21, "left-over", "schema");
        clusters.put("a", 22, new FakeClusters.Ledger(true, "not pulsar's", java.util.Map.of()));
        CleanupResult planned = cleanupService(o).cleanup("a", true, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(java.util.Set.of(SCHEMA_LEDGER, 20L, 21L), planned.targets().stream().map(t -> t.ledgerId())
                .collect(java.util.stream.Collectors.toSet()), "the relocated original and the two Pulsar ledgers, "
                + "not ledger 22: " + planned);
        assertTrue(planned.dryRun());
        assertEquals(0, planned.deleted());
        assertTrue(clusters.has("a", 20) && clusters.has("a", 21) && clusters.has("a", SCHEMA_LEDGER),
                "a dry run deletes nothing");
        assertEquals(1, planned.kept(), "ledger 22 is kept: " + planned);
        CleanupResult one = cleanupService(o).cleanup("a", false, 1, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(1, one.deleted(), String.valueOf(one));
        assertEquals(1, one.targets().size(), String.valueOf(one));
        assertFalse(clusters.has("a", one.targets().get(0).ledgerId()), "the one deleted is the one reported");
        assertEquals(planned.kept(), one.kept(), "what was deletable but not chosen is not counted as kept");
        CleanupResult rest = cleanupService(o).cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(planned.targets().size() - 1, rest.deleted(), String.valueOf(rest));
        assertFalse(clusters.has("a", 20) || clusters.has("a", 21), "Pulsar's unreferenced ledgers are deleted");
        assertTrue(clusters.has("a", 22), "a ledger of unknown origin is never deleted");
        var negative = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> cleanupService(o).cleanup("a", false, -1, true).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(negative.getCause().getMessage().contains("maxDeletions"));
    }

    /** The window includes its last millisecond: a rollback asked for exactly then is carried out. */
    @Test
    void aRollbackAtTheLastMomentOfItsWindowIsCarriedOut() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            SwitchService switches = switchService(metadata);
            SwitchDirective d = registry.readDirective().get().value();
            Clock lastMoment = Clock.fixed(java.time.Instant.ofEpochMilli(d.ts()
                    + TimeUnit.HOURS.toMillis(CONFIG.rollbackWindowHours())), java.time.ZoneOffset.UTC);
            MigrationService edge = migrationService(o, switches, lastMoment);
            long promoted = registry.listRelocations().get().values().stream()
                    .filter(r -> r.switchEpoch() == 1).count();
            assertTrue(promoted > 0, "the migration moved something to flip back");
            RollbackResult r = edge.rollback().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
            assertEquals(1, r.rolledBackEpoch());
            assertEquals(promoted, r.promotionsFlipped(), String.valueOf(r));
            assertEquals("a", registry.readDirective().get().value().target());
            assertEquals(Phase.ROLLED_BACK, o.readState(1).get().value().phase());
        }
    }

    @Test
    void aRollbacksAnswerNamesTheLedgersItKeepsHomeOnTheRolledBackClusterAndCountsOnlyThoseItFlipped()
            throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        clusters.delete(SCHEMA_LEDGER, "a").get(); // its original is gone (a wiped bookie): nothing to go back to
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            RollbackResult r = migrationService(o, switchService(metadata), Clock.systemUTC()).rollback()
                    .get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
            assertEquals(0, r.promotionsFlipped(), String.valueOf(r));
            assertEquals(List.of(SCHEMA_LEDGER), r.notReversed().stream().map(LedgerIssue::ledgerId).toList());
            LedgerIssue kept = r.notReversed().get(0);
            assertEquals("b", kept.cluster());
            assertEquals(LedgerIssue.NOT_REVERSED, kept.result());
            assertEquals("SCHEMA", kept.kind());
            assertEquals("stays home on b: it was read from bookie-cluster a before the switch, and bookie-cluster a "
                    + "no longer holds it", kept.detail());
            // nothing is lost: the switch back's migration moves it on to a, as any ledger not home there
            tickUntil(o, () -> home(SCHEMA_LEDGER).orElseThrow().equals("a") && clusters.has("a", SCHEMA_LEDGER),
                    "the ledger kept on b is moved back to a by the switch back's migration");
        }
    }

    /**
     * Past its window, or once cleanup deleted originals on the cluster it would go back to, a rollback is refused
     * (409, saying why) and the metadata store is left exactly as it was.
     */
    @Test
    void aRollbackPastItsWindowOrAfterCleanupDeletedOriginalsIsRefusedAndChangesNothing() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            SwitchService switches = switchService(metadata);
            Clock aMinuteLate = Clock.offset(Clock.systemUTC(), java.time.Duration.ofHours(CONFIG
                    .rollbackWindowHours()).plusMinutes(1));
            MigrationService late = migrationService(o, switches, aMinuteLate);
            var before = io.bcswitch.registry.StoreSnapshot.of(store);
            var refused = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> late.rollback().get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertEquals(io.bcswitch.registry.RegistryException.Kind.CONFLICT,
                    ((io.bcswitch.registry.RegistryException) refused.getCause()).kind());
            assertTrue(refused.getCause().getMessage().startsWith("the rollback window of 24 h for switch epoch 1 "
                    + "(to 'b') has passed (24.0 h ago); switch to 'a' instead"), refused.getCause().getMessage());
            assertEquals(before, io.bcswitch.registry.StoreSnapshot.of(store));

            // a data ledger still written on a keeps it from being retired: only the guard stands in the way
            clusters.put("a", 30, "data", "managed-ledger");
            references = new ArrayList<>(references);
            references.add(new LedgerReference(30, LedgerKind.DATA, "t/ns/persistent/x"));
            CleanupResult deleted = cleanupService(o).cleanup("a", false, 0, true)
                    .get(TestWaits.SECONDS, TimeUnit.SECONDS);
            assertEquals(ClusterStatus.STANDBY, registry.getCluster("a").get().orElseThrow().status());
            assertTrue(deleted.deleted() > 0, String.valueOf(deleted));
            assertEquals(deleted.deleted(), o.readState(1).get().value().originalsDeleted());
            MigrationService inTime = migrationService(o, switches, Clock.systemUTC());
            before = io.bcswitch.registry.StoreSnapshot.of(store);
            refused = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> inTime.rollback().get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertEquals("cleanup already deleted " + deleted.deleted() + " original ledger(s) from old clusters "
                    + "after switch epoch 1; a rollback could not read them back", refused.getCause().getMessage());
            assertEquals(before, io.bcswitch.registry.StoreSnapshot.of(store));
            // the orchestrator, asked directly (as a broker finishing a recorded rollback would), refuses too
            refused = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertTrue(refused.getCause().getMessage().startsWith("cleanup deleted " + deleted.deleted()
                    + " original ledger(s) after switch epoch 1"), refused.getCause().getMessage());
            assertEquals(before, io.bcswitch.registry.StoreSnapshot.of(store));
            assertEquals(Phase.DONE, o.readState(1).get().value().phase());
        }
    }

    @Test
    void closeClientIsRefusedWhileTheClusterStillHoldsALedgerTheBrokersReadThere() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        // a data ledger of a topic still lives on a, where it was written
        clusters.put("a", 30, "data", "managed-ledger");
        List<LedgerReference> saved = references;
        references = new ArrayList<>(saved);
        references.add(new LedgerReference(30, LedgerKind.DATA, "t/ns/persistent/x"));
        try (ClusterMetadataAccess metadata = fakeMetadata()) {
            SwitchService switches = switchService(metadata);
            MigrationService service = migrationService(o, switches, Clock.systemUTC());
            var refused = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> service.closeClient("a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
            assertTrue(refused.getCause().getMessage().contains("still holds ledgers"),
                    refused.getCause().getMessage());
            assertEquals(ClusterStatus.STANDBY, registry.getCluster("a").get().orElseThrow().status());
            // the topic is deleted: nothing on a is read any more, its clients may close
            references = saved;
            assertEquals(ClusterStatus.DEPRECATED, service.closeClient("a")
                    .get(TestWaits.SECONDS, TimeUnit.SECONDS).status());
        }
    }

    @Test
    void cleanupLeavesACopyALaggingBrokerMayStillReadAfterARollback() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        applied("broker-2", registry.readRelocationEpoch().get()); // reads the schema ledger's copy on b
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        awaitPhase(o, 2, Phase.DONE);
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
        // broker-2 has not applied the relocation epoch that routes the ledger back to a yet
        CleanupResult r = cleanupService(o).cleanup("b", true, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(r.targets().isEmpty(), "a copy a broker may still read is not deleted: " + r);

        applied("broker-2", Long.MAX_VALUE);
        tickUntil(o, () -> !clusters.has("b", SCHEMA_LEDGER), "the copy goes once every broker routes without it");
        assertTrue(clusters.has("a", SCHEMA_LEDGER));
    }

    @Test
    void cleanupNeverDeletesAnOriginalWhoseHomeCopyIsMissing() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());
        clusters.delete(SCHEMA_LEDGER, "b").get(); // the copy on b was lost (bookies wiped, a stray delete)
        CleanupResult r = cleanupService(o).cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(clusters.has("a", SCHEMA_LEDGER), "the only remaining copy is kept: " + r);
    }

    /**
     * Runs {@code passes} orchestrator passes back to back (each waits for the one before, 50 ms apart): what a pass
     * would wrongly do, one of them does; a few times {@link #FAST}'s waits pass meanwhile.
     */
    private static void tickPasses(MigrationOrchestrator o, int passes) throws Exception {
        for (int i = 0; i < passes; i++) {
            o.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
            Thread.sleep(50);
        }
    }

    @Test
    void aLedgerABrokerHoldsOpenIsNeitherCleanedUpNorIsItsClusterRetired() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        // broker-1 still reads the original of the schema ledger on a through a handle opened before the promotion
        var d = registry.readDirective().get().value();
        registry.writeEphemeral(registry.paths().broker("broker-1"), new BrokerCutoverRecord(1, "broker-1",
                d.epoch(), "b", 0, 0, 0, 1, 2).withHandles(java.util.Map.of("a", 1),
                java.util.Map.of("a", List.of(SCHEMA_LEDGER)))).get();
        DrainReports drain = drain();
        CleanupService cleanup = cleanupService(o);
        MigrationService service = new MigrationService(registry, new SwitchService(registry, null, 2,
                Clock.systemUTC(), () -> CompletableFuture.completedFuture(references)), o, cleanup, drain, CONFIG,
                Clock.systemUTC(), null);

        CleanupResult r = cleanup.cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(clusters.has("a", SCHEMA_LEDGER), "a ledger a broker holds open there is not deleted: " + r);
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("open on broker(s) [broker-1]")), r.notes().toString());
        assertEquals(java.util.Map.of("broker-1", 1), drain.report("a")
                .get(TestWaits.SECONDS, TimeUnit.SECONDS).openHandles());
        var refused = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> service.closeClient("a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(refused.getCause().getMessage().contains("hold ledger handles open"),
                refused.getCause().getMessage());
        assertEquals(ClusterStatus.STANDBY, registry.getCluster("a").get().orElseThrow().status());

        // the handle is released: both go ahead
        registry.writeEphemeral(registry.paths().broker("broker-1"), new BrokerCutoverRecord(1, "broker-1",
                d.epoch(), "b", 0, 0, 0, 1, 2)).get();
        cleanup.cleanup("a", false, 0, true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(!clusters.has("a", SCHEMA_LEDGER), "the original goes once nothing reads it");
        assertEquals(ClusterStatus.DEPRECATED, service.closeClient("a")
                .get(TestWaits.SECONDS, TimeUnit.SECONDS).status());
    }

    @Test
    void aLedgerThatStaysHomeOnTheRolledBackClusterIsNeitherScheduledForDeletionNorWedgesTheRollback()
            throws Exception {
        clusters.put("a", 6, "cursor-v1", "managed-ledger");
        clusters.put("a", 7, "compacted-v1", "compacted-ledger");
        references = List.of(new LedgerReference(SCHEMA_LEDGER, LedgerKind.SCHEMA, "t/ns/x"),
                new LedgerReference(6, LedgerKind.CURSOR, "t/ns/persistent/x"),
                new LedgerReference(7, LedgerKind.COMPACTION, "t/ns/persistent/x"));
        // what the rollback alone does: the switch back's own migration (which would move the schema ledger from b
        // to a as it moves any metadata ledger) is held off for this test
        MigrationOrchestrator o = afterFinishedMigration(false);
        assertEquals("b", home(6).orElseThrow());
        assertEquals("b", home(7).orElseThrow());
        // the original of the schema ledger is gone from a (cleanup, or a wiped bookie): its copy on b is the only one
        clusters.delete(SCHEMA_LEDGER, "a").get();
        // a newer compaction replaced ledger 7: Pulsar deleted it (its home on b, then its original on a)
        references = List.of(references.get(0), references.get(1));
        clusters.delete(7, "b").get();
        clusters.delete(7, "a").get();

        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow(), "nothing to go back to: it stays home on b");
        assertEquals("a", home(6).orElseThrow());
        List<Long> scheduled = new ArrayList<>();
        registry.readCopies(1).get().values().forEach(scheduled::addAll);
        assertTrue(!scheduled.contains(SCHEMA_LEDGER), "never home and scheduled for deletion at once: " + scheduled);
        o.switchAccepted(2); // from here on, the switch back's own migration may run too

        // the rolled-back copy of ledger 6 goes; the relocation table settles (no epoch after epoch announced)
        tickUntil(o, () -> !clusters.has("b", 6), "the rolled-back copy of ledger 6 is deleted from b");
        long settled = registry.readRelocationEpoch().get();
        tickPasses(o, 8);
        assertEquals(settled, registry.readRelocationEpoch().get(), "passes keep announcing relocation epochs");
        assertTrue(clusters.has("b", SCHEMA_LEDGER), "the only copy of the schema ledger is kept");
        assertEquals(0, o.readState(1).get().value().pendingDeletionCount());
    }

    @Test
    void aRollbackThatCannotSeeTheOriginalsRoutesNothingBackUntilItCan() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        clusters.unreachable("a", true);
        java.util.concurrent.ExecutionException refused = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(String.valueOf(refused.getCause().getMessage()).contains("cannot tell whether ledger"),
                "the answer says why: " + refused.getCause());
        MigrationState waiting = o.readState(1).get().value();
        assertEquals(Phase.ROLLING_BACK, waiting.phase());
        assertTrue(waiting.rollbackError() != null && waiting.rollbackError().contains("cannot tell"),
                "status says why: " + waiting);
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow(), "not routed back to a copy nobody could check");
        assertEquals("b", registry.readDirective().get().value().target());

        clusters.unreachable("a", false);
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.ROLLED_BACK, o.readState(1).get().value().phase());
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
        tickUntil(o, () -> !clusters.has("b", SCHEMA_LEDGER), "the rolled-back copy is deleted");
        assertTrue(clusters.has("a", SCHEMA_LEDGER));
    }

    @Test
    void aRollbackAskedWhileAnotherBrokersPassHoldsTheLockWaitsForItThenIsCarriedOut() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        String lock = registry.paths().orchestratorLock();
        MetadataPort port = new PulsarMetadataPort(store);
        TestWaits.until("broker-2's pass holds the lock", () -> port.put(lock, "broker-2#1".getBytes(
                java.nio.charset.StandardCharsets.UTF_8), Optional.of(MetadataPort.ABSENT), true)
                .handle((v, e) -> e == null).get());

        CompletableFuture<MigrationOrchestrator.RollbackOutcome> asked = o.rollBack(1, "b", "a");
        TestWaits.until("the rollback is recorded", () -> o.readState(1).get().value().phase() == Phase.ROLLING_BACK);
        assertFalse(asked.isDone(), "it waits for the lock: " + asked);

        port.delete(lock, Optional.empty()).get(); // broker-2's pass ends
        asked.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.ROLLED_BACK, o.readState(1).get().value().phase());
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
    }

    /** Copies an earlier version listed in the state join the ones already in the chunks, each once. */
    @Test
    void aRollbackFoldsTheCopiesAnEarlierVersionListedInTheStateIntoTheChunksAlreadyWritten() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        List<Long> chunked = registry.readCopies(1).get().get(0);
        assertEquals(List.of(SCHEMA_LEDGER), chunked);
        long older = 77; // a copy on b an earlier version recorded only in the state, its original on a
        clusters.put("a", older, "older payload", "managed-ledger");
        clusters.put("b", older, new FakeClusters.Ledger(true, "older payload",
                clusters.copyMetadata(clusters.get("a", older).custom(), "a")));
        List<Long> built = List.of(SCHEMA_LEDGER, older);
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.map(c ->
                io.bcswitch.registry.Json.read(io.bcswitch.registry.Json.writeString(c).replace("\"built\":[]",
                        "\"built\":" + built).getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        MigrationState.class))).get();
        assertEquals(built, o.readState(1).get().value().built());

        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(java.util.Map.of(0, List.of(SCHEMA_LEDGER, older)), registry.readCopies(1).get(),
                "the chunk keeps what it listed and gains the older copy, each listed once");
        assertEquals(2, o.readState(1).get().value().pendingDeletionCount());
        tickUntil(o, () -> !clusters.has("b", SCHEMA_LEDGER) && !clusters.has("b", older),
                "both rolled-back copies are deleted");
        assertTrue(clusters.has("a", SCHEMA_LEDGER));
        assertTrue(clusters.has("a", older));
    }

    /** A migration an earlier version recorded keeps its copies in the state's own list; a rollback finds them. */
    @Test
    void aRollbackOfAMigrationAnEarlierVersionRecordedFoldsItsCopiesIntoTheListAndDeletesThem() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        List<Long> copies = new ArrayList<>(registry.readCopies(1).get().get(0));
        assertEquals(List.of(SCHEMA_LEDGER), copies);
        registry.dropCopies(1).get();
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.map(c ->
                io.bcswitch.registry.Json.read(io.bcswitch.registry.Json.writeString(c).replace("\"built\":[]",
                        "\"built\":" + copies).getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        MigrationState.class))).get();
        assertEquals(copies, o.readState(1).get().value().built(), "stored as an earlier version stored it");
        assertEquals(java.util.Map.of(), registry.readCopies(1).get());

        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(java.util.Map.of(0, copies), registry.readCopies(1).get(), "folded into the list of copies");
        assertEquals(1, o.readState(1).get().value().pendingDeletionCount());
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
        tickUntil(o, () -> !clusters.has("b", SCHEMA_LEDGER), "the rolled-back copy is deleted");
        assertTrue(clusters.has("a", SCHEMA_LEDGER));
        assertEquals(0, o.readState(1).get().value().pendingDeletionCount());
    }

    @Test
    void aRollbacksDeletionListNeverTakesALedgerHomeOrIssuedOnItsClusterNorOneABrokerHoldsOpen() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        applied("broker-2", 0); // a broker lags: the deletions wait until the list below is in place
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        // the list of switch 1's copies on b names three more ids, as a pass racing the rollback could leave it
        long issuedByB = B_FIRST + 3; // b's own ledger: b issued the id
        clusters.put("b", issuedByB, "b's own", "managed-ledger");
        long homeOnB = 7; // made home on b by another switch since
        clusters.put("a", homeOnB, "x", "schema");
        clusters.put("b", homeOnB, new FakeClusters.Ledger(true, "x",
                clusters.copyMetadata(clusters.get("a", homeOnB).custom(), "a")));
        registry.updateRelocations(List.of(homeOnB), (id, cur) -> Optional.of(new Relocation(
                Relocation.FORMAT_VERSION, homeOnB, "b", "a", "SCHEMA", 5, 0))).get();
        long heldOpen = 8; // a broker still reads its copy on b
        clusters.put("a", heldOpen, "y", "schema");
        clusters.put("b", heldOpen, new FakeClusters.Ledger(true, "y",
                clusters.copyMetadata(clusters.get("a", heldOpen).custom(), "a")));
        var d = registry.readDirective().get().value();
        registry.writeEphemeral(registry.paths().broker("broker-2"), new BrokerCutoverRecord(1, "broker-2",
                d.epoch(), d.target(), 0, 0, 0, 1, 2).withHandles(java.util.Map.of("b", 1),
                java.util.Map.of("b", List.of(heldOpen)))).get();
        List<Long> listed = new ArrayList<>(registry.readCopies(1).get().get(0));
        assertEquals(List.of(SCHEMA_LEDGER), listed);
        registry.appendCopies(1, o.readState(1).get().value().runToken(), List.of(issuedByB, homeOnB, heldOpen))
                .get();
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.map(c ->
                c.edit().deletions(4, c.deleteAfterRelocationEpoch()).build())).get();

        applied("broker-2", Long.MAX_VALUE);
        tickUntil(o, () -> !clusters.has("b", SCHEMA_LEDGER), "the rolled-back copy is deleted");
        tickUntil(o, () -> o.readState(1).get().value().pendingDeletionCount() <= 1, "the list is worked off");
        assertEquals(1, o.readState(1).get().value().pendingDeletionCount(), "one copy waits for its broker");
        assertTrue(clusters.has("b", issuedByB), "a ledger its cluster issued is never a copy to delete");
        assertTrue(clusters.has("b", homeOnB), "a ledger home there is never deleted");
        assertTrue(clusters.has("b", heldOpen), "a copy a broker holds open is not deleted yet");
        assertEquals(List.of(heldOpen), registry.readCopies(1).get().get(0), "and stays on the list");
        assertTrue(clusters.has("a", SCHEMA_LEDGER));
    }

    @Test
    void aRollbackToAClusterRetiredSinceLeavesItsCopiesThereAndDropsTheList() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        applied("broker-2", 0); // a broker lags: the copy's deletion waits for it
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(1, o.readState(1).get().value().pendingDeletionCount());
        // b's clients are closed before the deletion could run
        registry.update(registry.paths().cluster("b"), BookieClusterRecord.class, cur -> cur.map(c ->
                c.withStatus(ClusterStatus.DEPRECATED))).get();
        tickUntil(o, () -> o.readState(1).get().value().pendingDeletionCount() == 0, "the list is dropped");
        assertEquals(java.util.Map.of(), registry.readCopies(1).get());
        assertTrue(clusters.has("b", SCHEMA_LEDGER), "nothing is deleted through clients that are closed");
        applied("broker-2", Long.MAX_VALUE);
        tickPasses(o, 3);
        assertTrue(clusters.has("b", SCHEMA_LEDGER));
    }

    @Test
    void aRolledBackCopyIsKeptWhenItsHomeNoLongerHoldsTheLedger() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        applied("broker-2", 0); // a broker lags: the copy's deletion waits for it
        o.rollBack(1, "b", "a").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
        clusters.delete(SCHEMA_LEDGER, "a").get(); // meanwhile the ledger is lost on a (wiped bookie)
        applied("broker-2", Long.MAX_VALUE);
        tickUntil(o, () -> o.readState(1).get().value().pendingDeletionCount() == 0, "the deletion list is worked off");
        assertTrue(clusters.has("b", SCHEMA_LEDGER), "the last copy of the ledger is never deleted");
    }

    @Test
    void aLockThisBrokerLeftBehindIsReleasedByItsNextPass() throws Exception {
        MigrationOrchestrator o = afterFinishedMigration();
        String lock = registry.paths().orchestratorLock();
        // a pass whose unlock failed (the metadata store did not answer) left the lock behind
        store.put(lock, "broker-1#7-0abc".getBytes(java.nio.charset.StandardCharsets.UTF_8), Optional.of(-1L)).get();
        o.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        bugs.waitUntil(TestWaits.SECONDS,
                () -> store.get(lock).get().isEmpty(), "the lock is released, other brokers can take over");
    }

    @Test
    void aLongCopyStopsSoonAfterTheSwitchIsRolledBack() throws Exception {
        // a big ledger: its copy reads batch after batch for two minutes
        AtomicBoolean copying = new AtomicBoolean();
        LedgerCopier slow = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   java.util.function.LongFunction<CompletableFuture<Void>> pace) {
                copying.set(true);
                return batches(0, pace).thenCompose(v -> super.copy(id, from, to, pace))
                        .exceptionally(e -> new Outcome(Result.FAILED, 0, String.valueOf(e)));
            }

            private CompletableFuture<Void> batches(int n, java.util.function.LongFunction<CompletableFuture<Void>> p) {
                if (n >= 1200) {
                    return CompletableFuture.completedFuture(null);
                }
                return p.apply(1000).thenCompose(v -> {
                    CompletableFuture<Void> later = new CompletableFuture<>();
                    scheduler.schedule(() -> later.complete(null), 100, TimeUnit.MILLISECONDS);
                    return later;
                }).thenCompose(v -> batches(n + 1, p));
            }
        };
        switched(1, "b", "a", B_FIRST);
        applied("broker-1", Long.MAX_VALUE);
        MigrationOrchestrator o = running(registry, currentReferences(), slow);
        o.switchAccepted(1);
        o.start(50);
        bugs.waitUntil(TestWaits.SECONDS, copying::get, "the copy runs");

        // the rollback waits for the lock the copying pass holds: that pass stops at the run's next look at its
        // state (every second on a broker, every 100 ms here)
        o.rollBack(1, "b", "a").get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.ROLLED_BACK, o.readState(1).get().value().phase());
        assertEquals("a", home(SCHEMA_LEDGER).orElseThrow());
    }

    @Test
    void aCopyTheStopCutShortIsNotTriedFromAnotherCluster() throws Exception {
        // found by review: the copy a rollback cut short counted as "the home cannot be read", so the stopped run
        // went on copying the ledger from its original
        MigrationOrchestrator first = migratedToB();
        first.close(); // the next switch's migration is run by the orchestrator below
        assertEquals("b", home(SCHEMA_LEDGER).orElseThrow());
        List<String> sources = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean copying = new AtomicBoolean();
        LedgerCopier slowFromB = new FakeClusters.Delegating(copier) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String to,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                sources.add(from);
                if (!from.equals("b")) {
                    return super.copy(id, from, to, pace);
                }
                copying.set(true);
                // a big ledger: batch after batch until the stop fails the pacing
                return batches(pace).exceptionally(e -> new Outcome(Result.FAILED, 0, "stopped: " + e));
            }

            private CompletableFuture<Outcome> batches(LongFunction<CompletableFuture<Void>> pace) {
                return pace.apply(1000).thenCompose(v -> {
                    CompletableFuture<Void> later = new CompletableFuture<>();
                    scheduler.schedule(() -> later.complete(null), 100, TimeUnit.MILLISECONDS);
                    return later;
                }).thenCompose(v -> batches(pace));
            }
        };
        switched(2, "c", "b", 2L << 32);
        MigrationOrchestrator o = running(registry, currentReferences(), slowFromB);
        o.switchAccepted(2);
        o.start(50);
        bugs.waitUntil(TestWaits.SECONDS, copying::get, "the copy from b runs");

        o.rollBack(2, "c", "b").get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
        assertEquals(Phase.ROLLED_BACK, o.readState(2).get().value().phase());
        tickPasses(o, 8);
        assertEquals(List.of("b"), List.copyOf(sources), "after the stop nothing is copied from a");
        assertTrue(!clusters.has("c", SCHEMA_LEDGER), "no copy is left on c");
    }

    /** Runs orchestrator passes until {@code condition} holds (at most {@link TestWaits#PASS_SECONDS}). */
    private void tickUntil(MigrationOrchestrator o, Callable<Boolean> condition, String what) throws Exception {
        bugs.waitUntil(TestWaits.PASS_SECONDS, () -> {
            o.tick().get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
            return condition.call();
        }, what);
    }

}
