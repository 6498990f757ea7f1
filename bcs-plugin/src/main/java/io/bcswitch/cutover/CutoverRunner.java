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
 * Bounded cutover after a switch: every managed ledger on this broker that is writing a ledger owned
 * by another cluster is rolled over, at most {@code topicsPerSecond} per second, so that its next
 * ledger is created on the active cluster. Ledgers whose roll raced with something else (a roll or a
 * ledger creation already in flight at switch time) are swept again until all write to the active
 * cluster or the sweep limit is reached. Runs on one scheduler thread; a newer switch replaces a
 * running cutover.
 */
public class CutoverRunner implements CutoverTrigger, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CutoverRunner.class);
    static final long SWEEP_INTERVAL_MS = 250;
    static final int MAX_SWEEPS = (int) (60_000 / SWEEP_INTERVAL_MS);
    /** A roll that did not take is tried again after this many sweeps (about a second). */
    static final int RETRY_EVERY_SWEEPS = 4;

    private final TopicRoller roller;
    private final boolean enabled;
    private final double topicsPerSecond;
    private final ScheduledExecutorService scheduler;
    private final Consumer<BrokerCutoverRecord> progress;
    private final java.util.function.Supplier<String> brokerId;
    private final Clock clock;
    private volatile Run current;

    public CutoverRunner(TopicRoller roller, boolean enabled, double topicsPerSecond,
                         ScheduledExecutorService scheduler, Consumer<BrokerCutoverRecord> progress,
                         java.util.function.Supplier<String> brokerId, Clock clock) {
        this.roller = roller;
        this.enabled = enabled;
        this.topicsPerSecond = topicsPerSecond;
        this.scheduler = scheduler;
        this.progress = progress;
        this.brokerId = brokerId;
        this.clock = clock;
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
        private final Set<String> toMove = new HashSet<>();
        private final Set<String> moved = new HashSet<>();
        private final Map<String, Integer> attempts = new HashMap<>();
        private final Deque<String> queue = new ArrayDeque<>();
        private int failed;
        private int sweeps;
        private long finishedAt;
        private ScheduledFuture<?> rollTask;
        private ScheduledFuture<?> sweepTask;
        private volatile boolean cancelled;

        Run(Ownership ownership) {
            this.ownership = ownership;
        }

        void begin() {
            for (TopicRoller.OpenLedger l : roller.openLedgers()) {
                if (needsMove(l.currentLedgerId())) {
                    toMove.add(l.name());
                    queue.add(l.name());
                }
            }
            log.info("bookie-cluster={} epoch={} cutover: {} of {} open ledgers write to another cluster{}",
                    ownership.activeCluster(), ownership.activeEpoch(), toMove.size(), roller.openLedgers().size(),
                    enabled ? "" : " (cutoverEnabled=false: they move at their next normal rollover)");
            if (!enabled) {
                failed = toMove.size();
                finishedAt = clock.millis();
                publish();
                return;
            }
            publish();
            long periodMicros = Math.max(1L, (long) (1_000_000 / topicsPerSecond));
            rollTask = scheduler.scheduleAtFixedRate(this::rollNext, 0, periodMicros, TimeUnit.MICROSECONDS);
            sweepTask = scheduler.scheduleWithFixedDelay(this::sweep, SWEEP_INTERVAL_MS, SWEEP_INTERVAL_MS,
                    TimeUnit.MILLISECONDS);
        }

        private boolean needsMove(long ledgerId) {
            return ledgerId >= 0 && !ownership.owner(ledgerId).map(ownership.activeCluster()::equals).orElse(false);
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
                f = roller.roll(name);
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
                } else {
                    log.info("bookie-cluster={} epoch={} ledger-name={} cutover by {}", ownership.activeCluster(),
                            ownership.activeEpoch(), name, how);
                }
            });
        }

        /** Re-checks every ledger still to move; queues again the ones whose roll did not take. */
        private void sweep() {
            if (cancelled) {
                return;
            }
            try {
                sweepOnce();
            } catch (RuntimeException e) {
                log.warn("bookie-cluster={} epoch={} cutover sweep failed (will retry): {}",
                        ownership.activeCluster(), ownership.activeEpoch(), e.toString());
                if (sweeps >= MAX_SWEEPS) {
                    finish(toMove.size() - moved.size());
                }
            }
        }

        private void sweepOnce() {
            sweeps++;
            List<String> pending = new ArrayList<>();
            for (String name : toMove) {
                if (moved.contains(name)) {
                    continue;
                }
                long id = roller.currentLedgerId(name);
                if (id >= 0 && !needsMove(id)) {
                    moved.add(name);
                } else if (id < 0 && roller.openLedgers().stream().noneMatch(l -> l.name().equals(name))) {
                    moved.add(name); // closed or unloaded: its next ledger will be created on the active cluster
                } else {
                    pending.add(name);
                }
            }
            for (String name : pending) {
                if (!queue.contains(name) && sweeps % RETRY_EVERY_SWEEPS == 0) {
                    queue.add(name); // a roll that lost a race is tried again, not hammered
                }
            }
            if (pending.isEmpty() || sweeps >= MAX_SWEEPS) {
                finish(pending.size());
            } else {
                publish();
            }
        }

        private void finish(int notMoved) {
            failed = notMoved;
            finishedAt = clock.millis();
            rollTask.cancel(false);
            sweepTask.cancel(false);
            log.info("bookie-cluster={} epoch={} cutover finished in {} ms: {} moved, {} not moved",
                    ownership.activeCluster(), ownership.activeEpoch(), finishedAt - startedAt, moved.size(), notMoved);
            publish();
        }

        BrokerCutoverRecord record() {
            return new BrokerCutoverRecord(BrokerCutoverRecord.FORMAT_VERSION, brokerId.get(), ownership.activeEpoch(),
                    ownership.activeCluster(), toMove.size(), moved.size(), failed, startedAt, finishedAt);
        }

        private void publish() {
            try {
                progress.accept(record());
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
