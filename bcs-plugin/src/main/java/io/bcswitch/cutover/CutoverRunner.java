package io.bcswitch.cutover;

import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.routing.Ownership;
import io.bcswitch.switching.CutoverTrigger;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounded cutover after a switch: every managed ledger on this broker that is writing a ledger owned by another
 * cluster, or whose cursors write their positions to one, is rolled over, at most {@code topicsPerSecond} per
 * second, so that its next ledger is created on the active cluster.
 *
 * <p>Every sweep looks at all the broker's open ledgers again, not only at the ones found at the start: a topic
 * that was loading, or creating a ledger, when the switch arrived gets its new ledger on the old cluster after the
 * cutover started. The cutover is finished (and status may say complete) only when a sweep finds no open ledger
 * and no cursor ledger on another cluster and no ledger creation in flight there. A ledger that will not roll is
 * retried about once a second; after {@link #MAX_SWEEPS} sweeps it is reported as failed and retried every few
 * seconds, never given up. With {@code cutoverEnabled=false} nothing is rolled, but the same check decides when
 * the cutover is over (ledgers then move at their normal rollover). Runs on one scheduler thread; a newer switch
 * replaces a running cutover.
 */
public class CutoverRunner implements CutoverTrigger, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CutoverRunner.class);
    static final long SWEEP_INTERVAL_MS = 250;
    static final int MAX_SWEEPS = (int) (60_000 / SWEEP_INTERVAL_MS);
    /** A roll that did not take is tried again after this many sweeps (about a second). */
    static final int RETRY_EVERY_SWEEPS = 4;
    /** After {@link #MAX_SWEEPS}, only every this many sweeps does anything (about every 5 s). */
    static final int SLOW_EVERY_SWEEPS = 20;

    private final TopicRoller roller;
    private final boolean enabled;
    private final java.util.function.DoubleSupplier topicsPerSecond;
    private final ScheduledExecutorService scheduler;
    private final Consumer<BrokerCutoverRecord> progress;
    private final java.util.function.Supplier<String> brokerId;
    private final Clock clock;
    private final long sweepMillis;
    private volatile Run current;

    public CutoverRunner(TopicRoller roller, boolean enabled, double topicsPerSecond,
                         ScheduledExecutorService scheduler, Consumer<BrokerCutoverRecord> progress,
                         java.util.function.Supplier<String> brokerId, Clock clock) {
        this(roller, enabled, () -> topicsPerSecond, scheduler, progress, brokerId, clock);
    }

    /** @param topicsPerSecond the pace now: read before every roll, so a change applies to a cutover under way */
    public CutoverRunner(TopicRoller roller, boolean enabled, java.util.function.DoubleSupplier topicsPerSecond,
                         ScheduledExecutorService scheduler, Consumer<BrokerCutoverRecord> progress,
                         java.util.function.Supplier<String> brokerId, Clock clock) {
        this(roller, enabled, topicsPerSecond, scheduler, progress, brokerId, clock, SWEEP_INTERVAL_MS);
    }

    /**
     * @param sweepMillis how often the open ledgers are looked at again ({@link #SWEEP_INTERVAL_MS} in a broker); the
     *                    retry and give-up points are counted in sweeps, so they scale with it
     */
    public CutoverRunner(TopicRoller roller, boolean enabled, java.util.function.DoubleSupplier topicsPerSecond,
                         ScheduledExecutorService scheduler, Consumer<BrokerCutoverRecord> progress,
                         java.util.function.Supplier<String> brokerId, Clock clock, long sweepMillis) {
        this.roller = roller;
        this.enabled = enabled;
        this.topicsPerSecond = topicsPerSecond;
        this.scheduler = scheduler;
        this.progress = progress;
        this.brokerId = brokerId;
        this.clock = clock;
        this.sweepMillis = sweepMillis;
    }

    private long period() {
        return Math.max(1L, (long) (1_000_000_000L / topicsPerSecond.getAsDouble()));
    }

    @Override
    public void start(Ownership ownership) {
        scheduler.execute(() -> {
            if (current != null) {
                current.cancel();
            }
            current = new Run(ownership);
            current.begin();
        });
    }

    /** Latest progress of this broker (for tests and status). */
    public Optional<BrokerCutoverRecord> lastProgress() {
        Run r = current;
        return r == null ? Optional.empty() : Optional.of(r.record());
    }

    /** Whether a cutover runs now: some open ledger of this broker still writes to another cluster. */
    public boolean running() {
        Run r = current;
        return r != null && !r.finished && !r.cancelled;
    }

    @Override
    public void close() {
        scheduler.execute(() -> {
            if (current != null) {
                current.cancel();
            }
        });
    }

    private final class Run {
        private final Ownership ownership;
        private final long startedAt = clock.millis();
        /** every managed ledger found writing (or with a cursor writing) to another cluster since the start */
        private final Set<String> found = new HashSet<>();
        private final Set<String> moved = new HashSet<>();
        private final Map<String, Integer> attempts = new HashMap<>();
        private final Deque<String> queue = new ArrayDeque<>();
        private List<String> pending = List.of();
        private int createsElsewhere;
        private int failed;
        private int sweeps;
        private long finishedAt;
        private volatile boolean finished;
        private ScheduledFuture<?> rollTask;
        private long periodNanos;
        /** when the next roll is due ({@link System#nanoTime}) */
        private long nextRollDue;
        private ScheduledFuture<?> sweepTask;
        private BrokerCutoverRecord lastPublished;
        private volatile boolean cancelled;

        Run(Ownership ownership) {
            this.ownership = ownership;
        }

        void begin() {
            scan();
            queue.addAll(pending);
            log.info("bookie-cluster={} epoch={} cutover: {} of {} open ledgers write to another cluster{}",
                    ownership.activeCluster(), ownership.activeEpoch(), pending.size(), roller.openLedgers().size(),
                    enabled ? "" : " (cutoverEnabled=false: they move at their next normal rollover)");
            if (pending.isEmpty() && createsElsewhere == 0) {
                finish();
                return;
            }
            if (!enabled) {
                failed = pending.size();
            }
            publish();
            if (enabled) {
                periodNanos = period();
                nextRollDue = System.nanoTime();
                rollTask = scheduler.schedule(this::rollPaced, 0, TimeUnit.NANOSECONDS);
            }
            sweepTask = scheduler.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis,
                    TimeUnit.MILLISECONDS);
        }

        private boolean needsMove(long ledgerId) {
            return ledgerId >= 0 && !ownership.owner(ledgerId).map(ownership.activeCluster()::equals).orElse(false);
        }

        /** Looks at every open ledger of the broker: which still write (or have a cursor writing) elsewhere. */
        private void scan() {
            List<String> now = new ArrayList<>();
            Set<String> open = new HashSet<>();
            for (TopicRoller.OpenLedger l : roller.openLedgers()) {
                open.add(l.name());
                if (needsMove(l.currentLedgerId()) || l.cursorLedgers().stream().anyMatch(this::needsMove)) {
                    now.add(l.name());
                    found.add(l.name());
                    moved.remove(l.name());
                } else if (found.contains(l.name())) {
                    moved.add(l.name());
                }
            }
            for (String name : found) {
                if (!open.contains(name)) {
                    moved.add(name); // closed or unloaded: its next ledgers will be created on the active cluster
                }
            }
            pending = now;
            createsElsewhere = roller.createsInFlightOutside(ownership.activeCluster());
        }

        /**
         * One roll, then the next one period after this one was due, but never sooner than half a period after this
         * one started. When this thread was held up (a long sweep, a roll that waited for a topic's lock, a pause),
         * the pace restarts from the late roll instead of catching up: a fixed-rate schedule would run every missed
         * roll back to back, and a dozen topics creating their ledgers at the same moment is the latency spike the
         * pace is there to avoid.
         */
        private void rollPaced() {
            if (cancelled || finished) {
                return;
            }
            long started = System.nanoTime();
            try {
                rollNext();
            } finally {
                reschedule(started);
            }
        }

        private void reschedule(long started) {
            periodNanos = period();
            nextRollDue += periodNanos;
            if (nextRollDue - started < periodNanos / 2) {
                nextRollDue = started + periodNanos;
            }
            rollTask = scheduler.schedule(this::rollPaced, Math.max(0, nextRollDue - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
        }

        private void rollNext() {
            if (cancelled) {
                return;
            }
            String name = queue.poll();
            if (name == null) {
                return;
            }
            attempts.merge(name, 1, Integer::sum);
            java.util.concurrent.CompletableFuture<TopicRoller.RollMethod> f;
            try {
                f = needsMove(roller.currentLedgerId(name)) ? roller.roll(name)
                        : java.util.concurrent.CompletableFuture.completedFuture(TopicRoller.RollMethod.SKIPPED);
                int cursors = roller.rollCursors(name, this::needsMove);
                if (cursors > 0) {
                    log.info("bookie-cluster={} epoch={} ledger-name={} rolled {} cursor ledger(s) over",
                            ownership.activeCluster(), ownership.activeEpoch(), name, cursors);
                }
            } catch (RuntimeException e) {
                f = java.util.concurrent.CompletableFuture.failedFuture(e);
            }
            f.whenComplete((how, e) -> {
                if (e != null) {
                    log.warn("bookie-cluster={} epoch={} ledger-name={} rollover failed: {}",
                            ownership.activeCluster(), ownership.activeEpoch(), name, e.toString());
                } else if (how != TopicRoller.RollMethod.SKIPPED) {
                    log.info("bookie-cluster={} epoch={} ledger-name={} cutover by {}", ownership.activeCluster(),
                            ownership.activeEpoch(), name, how);
                }
            });
        }

        /** Looks again at every open ledger; queues again the ones whose roll did not take. */
        private void sweep() {
            if (cancelled) {
                return;
            }
            sweeps++;
            if (sweeps > MAX_SWEEPS && sweeps % SLOW_EVERY_SWEEPS != 0) {
                return;
            }
            try {
                scan();
            } catch (RuntimeException e) {
                log.warn("bookie-cluster={} epoch={} cutover sweep failed (will retry): {}",
                        ownership.activeCluster(), ownership.activeEpoch(), e.toString());
                return;
            }
            if (pending.isEmpty() && createsElsewhere == 0) {
                finish();
                return;
            }
            boolean slow = sweeps >= MAX_SWEEPS;
            if (enabled) {
                for (String name : pending) {
                    boolean firstTime = !attempts.containsKey(name);
                    if (!queue.contains(name) && (firstTime || slow || sweeps % RETRY_EVERY_SWEEPS == 0)) {
                        queue.add(name); // a roll that lost a race is tried again, not hammered
                    }
                }
            }
            failed = !enabled || slow ? pending.size() : 0;
            if (sweeps == MAX_SWEEPS) {
                log.warn("bookie-cluster={} epoch={} cutover: {} ledger(s) still write to another cluster after {} s "
                        + "({}), {} creation(s) in flight there; still trying", ownership.activeCluster(),
                        ownership.activeEpoch(), pending.size(), MAX_SWEEPS * sweepMillis / 1000,
                        pending.subList(0, Math.min(5, pending.size())), createsElsewhere);
            }
            publish();
        }

        private void finish() {
            failed = 0;
            finished = true;
            finishedAt = clock.millis();
            if (rollTask != null) {
                rollTask.cancel(false);
            }
            if (sweepTask != null) {
                sweepTask.cancel(false);
            }
            log.info("bookie-cluster={} epoch={} cutover finished in {} ms: {} moved; no open ledger of this broker "
                    + "writes to another cluster", ownership.activeCluster(), ownership.activeEpoch(),
                    finishedAt - startedAt, moved.size());
            publish();
        }

        BrokerCutoverRecord record() {
            return new BrokerCutoverRecord(BrokerCutoverRecord.FORMAT_VERSION, brokerId.get(), ownership.activeEpoch(),
                    ownership.activeCluster(), found.size(), moved.size(), failed, startedAt, finishedAt);
        }

        private void publish() {
            BrokerCutoverRecord r = record();
            if (r.equals(lastPublished)) {
                return;
            }
            lastPublished = r;
            try {
                progress.accept(r);
            } catch (RuntimeException e) {
                log.warn("Cannot publish cutover progress: {}", e.toString());
            }
        }

        void cancel() {
            cancelled = true;
            if (rollTask != null) {
                rollTask.cancel(false);
            }
            if (sweepTask != null) {
                sweepTask.cancel(false);
            }
        }
    }
}
