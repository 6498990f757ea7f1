package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.RetryDelays;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.ScriptedPort;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One broker's switch agent on a scripted in-memory metadata store: what it does with a directive (activate, cut
 * over, finish the switch's registry writes), how it reports and retries an activation that fails, and how it finds
 * what it missed (a session re-established or reconnected, the periodic re-read, a refresh for an unknown id).
 */
class BrokerSwitchAgentTest {
    private static final long B = 1L << 32;
    private static final long C = 2L << 32;
    private static final long D = 3L << 32;
    /** A re-read interval no test waits for: anything the agent finds, it found another way. */
    private static final int NEVER = 3600;

    private ScriptedPort port;
    private RegistryStore registry;
    private BrokerPresence presence;
    private BrokerSwitchAgent agent;
    /** "cluster@firstLedgerId" per activation asked for ("cluster" at start-up). */
    private final List<String> activations = new CopyOnWriteArrayList<>();
    private final List<Ownership> cutovers = new CopyOnWriteArrayList<>();
    private final List<String> delays = new CopyOnWriteArrayList<>();
    private final List<Long> relocationsTold = new CopyOnWriteArrayList<>();
    private final AtomicBoolean failing = new AtomicBoolean();
    private volatile Throwable failure = new IllegalStateException("no bookies");
    /** Run while the agent starts (after {@code start} was called, before it completed). */
    private Step whileStarting;

    private interface Step {
        void run() throws Exception;
    }

