package io.bcswitch.cutover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CutoverRunnerTest {
    private static final long B_START = 1L << 32;
    /** a (bootstrap, ids from 0) then b (epoch 1, ids from 2^32); b is active. */
    private static final Ownership B_ACTIVE = new Ownership(
            RangeTable.bootstrap("a", 0).with(new IdRange("b", B_START, 1, 0)), "b", 1);

    /** What a roll of a given ledger does. */
    enum Behaviour { TAKES, DOES_NOT_TAKE, FAILS, UNLOADS, THROWS, STALLS }

    /** Fake broker: open ledgers with their current ids; a roll moves the ledger into b's range. */
    static final class FakeRoller implements TopicRoller {
        final Map<String, Long> current = new ConcurrentHashMap<>();
        final Map<String, List<Behaviour>> script = new ConcurrentHashMap<>();
        final List<String> rolls = new CopyOnWriteArrayList<>();
        final List<Long> rollTimes = new CopyOnWriteArrayList<>();
        final AtomicLong nextId = new AtomicLong(B_START + 1000);
        final java.util.concurrent.atomic.AtomicInteger currentLedgerIdThrows =
                new java.util.concurrent.atomic.AtomicInteger();

        void open(String name, long ledgerId, Behaviour... behaviours) {
            current.put(name, ledgerId);
            script.put(name, new ArrayList<>(List.of(behaviours)));
        }

        final Map<String, Long> cursors = new ConcurrentHashMap<>();
        final java.util.concurrent.atomic.AtomicInteger createsElsewhere = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public int createsInFlightOutside(String activeCluster) {
            return createsElsewhere.get();
        }

        @Override
        public int rollCursors(String name, java.util.function.LongPredicate onOldCluster) {
            Long c = cursors.get(name);
            if (c != null && onOldCluster.test(c)) {
                cursors.put(name, nextId.getAndIncrement());
                return 1;
            }
            return 0;
        }

        /** Looks at the open ledgers (one per scan of the cutover). */
        final java.util.concurrent.atomic.AtomicInteger scans = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public List<OpenLedger> openLedgers() {
            scans.incrementAndGet();
            List<OpenLedger> out = new ArrayList<>();
            current.forEach((n, id) -> out.add(new OpenLedger(n, id, 10,
                    cursors.containsKey(n) ? List.of(cursors.get(n)) : List.of())));
            out.sort(java.util.Comparator.comparing(OpenLedger::name));
            return out;
        }

        @Override
        public long currentLedgerId(String name) {
            if (currentLedgerIdThrows.getAndDecrement() > 0) {
                throw new IllegalStateException("managed ledger " + name + " is being closed");
            }
            return current.getOrDefault(name, -1L);
        }

        @Override
        public CompletableFuture<RollMethod> roll(String name) {
            rolls.add(name);
            rollTimes.add(System.nanoTime());
            List<Behaviour> s = script.get(name);
            Behaviour b = s == null || s.isEmpty() ? Behaviour.TAKES : s.remove(0);
            switch (b) {
                case TAKES:
                    current.put(name, nextId.getAndIncrement());
                    return CompletableFuture.completedFuture(RollMethod.ROLLOVER);
                case UNLOADS:
                    current.remove(name);
                    return CompletableFuture.completedFuture(RollMethod.UNLOAD);
                case FAILS:
                    return CompletableFuture.failedFuture(new IllegalStateException("managed ledger is fenced"));
                case THROWS:
                    throw new IllegalStateException("rollCurrentLedgerIfFull threw");
                case STALLS:
                    // the roll waited for the topic's lock, holding the cutover's thread
                    try {
                        Thread.sleep(150);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    current.put(name, nextId.getAndIncrement());
                    return CompletableFuture.completedFuture(RollMethod.ROLLOVER);
                default:
                    return CompletableFuture.completedFuture(RollMethod.SKIPPED);
            }
        }
    }

    /** A tenth of a broker's sweep interval: the retry and give-up points scale with it. */
    private static final long SWEEP_MILLIS = CutoverRunner.SWEEP_INTERVAL_MS / 10;
    /** Bound of a wait for what takes a few sweeps. */
    private static final long FINISH_MILLIS = 3000;

    private ScheduledExecutorService scheduler;
    private FakeRoller roller;
    private BlockingQueue<BrokerCutoverRecord> published;

    @BeforeEach
    void setUp() {
        scheduler = Executors.newSingleThreadScheduledExecutor();
        roller = new FakeRoller();
        published = new LinkedBlockingQueue<>();
    }

    @AfterEach
    void tearDown() throws Exception {
        scheduler.shutdownNow();
        scheduler.awaitTermination(5, TimeUnit.SECONDS);
    }

    private CutoverRunner runner(boolean enabled, double topicsPerSecond) {
        return runner(enabled, topicsPerSecond, SWEEP_MILLIS);
    }

    private CutoverRunner runner(boolean enabled, double topicsPerSecond, long sweepMillis) {
        return new CutoverRunner(roller, enabled, () -> topicsPerSecond, scheduler, published::add,
                () -> "broker-1:8080", Clock.systemUTC(), sweepMillis);
    }

    /** Waits for the record with finishedAt > 0; returns every record published up to it. */
    private List<BrokerCutoverRecord> awaitFinished(long timeoutMillis) throws InterruptedException {
        List<BrokerCutoverRecord> seen = new ArrayList<>();
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            BrokerCutoverRecord r = published.poll(deadline - System.currentTimeMillis(), TimeUnit.MILLISECONDS);
            if (r == null) {
                break;
            }
            seen.add(r);
            if (r.finishedAt() > 0) {
                return seen;
            }
        }
        throw new AssertionError("cutover did not finish within " + timeoutMillis + " ms; published " + seen
                + ", rolls " + roller.rolls);
    }

    @Test
    void onlyLedgersOnAnotherClusterAreRolledEachOnce() throws Exception {
        roller.open("persistent://t/n/on-a-1", 5);
        roller.open("persistent://t/n/on-a-2", B_START - 1);
        roller.open("persistent://t/n/on-a-unloaded", 7, Behaviour.UNLOADS);
        roller.open("persistent://t/n/on-b", B_START + 3);
        roller.open("persistent://t/n/no-ledger-yet", -1);
        long before = System.currentTimeMillis();

        CutoverRunner r = runner(true, 100);
        r.start(B_ACTIVE);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);

        BrokerCutoverRecord first = records.get(0);
        assertEquals(3, first.topicsTotal());
        assertEquals(0, first.topicsMoved());
        assertEquals(0L, first.finishedAt());
        assertEquals(1L, first.appliedEpoch());
        assertEquals("b", first.activeCluster());
        assertEquals("broker-1:8080", first.broker());
        assertTrue(first.startedAt() >= before, "startedAt " + first.startedAt());

        BrokerCutoverRecord last = records.get(records.size() - 1);
        assertEquals(new BrokerCutoverRecord(BrokerCutoverRecord.FORMAT_VERSION, "broker-1:8080", 1, "b", 3, 3, 0,
                first.startedAt(), last.finishedAt()), last);
        assertTrue(last.done());
        assertTrue(last.finishedAt() >= last.startedAt());

        Thread.sleep(4 * SWEEP_MILLIS); // nothing more happens once finished
        List<String> rolled = new ArrayList<>(roller.rolls);
        Collections.sort(rolled);
        assertEquals(List.of("persistent://t/n/on-a-1", "persistent://t/n/on-a-2", "persistent://t/n/on-a-unloaded"),
                rolled);
        assertEquals(B_START + 3, roller.currentLedgerId("persistent://t/n/on-b"));
        assertEquals(last, r.lastProgress().orElseThrow());
    }

    @Test
    void aLedgerCreatedOnTheOldClusterWhileTheCutoverRunsIsMovedBeforeItFinishes() throws Exception {
        // t2 was loading (creating its first ledger through a client routed before the switch) when the
        // cutover started: its ledger on a appears only after the first roll
        roller.open("persistent://t/n/t1", 5);
        roller.open("persistent://t/n/t1b", 6);
        java.util.concurrent.atomic.AtomicBoolean appeared = new java.util.concurrent.atomic.AtomicBoolean();
        FakeRoller late = roller;
        CutoverRunner r = new CutoverRunner(new TopicRoller() {
            @Override
            public List<OpenLedger> openLedgers() {
                return late.openLedgers();
            }

            @Override
            public long currentLedgerId(String name) {
                return late.currentLedgerId(name);
            }

            @Override
            public CompletableFuture<RollMethod> roll(String name) {
                if (appeared.compareAndSet(false, true)) {
                    late.open("persistent://t/n/t2", 9);
                }
                return late.roll(name);
            }
        }, true, () -> 100, scheduler, published::add, () -> "broker-1:8080", Clock.systemUTC(), SWEEP_MILLIS);
        r.start(B_ACTIVE);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);
        BrokerCutoverRecord last = records.get(records.size() - 1);
        assertTrue(roller.rolls.contains("persistent://t/n/t2"), "rolled: " + roller.rolls);
        assertTrue(roller.currentLedgerId("persistent://t/n/t2") >= B_START, "t2 writes to b");
        assertEquals(3, last.topicsTotal(), String.valueOf(last));
        assertEquals(3, last.topicsMoved(), String.valueOf(last));
        for (BrokerCutoverRecord rec : records) {
            assertTrue(!rec.done() || roller.current.values().stream().allMatch(id -> id >= B_START),
                    "never done while a ledger writes to a: " + rec);
        }
    }

    @Test
    void cursorLedgersAndCreationsInFlightOnTheOldClusterKeepTheCutoverOpen() throws Exception {
        // the data ledger is on b already, but a cursor still writes its positions to a ledger on a
        roller.open("persistent://t/n/x", B_START + 1);
        roller.cursors.put("persistent://t/n/x", 8L);
        roller.createsElsewhere.set(1); // and a ledger creation routed to a before the switch is in flight
        runner(true, 100).start(B_ACTIVE);
        Thread.sleep(10 * SWEEP_MILLIS);
        assertTrue(roller.rolls.isEmpty(), "the data ledger is not rolled: " + roller.rolls);
        assertTrue(roller.cursors.get("persistent://t/n/x") >= B_START, "the cursor ledger was rolled onto b");
        assertTrue(r(published).stream().noneMatch(BrokerCutoverRecord::done), "not over while a creation on a "
                + "is in flight");
        roller.createsElsewhere.set(0);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);
        assertEquals(1, records.get(records.size() - 1).topicsMoved());
    }

    private static List<BrokerCutoverRecord> r(BlockingQueue<BrokerCutoverRecord> q) {
        return new ArrayList<>(q);
    }

    @Test
    void nothingToMoveFinishesWithZeroCounts() throws Exception {
        roller.open("persistent://t/n/on-b", B_START + 3);
        runner(true, 50).start(B_ACTIVE);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);
        assertEquals(1, records.size(), "finished at once, not a sweep later: " + records);
        BrokerCutoverRecord last = records.get(records.size() - 1);
        assertEquals(0, last.topicsTotal());
        assertEquals(0, last.topicsMoved());
        assertEquals(0, last.topicsFailed());
        assertTrue(roller.rolls.isEmpty());
    }

    @Test
    void disabledCutoverRollsNothingAndIsOverOnlyWhenTheLedgersMovedByThemselves() throws Exception {
        roller.open("persistent://t/n/on-a-1", 5);
        roller.open("persistent://t/n/on-a-2", 6);
        roller.open("persistent://t/n/on-b", B_START + 3);
        runner(false, 50).start(B_ACTIVE);

        BrokerCutoverRecord first = published.poll(2, TimeUnit.SECONDS);
        assertNotNull(first);
        assertEquals(2, first.topicsTotal());
        assertEquals(0, first.topicsMoved());
        assertEquals(2, first.topicsFailed(), "reported as not moved");
        assertEquals(0L, first.finishedAt(), "not over while two ledgers still write to a");

        Thread.sleep(12 * SWEEP_MILLIS); // past several sweeps, and retries
        assertTrue(roller.rolls.isEmpty(), "rolled " + roller.rolls);
        assertEquals(5L, roller.currentLedgerId("persistent://t/n/on-a-1"));

        // their normal rollover moves them
        roller.current.put("persistent://t/n/on-a-1", B_START + 10);
        roller.current.put("persistent://t/n/on-a-2", B_START + 11);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);
        BrokerCutoverRecord last = records.get(records.size() - 1);
        assertEquals(2, last.topicsMoved());
        assertEquals(0, last.topicsFailed());
        assertTrue(last.done());
    }

    @Test
    void aRollThatDoesNotTakeIsRetried() throws Exception {
        roller.open("persistent://t/n/skipped-once", 5, Behaviour.DOES_NOT_TAKE, Behaviour.TAKES);
        roller.open("persistent://t/n/failed-once", 6, Behaviour.FAILS, Behaviour.TAKES);
        roller.open("persistent://t/n/takes", 7, Behaviour.TAKES);

        runner(true, 100).start(B_ACTIVE);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);

        BrokerCutoverRecord last = records.get(records.size() - 1);
        assertEquals(3, last.topicsTotal());
        assertEquals(3, last.topicsMoved());
        assertEquals(0, last.topicsFailed());
        // progress was reported while the two stragglers were pending
        assertTrue(records.stream().anyMatch(r -> r.finishedAt() == 0 && r.topicsMoved() == 1),
                "records " + records);
        assertEquals(2, Collections.frequency(roller.rolls, "persistent://t/n/skipped-once"), "" + roller.rolls);
        assertEquals(2, Collections.frequency(roller.rolls, "persistent://t/n/failed-once"), "" + roller.rolls);
        assertEquals(1, Collections.frequency(roller.rolls, "persistent://t/n/takes"), "" + roller.rolls);
        for (String name : roller.current.keySet()) {
            assertTrue(B_ACTIVE.owner(roller.currentLedgerId(name)).orElseThrow().equals("b"), name);
        }
    }

    @Test
    void rollsAreThrottled() throws Exception {
        roller.open("persistent://t/n/x1", 1);
        roller.open("persistent://t/n/x2", 2);
        roller.open("persistent://t/n/x3", 3);
        long start = System.nanoTime();
        runner(true, 20).start(B_ACTIVE); // one roll every 50 ms
        awaitFinished(FINISH_MILLIS);
        assertEquals(3, roller.rolls.size());
        long lastRoll = roller.rollTimes.get(2);
        assertTrue(lastRoll - start >= TimeUnit.MILLISECONDS.toNanos(95),
                "3 rolls at 20/s took only " + TimeUnit.NANOSECONDS.toMillis(lastRoll - start) + " ms");
    }

    /**
     * A roll that holds the cutover's thread for six periods is not followed by the six rolls it held up all at once:
     * topics creating their ledgers at the same moment is the publish-latency spike the pace exists to avoid.
     */
    @Test
    void aRollThatHoldsTheThreadUpIsNotFollowedByABurstOfRolls() throws Exception {
        roller.open("persistent://t/n/a-stalls", 1, Behaviour.STALLS);
        for (int i = 0; i < 10; i++) {
            roller.open("persistent://t/n/b" + i, 10 + i);
        }
        long period = TimeUnit.MILLISECONDS.toNanos(25);
        runner(true, 40).start(B_ACTIVE);
        awaitFinished(FINISH_MILLIS);
        assertEquals(11, roller.rolls.size(), roller.rolls.toString());
        assertEquals("persistent://t/n/a-stalls", roller.rolls.get(0));
        for (int i = 1; i < roller.rollTimes.size(); i++) {
            long gap = roller.rollTimes.get(i) - roller.rollTimes.get(i - 1);
            assertTrue(gap >= period / 2, "roll " + i + " came " + TimeUnit.NANOSECONDS.toMicros(gap)
                    + " us after the one before: a burst");
        }
    }

    @Test
    void aNewerSwitchReplacesARunningCutover() throws Exception {
        roller.open("persistent://t/n/on-a", 5, Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE);
        CutoverRunner r = runner(true, 100);
        r.start(B_ACTIVE);
        BrokerCutoverRecord first = published.poll(2, TimeUnit.SECONDS);
        assertNotNull(first);
        assertEquals(1L, first.appliedEpoch());

        // switch back to a: the ledger on a no longer needs to move, everything in b's range would
        Ownership aAgain = new Ownership(B_ACTIVE.ranges().with(new IdRange("a", 2L << 32, 2, 0)), "a", 2);
        r.start(aAgain);
        List<BrokerCutoverRecord> records = awaitFinished(FINISH_MILLIS);
        BrokerCutoverRecord last = records.get(records.size() - 1);
        assertEquals(2L, last.appliedEpoch());
        assertEquals("a", last.activeCluster());
        assertEquals(0, last.topicsTotal());
        Thread.sleep(4 * SWEEP_MILLIS);
        assertTrue(published.stream().noneMatch(x -> x.appliedEpoch() == 1L && x.finishedAt() > 0),
                "the replaced cutover must not report completion: " + published);
    }

    @Test
    void aRollThatThrowsDoesNotStopTheOtherRolls() throws Exception {
        roller.open("persistent://t/n/a-throws", 5, Behaviour.THROWS, Behaviour.TAKES);
        roller.open("persistent://t/n/b-normal", 6, Behaviour.TAKES);
        runner(true, 100).start(B_ACTIVE);
        Thread.sleep(10 * SWEEP_MILLIS);
        assertTrue(roller.rolls.contains("persistent://t/n/b-normal"), "rolls " + roller.rolls);
        BrokerCutoverRecord last = awaitFinished(FINISH_MILLIS).stream().reduce((x, y) -> y).orElseThrow();
        assertEquals(2, last.topicsMoved());
    }

    @Test
    void aSweepThatThrowsOnceStillFinishes() throws Exception {
        roller.open("persistent://t/n/on-a", 5, Behaviour.TAKES);
        roller.currentLedgerIdThrows.set(1);
        runner(true, 100).start(B_ACTIVE);
        BrokerCutoverRecord last = awaitFinished(FINISH_MILLIS).stream().reduce((x, y) -> y).orElseThrow();
        assertEquals(1, last.topicsMoved());
    }

    @Test
    void runningOnlyWhileALedgerStillWritesElsewhereAndNeverAfterClose() throws Exception {
        CutoverRunner r = runner(true, 100);
        assertFalse(r.running(), "nothing started");
        roller.open("persistent://t/n/stuck", 5, Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE,
                Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE,
                Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE, Behaviour.DOES_NOT_TAKE);
        r.start(B_ACTIVE);
        assertNotNull(published.poll(2, TimeUnit.SECONDS));
        assertTrue(r.running(), "the ledger still writes to a");
        r.close();
        Thread.sleep(2 * SWEEP_MILLIS);
        assertFalse(r.running(), "closed");
        int rolls = roller.rolls.size();
        Thread.sleep(12 * SWEEP_MILLIS); // several retry points
        assertEquals(rolls, roller.rolls.size(), "nothing is rolled after close: " + roller.rolls);

        CutoverRunner done = runner(true, 100);
        roller.open("persistent://t/n/moves", 6, Behaviour.TAKES);
        roller.current.remove("persistent://t/n/stuck");
        done.start(B_ACTIVE);
        awaitFinished(FINISH_MILLIS);
        assertFalse(done.running(), "finished");
    }

    /**
     * A ledger that never moves is rolled again every {@value CutoverRunner#RETRY_EVERY_SWEEPS} sweeps (not hammered),
     * reported failed after {@value CutoverRunner#MAX_SWEEPS} sweeps, and from then on retried at every
     * {@value CutoverRunner#SLOW_EVERY_SWEEPS}th sweep only. Sweeps of a millisecond make that a fraction of a second.
     */
    @Test
    void aLedgerThatNeverMovesIsRetriedEveryFewSweepsThenReportedFailedAndRetriedSlowly() throws Exception {
        roller.open("persistent://t/n/stuck", 5);
        roller.script.put("persistent://t/n/stuck", new ArrayList<>(Collections.nCopies(100_000,
                Behaviour.DOES_NOT_TAKE)));
        // rolls and scans so far, taken as each record is published (on the cutover's thread: no race with it)
        List<int[]> countsAtPublish = new CopyOnWriteArrayList<>();
        CutoverRunner r = new CutoverRunner(roller, true, () -> 1_000_000, scheduler, rec -> {
            countsAtPublish.add(new int[] {roller.rolls.size(), roller.scans.get()});
            published.add(rec);
        }, () -> "broker-1:8080", Clock.systemUTC(), 1);
        r.start(B_ACTIVE);
        int failedAt = -1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (int i = 0; failedAt < 0; i++) {
            BrokerCutoverRecord p = published.poll(30, TimeUnit.SECONDS);
            assertNotNull(p, "reported failed after " + CutoverRunner.MAX_SWEEPS + " sweeps");
            if (p.topicsFailed() > 0) {
                failedAt = i;
                assertEquals(1, p.topicsFailed());
                assertEquals(0, p.topicsMoved());
                assertFalse(p.done());
            }
            assertTrue(System.nanoTime() < deadline);
        }
        // until then: a scan per sweep, a roll at the start and at every fourth sweep (the give-up sweep's own roll
        // comes after its record)
        int[] atFailure = countsAtPublish.get(failedAt);
        int expectedRolls = CutoverRunner.MAX_SWEEPS / CutoverRunner.RETRY_EVERY_SWEEPS;
        assertTrue(Math.abs(atFailure[0] - expectedRolls) <= 1, "rolls " + atFailure[0] + ", " + expectedRolls
                + " expected");
        // (the start looks at the open ledgers once or twice: its scan, and the count in its log line)
        assertTrue(atFailure[1] - CutoverRunner.MAX_SWEEPS >= 1 && atFailure[1] - CutoverRunner.MAX_SWEEPS <= 2,
                "one scan per sweep: " + atFailure[1] + " scans for " + CutoverRunner.MAX_SWEEPS + " sweeps");

        // then every twentieth sweep looks again, and rolls again: at most one scan per 20 ms of 1 ms sweeps
        long from = System.nanoTime();
        int scans0 = roller.scans.get();
        int rolls0 = roller.rolls.size();
        Thread.sleep(400);
        int least = scans0 + 2; // two more scans, however slow the machine: the ratio below needs some
        io.bcswitch.concurrent.TestWaits.until("two scans after the give-up point", () -> roller.scans.get() >= least);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - from);
        int scans = roller.scans.get() - scans0;
        int rolls = roller.rolls.size() - rolls0;
        assertTrue(scans <= elapsedMillis / CutoverRunner.SLOW_EVERY_SWEEPS + 2, "scans in " + elapsedMillis
                + " ms: " + scans);
        assertTrue(Math.abs(rolls - scans) <= 1, "a roll per scan once failed: " + rolls + " rolls, " + scans
                + " scans");
        assertTrue(r.running());
        r.close();
    }

    @Test
    void ledgerZeroOfTheOldClusterIsMovedToo() throws Exception {
        roller.open("persistent://t/n/first-ever", 0);
        runner(true, 100).start(B_ACTIVE);
        BrokerCutoverRecord last = awaitFinished(FINISH_MILLIS).stream().reduce((x, y) -> y).orElseThrow();
        assertEquals(1, last.topicsMoved());
        assertEquals(List.of("persistent://t/n/first-ever"), roller.rolls);
    }

    @Test
    void aDisabledCutoverIsReplacedByTheNextSwitchsLikeAnyOther() throws Exception {
        roller.open("persistent://t/n/on-a", 5);
        CutoverRunner r = runner(false, 100);
        r.start(B_ACTIVE);
        BrokerCutoverRecord first = published.poll(2, TimeUnit.SECONDS);
        assertNotNull(first);
        assertEquals(1, first.topicsFailed());
        // back to a: the ledger on a writes where it should
        r.start(new Ownership(B_ACTIVE.ranges().with(new IdRange("a", 2L << 32, 2, 0)), "a", 2));
        BrokerCutoverRecord last = awaitFinished(FINISH_MILLIS).stream().reduce((x, y) -> y).orElseThrow();
        assertEquals(2L, last.appliedEpoch());
        assertEquals(0, last.topicsTotal());
        assertTrue(roller.rolls.isEmpty());
    }
}