    @BeforeEach
    void setUp() throws Exception {
        port = new ScriptedPort();
        registry = new RegistryStore(port, new RegistryPaths("/bcs"));
        for (String c : List.of("a", "b", "c")) {
            registry.write(registry.paths().cluster(c), new BookieClusterRecord(1, c, "zk:" + c,
                    c.equals("a") ? ClusterStatus.ACTIVE : ClusterStatus.STANDBY, 1L), -1).get();
        }
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "a", 0), -1).get();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0), -1).get();
    }

    @AfterEach
    void tearDown() {
        if (agent != null) {
            agent.close();
        }
        port.close();
    }

    private Ownership start(int resyncSeconds) throws Exception {
        agent = newAgent(resyncSeconds);
        // before start-up the broker routes nothing, so it lags nothing
        assertEquals(0, agent.relocationEpochLag());
        CompletableFuture<Ownership> starting = agent.start("zk:a");
        if (whileStarting != null) {
            whileStarting.run();
        }
        Ownership started = starting.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        if (whileStarting == null) { // (else a directive written meanwhile may be applied at once)
            assertSame(agent.ownership(), started, "start completes with the view the broker routes with");
        }
        return started;
    }

    /** An agent over this test's registry, recording what it does, not started. */
    private BrokerSwitchAgent newAgent(int resyncSeconds) {
        presence = new BrokerPresence(registry, () -> "broker-1", Clock.systemUTC());
        ClientActivation activation = new ClientActivation() {
            @Override
            public CompletableFuture<Void> activate(String cluster) {
                activations.add(cluster);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> activate(String cluster, long firstLedgerId) {
                activations.add(cluster + "@" + firstLedgerId);
                return failing.get() ? CompletableFuture.failedFuture(failure)
                        : CompletableFuture.completedFuture(null);
            }
        };
        CutoverTrigger cutover = o -> {
            cutovers.add(o);
            presence.cutover(new BrokerCutoverRecord(1, "broker-1", o.activeEpoch(), o.activeCluster(), 0, 0, 0, 1,
                    2));
        };
        RetryDelays.Factory retries = (first, max) -> new RetryDelays() {
            @Override
            public long nextMillis() {
                delays.add("next");
                return 20;
            }

            @Override
            public void reset() {
                delays.add("reset");
            }
        };
        SwitchConfig config = new SwitchConfig("/bcs", "", 50, true, 10, SwitchConfig.Migration.DEFAULTS,
                resyncSeconds, 4, 1000, 0, 30);
        return new BrokerSwitchAgent(registry, config, activation, cutover, presence, Clock.systemUTC(), retries,
                new BrokerSwitchAgent.Listener() {
                    @Override
                    public void relocationsApplied(long epoch) {
                        relocationsTold.add(epoch);
                        presence.relocationApplied(epoch); // as the broker does
                    }
                });
    }

    private void direct(long epoch, String target, String origin, long firstLedgerId) throws Exception {
        registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> Optional.of(
                new SwitchDirective(1, target, origin, epoch, 7, firstLedgerId))).get();
    }

    private void awaitActiveEpoch(long epoch) throws Exception {
        TestWaits.until("epoch " + epoch + " active on the broker", () -> agent.ownership().activeEpoch() >= epoch);
    }

    private ClusterStatus status(String cluster) throws Exception {
        return registry.getCluster(cluster).get().orElseThrow().status();
    }

    private Optional<BrokerCutoverRecord> brokerRecord() throws Exception {
        return registry.listBrokerProgress().get().stream().findFirst();
    }

    @Test
    void aDirectiveIsActivatedCutOverAndTheSwitchsRegistryWritesAreCompletedByTheBroker() throws Exception {
        Ownership o = start(NEVER);
        assertEquals("a", o.activeCluster());
        assertEquals(0, o.activeEpoch());
        assertEquals(List.of("a"), activations);
        assertTrue(cutovers.isEmpty(), "nothing to cut over at start-up");

        // the broker that switched died right after writing the directive: the range table and the statuses are
        // still as before, and every broker applying the directive completes them
        direct(1, "b", "a", B);
        awaitActiveEpoch(1);
        assertEquals(List.of("a", "b@" + B), activations);
        TestWaits.until("the cutover started", () -> cutovers.size() == 1);
        assertEquals("b", cutovers.get(0).activeCluster());
        assertEquals(1, cutovers.get(0).activeEpoch());
        assertEquals(Optional.of("b"), cutovers.get(0).owner(B + 3), "the cutover routes the new range to b");
        TestWaits.until("b ACTIVE and a STANDBY", () -> status("b") == ClusterStatus.ACTIVE
                && status("a") == ClusterStatus.STANDBY);
        assertEquals(ClusterStatus.STANDBY, status("c"));
        TestWaits.until("the range table holds b's range", () -> registry.readRanges().get().orElseThrow()
                .ranges().contains(new IdRange("b", B, 1, 7)));

        // an older or the same directive again changes nothing
        direct(1, "c", "b", C);
        Thread.sleep(200);
        assertEquals("b", agent.ownership().activeCluster());
        assertEquals(1, cutovers.size());
        assertEquals(2, activations.size());
        assertEquals(List.of(), relocationsTold, "no relocation epoch changed: nothing re-read, nothing told");
        port.tell(MetadataPort.SessionChange.RECONNECTED);
        TestWaits.until("the relocation table re-read in full", () -> relocationsTold.equals(List.of(0L)));
        assertEquals(2, activations.size());
    }

    @Test
    void aDirectiveWrittenWhileTheBrokerStartsIsAppliedOnceItHasStarted() throws Exception {
        port.mute(true); // only the start-up's own look at the directive can find it
        // start-up decides (on a at epoch 0), then reads the relocation table: the directive comes in between
        port.hold(p -> p.equals(registry.paths().relocationEpoch()));
        whileStarting = () -> {
            port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
            direct(1, "b", "a", B);
            port.release();
        };
        start(NEVER);
        awaitActiveEpoch(1);
        assertEquals(List.of("a", "b@" + B), activations);
    }

    @Test
    void aFailingActivationIsPublishedRetriedAndClearedOnceItWorks() throws Exception {
        start(NEVER);
        direct(1, "b", "a", B);
        awaitActiveEpoch(1);
        TestWaits.until("the broker record", () -> brokerRecord().isPresent());

        failing.set(true);
        // a wrapper without a message of its own: the error names the cause's message
        failure = new RuntimeException(null, new java.io.IOException("not enough bookies on c"));
        direct(2, "c", "b", C);
        TestWaits.until("two failed attempts published", () -> brokerRecord().orElseThrow().activationAttempts()
                >= 2);
        BrokerCutoverRecord r = brokerRecord().orElseThrow();
        assertEquals("cannot activate bookie-cluster=c (epoch 2): not enough bookies on c", r.activationError());
        assertEquals("b", agent.ownership().activeCluster(), "still routing new ledgers to b");
        assertEquals(1, cutovers.size(), "no cutover to a cluster that is not active");

        failing.set(false);
        awaitActiveEpoch(2);
        assertEquals("c", agent.ownership().activeCluster());
        TestWaits.until("the error cleared", () -> brokerRecord().orElseThrow().activationError() == null
                && brokerRecord().orElseThrow().activationAttempts() == 0);
        TestWaits.until("the cutover to c", () -> cutovers.size() == 2);
        int retries = (int) delays.stream().filter("next"::equals).count();
        assertTrue(retries >= 2, delays.toString());
        assertEquals("reset", delays.get(delays.size() - 1), "the next failure waits the first delay again");
        long attempts = activations.stream().filter(x -> x.startsWith("c@")).count();
        assertEquals(retries + 1, attempts, "one attempt per wait, then the one that worked: " + activations);
    }

    @Test
    void anActivationErrorWithoutAnyMessageIsNamedByItsType() throws Exception {
        start(NEVER);
        failing.set(true);
        failure = new IllegalStateException();
        cutovers.clear();
        presence.cutover(new BrokerCutoverRecord(1, "broker-1", 0, "a", 0, 0, 0, 1, 2));
        direct(1, "b", "a", B);
        TestWaits.until("a failed attempt published", () -> brokerRecord().orElseThrow().activationAttempts() >= 1);
        assertEquals("cannot activate bookie-cluster=b (epoch 1): java.lang.IllegalStateException",
                brokerRecord().orElseThrow().activationError());
    }

    @ParameterizedTest
    @EnumSource(value = MetadataPort.SessionChange.class, names = {"RECONNECTED", "SESSION_REESTABLISHED"})
    void aDirectiveMissedWhileCutOffIsAppliedWhenTheSessionComesBack(MetadataPort.SessionChange change)
            throws Exception {
        start(NEVER);
        Thread.sleep(200); // the start-up's own read of the directive is done: what follows is missed
        port.mute(true);
        direct(1, "b", "a", B);
        port.tell(MetadataPort.SessionChange.CONNECTION_LOST);
        port.tell(MetadataPort.SessionChange.SESSION_LOST);
        Thread.sleep(200);
        assertEquals(0, agent.ownership().activeEpoch(), "a lost connection re-reads nothing (it cannot)");
        port.tell(change);
        awaitActiveEpoch(1);
        assertEquals("b", agent.ownership().activeCluster());
    }

    @Test
    void theBrokersRecordsComeBackAfterTheSessionThatHeldThemExpired() throws Exception {
        start(NEVER);
        agent.retellRelocationEpoch(); // as the broker does once it has its id
        direct(1, "b", "a", B);
        awaitActiveEpoch(1);
        String record = registry.paths().broker("broker-1");
        String applied = registry.paths().relocationApplied("broker-1");
        TestWaits.until("both records", () -> registry.ownsEphemeral(record).get()
                && registry.ownsEphemeral(applied).get());
        port.memory().expireSession().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        TestWaits.until("both records re-created", () -> registry.ownsEphemeral(record).get()
                && registry.ownsEphemeral(applied).get());
        assertEquals(Map.of("broker-1", 0L), registry.listRelocationApplied().get());
        assertEquals(1, brokerRecord().orElseThrow().appliedEpoch());
    }

    @Test
    void thePeriodicReReadFindsWhatNoNotificationSaid() throws Exception {
        start(1);
        String record = registry.paths().broker("broker-1");
        presence.cutover(new BrokerCutoverRecord(1, "broker-1", 0, "a", 0, 0, 0, 1, 2));
        TestWaits.until("the broker record", () -> registry.ownsEphemeral(record).get());
        port.mute(true);
        direct(1, "b", "a", B);
        awaitActiveEpoch(1);
        // a record gone without a session change (deleted by hand) is re-created by the same check
        port.delete(record, Optional.empty()).get();
        TestWaits.until("the broker record re-created", () -> registry.ownsEphemeral(record).get());
    }

    @Test
    void aRefreshAddsTheRangesOnlyTheTableOrTheDirectiveKnowsWithoutActivatingThem() throws Exception {
        start(NEVER);
        port.mute(true);
        registry.update(registry.paths().ranges(), RangeTable.class, t -> t.map(x -> x.with(new IdRange("c", C, 2,
                0)))).get();
        Ownership o = agent.refresh().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Optional.of("c"), o.owner(C + 1));
        assertSame(o, agent.ownership());
        assertEquals("a", o.activeCluster(), "a refresh activates nothing");

        // the newest directive's range may not be in the table yet: a second refresh reads again
        direct(3, "d", "c", D);
        o = agent.refresh().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Optional.of("d"), o.owner(D + 1));
        assertEquals(0, o.activeEpoch());
        assertEquals(List.of("a"), activations);
    }

    @Test
    void concurrentRefreshesShareOneReadAndAFailedOneIsNotRemembered() throws Exception {
        start(NEVER);
        port.hold(p -> p.equals(registry.paths().ranges()));
        CompletableFuture<Ownership> first = agent.refresh();
        CompletableFuture<Ownership> second = agent.refresh();
        assertSame(first, second, "one read for both");
        port.release();
        first.get(TestWaits.SECONDS, TimeUnit.SECONDS);

        port.failReads(p -> p.equals(registry.paths().ranges()));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> agent.refresh().get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("read of /bcs/ranges failed"), e.toString());
        port.failReads(p -> false);
        registry.update(registry.paths().ranges(), RangeTable.class, t -> t.map(x -> x.with(new IdRange("c", C, 2,
                0)))).get();
        assertEquals(Optional.of("c"), agent.refresh().get(TestWaits.SECONDS, TimeUnit.SECONDS).owner(C));
    }

    @Test
    void aBrokerThatCannotReadTheRelocationsItWasToldOfLagsUntilItCan() throws Exception {
        start(NEVER);
        assertEquals(0, agent.relocationEpochLag());
        registry.updateRelocations(List.of(10L), (i, cur) -> Optional.of(new Relocation(Relocation.FORMAT_VERSION,
                10L, "b", "a", "CURSOR", 1, 0))).get();
        port.failReads(p -> p.startsWith(registry.paths().relocations() + "/"));
        registry.bumpRelocationEpoch(0, List.of(10L)).get();
        TestWaits.until("one epoch behind", () -> agent.relocationEpochLag() == 1);
        // the epoch is seen before the relocations are read: the failure must have happened before reads work
        // again, or the lagging read itself succeeds and tells epoch 1 a second time
        TestWaits.until("the relocation read failed", () -> port.readsFailed() > 0);
        assertEquals(0, agent.ownership().relocationEpoch());

        port.failReads(p -> false);
        port.tell(MetadataPort.SessionChange.RECONNECTED);
        TestWaits.until("up to date", () -> agent.relocationEpochLag() == 0);
        assertEquals(Optional.of("b"), agent.ownership().owner(10L));
        TestWaits.until("told of epoch 1", () -> relocationsTold.contains(1L));

        int told = relocationsTold.size();
        agent.retellRelocationEpoch();
        TestWaits.until("told again", () -> relocationsTold.size() == told + 1);
        assertEquals(1L, relocationsTold.get(told));
    }

    @Test
    void theDeprecatedClustersAreRetiredFromStartUpAndAsTheRegistryChanges() throws Exception {
        registry.write(registry.paths().cluster("c"), new BookieClusterRecord(1, "c", "zk:c", ClusterStatus.DEPRECATED,
                1L), 0).get();
        assertEquals(java.util.Set.of("c"), start(NEVER).retired(), "DEPRECATED before this broker started");
        registry.write(registry.paths().cluster("b"), new BookieClusterRecord(1, "b", "zk:b", ClusterStatus.DEPRECATED,
                1L), 0).get();
        registry.bumpRelocationEpoch(0, List.of()).get();
        TestWaits.until("b retired", () -> agent.ownership().retired().equals(java.util.Set.of("b", "c")));
    }

    @Test
    void theAgentsThreadNeverKeepsTheBrokersJvmAlive() throws Exception {
        agent = newAgent(NEVER);
        // the agent's thread is made here, by the test's own thread: a new thread is a daemon only if its creator is
        // one or it is made one, and the test's thread is not
        agent.retellRelocationEpoch(); // not started: nothing to tell
        List<Thread> threads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("bcs-switch-agent")).toList();
        assertTrue(!threads.isEmpty());
        assertTrue(threads.stream().allMatch(Thread::isDaemon), threads.toString());
        agent.close();
        agent.retellRelocationEpoch(); // closed: nothing to tell, no error
        assertEquals(List.of(), relocationsTold);
    }
}
