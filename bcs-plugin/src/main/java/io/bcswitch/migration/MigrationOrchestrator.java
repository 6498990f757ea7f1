package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import io.bcswitch.switching.SwitchResult;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the small, closed metadata ledgers (cursor, schema, compacted-topic) off the clusters a switch left
 * behind, as one visible state machine per switch (its phases and the only moves between them are in
 * {@link Phase}): PENDING (every broker's cutover) → BUILD (copy and verify onto the active cluster) → PROMOTE
 * (make each verified copy the ledger's home in the relocation table, batches announced by the relocation epoch;
 * the next batch waits until every live broker has applied the last one) → DONE or DONE_WITH_FAILURES; and
 * ROLLING_BACK → ROLLED_BACK when the operator undoes the switch, after which the copies are deleted. Data ledgers
 * are never copied: they stay where they are until retention removes them.
 *
 * <p>One driver per broker runs everything one step at a time: the periodic pass and the operator's actions
 * (retry, rollback) are queued onto it, never run beside it. Across brokers, only the broker holding the
 * ephemeral lock {@code <configPath>/orchestrator-lock} acts; the broker that accepted the switch starts at once,
 * any other takes over a migration whose broker is gone on its next pass. Every state write checks the stored
 * owner, so a broker that lost the lock (its session expired) stops at its next step. Every step is idempotent.
 *
 * <p>Nothing is ever deleted on a guess: a rolled-back copy is deleted only after every live broker routes
 * without it, never while its cluster is active, and each id is checked again right before: a ledger that is now
 * any relocation's home, or that the cluster itself issued, is never deleted.
 */
public final class MigrationOrchestrator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);
    /** Other brokers leave a fresh switch to the broker that accepted it for this long. */
    static final long START_GRACE_MILLIS = 10_000;
    /** How long PROMOTE waits, after each batch, for every live broker to apply the batch's relocation epoch. */
    static final long APPLY_WAIT_MILLIS = 30_000;
    /** Brokers apply an epoch within milliseconds of its notification: polled often, the wait ends promptly. */
    private static final long APPLY_POLL_MILLIS = 100;
    /** An unfinished rollback is resumed by the periodic pass at most this often. */
    static final long ROLLBACK_RESUME_MILLIS = 30_000;
    /** How long an operator's rollback waits for the orchestrator lock (the running pass stops within seconds). */
    private static final long LOCK_WAIT_MILLIS = 30_000;
    /** A failed lock release is tried again this much later (a metadata store hiccup is usually over by then). */
    private static final long UNLOCK_RETRY_MILLIS = 1_000;
    /** A request waiting for another broker's pass asks for the lock this often (a pass's step takes longer). */
    private static final long LOCK_POLL_MILLIS = 200;
    /** {@link #await} reads the state this often: tests and tools wait for phases that take seconds. */
    private static final long AWAIT_POLL_MILLIS = 100;

    /** A finished rollback: its state, and the switch back (null when a later switch had been made already). */
    public record RollbackOutcome(MigrationState state, SwitchResult switched) {
    }

    /**
     * The latest switch and its migration's state as this broker last read or wrote them (null: not started), for
     * metrics, which never read the metadata store on a scrape. Every broker's pass refreshes it every period; the
     * broker running the migration also with each state write.
     */
    public record Seen(SwitchDirective directive, MigrationState state) {
    }

    /** Switches the brokers back for a rollback; completes with the new switch. */
    @FunctionalInterface
    public interface SwitchBack {
        CompletableFuture<SwitchResult> switchTo(String cluster);
    }

    private final RegistryStore registry;
    /** Held by the broker whose driver runs a pass: one pass at a time across the brokers. */
    private final io.bcswitch.registry.RegistryLock lock;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final SwitchConfig.Migration config;
    private final Supplier<String> brokerId;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final MigrationMetrics metrics;
    private final ByteRateLimiter limiter;
    private final long applyWaitNanos;
    private final SwitchBack switchBack;
    private final io.bcswitch.tuning.LiveTuning tuning;
    private final Set<Long> acceptedHere = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong lockAcquisitions = new java.util.concurrent.atomic.AtomicLong();
    /** Tells this process's acquisitions from those of an earlier run of the same broker. */
    private final String lockNonce = Long.toHexString(new java.util.Random().nextLong());
    private volatile Seen seen;
    private final Object driverLock = new Object();
    private CompletableFuture<Void> driverTail = CompletableFuture.completedFuture(null);
    private CompletableFuture<Void> queuedPass;
    private volatile ScheduledFuture<?> ticker;
    private volatile boolean closed;

    /**
     * With broker.conf's copy rate and concurrency, never changed at run time.
     *
     * @param budgets the copy rate's byte budget (the adapter's: Pulsar's token bucket)
     */
    public MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                                 SwitchConfig.Migration config, Supplier<String> brokerId,
                                 ScheduledExecutorService scheduler, ByteBudget.Factory budgets, Clock clock,
                                 MigrationMetrics metrics, SwitchBack switchBack) {
        this(registry, inventory, copier, config, brokerId, scheduler, budgets, clock, metrics, switchBack,
                APPLY_WAIT_MILLIS);
    }

    /**
     * @param tuning the copy rate and concurrency now (an operator may change them while a migration runs; both are
     *               read again as the copying goes on)
     */
    public MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                                 SwitchConfig.Migration config, io.bcswitch.tuning.LiveTuning tuning,
                                 Supplier<String> brokerId, ScheduledExecutorService scheduler,
                                 ByteBudget.Factory budgets, Clock clock,
                                 MigrationMetrics metrics, SwitchBack switchBack) {
        this(registry, inventory, copier, config, tuning, brokerId, scheduler, budgets, clock, metrics, switchBack,
                APPLY_WAIT_MILLIS);
    }

    MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                          SwitchConfig.Migration config, Supplier<String> brokerId, ScheduledExecutorService scheduler,
                          ByteBudget.Factory budgets, Clock clock, MigrationMetrics metrics, SwitchBack switchBack, long applyWaitMillis) {
        this(registry, inventory, copier, config, new io.bcswitch.tuning.LiveTuning(
                new io.bcswitch.tuning.LiveTuning.Values(config.bytesPerSecond(), config.concurrency(), 1)), brokerId,
                scheduler, budgets, clock, metrics, switchBack, applyWaitMillis);
    }

    MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                          SwitchConfig.Migration config, io.bcswitch.tuning.LiveTuning tuning,
                          Supplier<String> brokerId, ScheduledExecutorService scheduler,
                          ByteBudget.Factory budgets, Clock clock, MigrationMetrics metrics, SwitchBack switchBack, long applyWaitMillis) {
        this.tuning = tuning;
        this.registry = registry;
        this.lock = registry.lock(registry.paths().orchestratorLock());
        this.inventory = inventory;
        this.copier = copier;
        this.config = config;
        this.brokerId = brokerId;
        this.scheduler = scheduler;
        this.clock = clock;
        this.metrics = metrics;
        this.switchBack = switchBack;
        this.limiter = new ByteRateLimiter(tuning::migrationBytesPerSecond, budgets, scheduler);
        this.applyWaitNanos = TimeUnit.MILLISECONDS.toNanos(applyWaitMillis);
    }

    // ---- what a run needs ----

    RegistryStore registry() {
        return registry;
    }

    LedgerInventory inventory() {
        return inventory;
    }

    LedgerCopier copier() {
        return copier;
    }

    SwitchConfig.Migration config() {
        return config;
    }

    MigrationMetrics metrics() {
        return metrics;
    }

    /** Ledgers copied at the same time, now. */
    int concurrency() {
        return tuning.migrationConcurrency();
    }

    ByteRateLimiter limiter() {
        return limiter;
    }

    String me() {
        return brokerId.get();
    }

    long now() {
        return clock.millis();
    }

    boolean closed() {
        return closed;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    CompletableFuture<Void> delay(long millis) {
        CompletableFuture<Void> later = new CompletableFuture<>();
        scheduler.schedule(() -> later.complete(null), millis, TimeUnit.MILLISECONDS);
        return later;
    }

    // ---- the driver ----

    /** Checks for work every {@code periodMillis} (from the first call on; later calls change nothing). */
    public synchronized void start(long periodMillis) {
        if (ticker == null) {
            ticker = scheduler.scheduleWithFixedDelay(this::tick, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** This broker accepted switch {@code epoch}: it runs its migration without waiting for the grace period. */
    public void switchAccepted(long epoch) {
        acceptedHere.add(epoch);
        tick();
    }

    /** Runs {@code action} on the driver, after everything queued before it. */
    private <T> CompletableFuture<T> enqueue(Supplier<CompletableFuture<T>> action) {
        synchronized (driverLock) {
            CompletableFuture<T> result = driverTail.thenCompose(v -> {
                if (closed) {
                    return CompletableFuture.<T>failedFuture(RegistryException.unavailable(
                            "the migration driver of broker " + me() + " is closed"));
                }
                try {
                    return action.get();
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                }
            });
            driverTail = result.handle((x, e) -> null);
            return result;
        }
    }

    /**
     * Queues one pass (at most one is queued at a time): finish an interrupted rollback, run or resume the latest
     * switch's migration, then deletions that are due. Completes when that pass has run. A pass counts as queued
     * from before it is handed to the driver until it starts, so that whatever asks for a pass after one started
     * (an operator's retry, finished inside that pass's completion) always gets a pass of its own.
     */
    public CompletableFuture<Void> tick() {
        synchronized (driverLock) {
            if (queuedPass != null) {
                return queuedPass;
            }
            CompletableFuture<Void> queued = new CompletableFuture<>();
            queuedPass = queued;
            enqueue(() -> {
                synchronized (driverLock) {
                    if (queuedPass == queued) {
                        queuedPass = null; // started: a tick from now on queues the next pass
                    }
                }
                return pass();
            }).whenComplete((v, e) -> {
                if (e != null && !closed) {
                    log.warn("migration pass failed on broker {} (will retry): {}", me(), e.toString());
                }
                synchronized (driverLock) {
                    if (queuedPass == queued) {
                        queuedPass = null; // never started (the driver is closed)
                    }
                }
                if (e != null) {
                    queued.completeExceptionally(e);
                } else {
                    queued.complete(null);
                }
            });
            return queued;
        }
    }

    private CompletableFuture<Void> pass() {
        // cheap reads every pass (lock, directive, latest state); the rest only when there is work
        return releaseLeftLock().thenCompose(x -> registry.readDirective()).thenCompose(directive -> {
            if (!directive.present()) {
                return CompletableFuture.completedFuture(null);
            }
            SwitchDirective d = directive.value();
            return readState(d.epoch()).thenCompose(state -> {
                seen = new Seen(d, state.present() ? state.value() : null);
                boolean work = !state.present() || !state.value().phase().terminal();
                if (work && state.present() && state.value().phase() == Phase.ROLLING_BACK) {
                    return resumeRollbacks();
                }
                if (!work) {
                    return states().thenCompose(this::housekeeping);
                }
                if (!state.present() && !acceptedHere.contains(d.epoch())
                        && clock.millis() - d.ts() < START_GRACE_MILLIS) {
                    return CompletableFuture.completedFuture(null);
                }
                String owner = state.present() ? state.value().owner() : null;
                return ownerAlive(owner).thenCompose(alive -> {
                    if (alive && !owner.equals(me())) {
                        return CompletableFuture.<Void>completedFuture(null); // its broker is running it
                    }
                    return locked(() -> drive(d)).thenCompose(v -> states()).thenCompose(this::housekeeping);
                });
            });
        });
    }

    /** Rollbacks to finish, deletions that are due, copy lists nobody needs any more. */
    private CompletableFuture<Void> housekeeping(List<MigrationState> all) {
        boolean rollingBack = all.stream().anyMatch(s -> s.phase() == Phase.ROLLING_BACK);
        boolean deletions = all.stream().anyMatch(MigrationState::deletionsPending);
        if (rollingBack) {
            return resumeRollbacks();
        }
        return registry.copyEpochs().thenCompose(epochs -> {
            long latest = all.stream().mapToLong(MigrationState::switchEpoch).max().orElse(0);
            List<Long> unneeded = epochs.stream().filter(e -> e < latest && all.stream()
                    .noneMatch(s -> s.switchEpoch() == e && s.phase() == Phase.ROLLED_BACK)).toList();
            if (!deletions && unneeded.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            return locked(() -> processDeletions(all).thenCompose(v -> dropCopyLists(unneeded)));
        });
    }

    /** Whether {@code broker} is live (Pulsar's broker registry or the plugin's record). */
    private CompletableFuture<Boolean> ownerAlive(String broker) {
        if (broker == null) {
            return CompletableFuture.completedFuture(false);
        }
        return BrokerView.read(registry).thenApply(v -> v.live().contains(broker));
    }

    // ---- lock ----

    private CompletableFuture<Void> locked(Supplier<CompletableFuture<Void>> body) {
        return tryLocked(body).thenApply(ran -> null);
    }

    /**
     * Runs {@code body} holding the lock; completes with false (body not run) when another broker holds it. The
     * lock names this broker and this acquisition, and is released (awaited) before the result completes, so the
     * driver's next step never overlaps a release of this one.
     */
    private CompletableFuture<Boolean> tryLocked(Supplier<CompletableFuture<Void>> body) {
        String holder = lockPrefix() + lockAcquisitions.incrementAndGet() + "-" + lockNonce;
        return lock.tryAcquire(holder)
                .thenCompose(acquired -> {
                    if (!acquired) {
                        return CompletableFuture.completedFuture(false);
                    }
                    CompletableFuture<Void> ran;
                    try {
                        ran = body.get();
                    } catch (RuntimeException e) {
                        ran = CompletableFuture.failedFuture(e);
                    }
                    return ran.handle((v, e) -> e).thenCompose(e -> unlock(holder, 1).thenApply(x -> {
                        if (e != null) {
                            throw e instanceof java.util.concurrent.CompletionException c ? c
                                    : new java.util.concurrent.CompletionException(e);
                        }
                        return true;
                    }));
                });
    }

    private String lockPrefix() {
        return me() + "#";
    }

    /**
     * Passes run one at a time on this broker's driver and release the lock before they end, so between passes the
     * lock is never in use here: if it is this broker's, a release failed, and it is released now (other brokers
     * may be waiting for it).
     */
    private CompletableFuture<Void> releaseLeftLock() {
        return lock.releaseIf(holder -> holder.startsWith(lockPrefix())).thenAccept(released -> {
            if (released) {
                log.info("released the migration lock an earlier pass of broker {} left behind", me());
            }
        }).exceptionally(e -> null);
    }

    /**
     * Deletes the lock if it is still this acquisition's (it may have expired with our session and been retaken); a
     * failed delete is retried {@code retries} more time(s) a second later, and otherwise left to this broker's next
     * pass ({@link #releaseLeftLock}). Never fails.
     */
    private CompletableFuture<Void> unlock(String holder, int retries) {
        return lock.release(holder)
                .handle((v, x) -> x)
                .thenCompose(x -> {
                    if (x == null) {
                        return CompletableFuture.completedFuture(null);
                    }
                    if (retries > 0 && !closed) {
                        return delay(UNLOCK_RETRY_MILLIS).thenCompose(d -> unlock(holder, retries - 1));
                    }
                    log.warn("cannot release the migration lock {} yet (the next pass does): {}", lock.path(),
                            x.toString());
                    return CompletableFuture.completedFuture(null);
                });
    }

    /** Holds the lock for {@code body}, waiting (bounded) while another broker's pass still holds it. */
    private CompletableFuture<Void> lockedWaiting(Supplier<CompletableFuture<Void>> body, long deadlineNanos) {
        return tryLocked(body).thenCompose(ran -> {
            if (ran) {
                return CompletableFuture.completedFuture(null);
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                return CompletableFuture.failedFuture(RegistryException.unavailable("another broker holds the "
                        + "migration lock; the rollback is recorded and will be finished by the broker that runs "
                        + "the migration, or ask again"));
            }
            return delay(LOCK_POLL_MILLIS).thenCompose(v -> lockedWaiting(body, deadlineNanos));
        });
    }

    // ---- state ----

    private String statePath(long epoch) {
        return registry.paths().orchestrator(epoch);
    }

    public CompletableFuture<Versioned<MigrationState>> readState(long epoch) {
        return registry.read(statePath(epoch), MigrationState.class);
    }

    /** What this broker last saw of the latest switch and its migration; empty before its first pass. */
    public Optional<Seen> lastSeen() {
        return Optional.ofNullable(seen);
    }

    /** {@code s} was just written or read by this broker's run: what it last saw, if it is of the same switch. */
    private MigrationState saw(MigrationState s) {
        Seen now = seen;
        if (s != null && now != null && now.directive().epoch() == s.switchEpoch()) {
            seen = new Seen(now.directive(), s);
        }
        return s;
    }

    /** Latest switch's migration state, if any. */
    public CompletableFuture<Optional<MigrationState>> latest() {
        return registry.readDirective().thenCompose(d -> d.present()
                ? readState(d.value().epoch()).thenApply(v -> Optional.ofNullable(v.value()))
                : CompletableFuture.completedFuture(Optional.empty()));
    }

    /**
     * Completes with switch {@code epoch}'s stored state once {@code condition} holds for it (checked every
     * {@value #AWAIT_POLL_MILLIS} ms, whoever wrote it); for tests and tools that must wait for a phase instead of
     * sleeping.
     */
    public CompletableFuture<MigrationState> await(long epoch, Predicate<MigrationState> condition) {
        return readState(epoch).thenCompose(s -> s.present() && condition.test(s.value())
                ? CompletableFuture.completedFuture(s.value())
                : closed ? CompletableFuture.failedFuture(new IllegalStateException("closed"))
                : delay(AWAIT_POLL_MILLIS).thenCompose(v -> await(epoch, condition)));
    }

    /**
     * Writes {@code change} of the stored state unless a run must stop (rolled back, superseded, or another broker
     * has taken the migration over: this one lost its lock, its metadata session expired while it was cut off):
     * completes with what is stored, so the caller sees when it must stop ({@link #goOn}).
     */
    CompletableFuture<MigrationState> persist(long epoch, UnaryOperator<MigrationState> change) {
        String mine = me();
        return registry.update(statePath(epoch), MigrationState.class, cur -> {
            if (cur.isEmpty() || cur.get().phase().stopsRuns() || !cur.get().owner().equals(mine)) {
                return Optional.empty();
            }
            return Optional.of(change.apply(cur.get()));
        }).thenApply(this::saw);
    }

    /** Whether this broker still runs the migration whose stored state is {@code s}. */
    boolean goOn(MigrationState s) {
        return !closed && !s.phase().terminal() && !s.phase().stopsRuns() && s.owner().equals(me());
    }

    /** Whether this broker still runs switch {@code epoch}'s migration, which is still the latest switch's. */
    CompletableFuture<Boolean> stillMine(long epoch) {
        return readState(epoch).thenCompose(st -> registry.readDirective().thenCompose(d -> {
            if (st.present() && !st.value().owner().equals(me())) {
                log.warn("switch epoch={} migration: broker {} has taken it over; this broker ({}) stops promoting",
                        epoch, st.value().owner(), me());
                return CompletableFuture.completedFuture(false);
            }
            if (st.present() && (st.value().phase().terminal() || st.value().phase().stopsRuns())) {
                log.info("switch epoch={} migration stops before promoting: {}", epoch, st.value().phase());
                return CompletableFuture.completedFuture(false);
            }
            if (d.present() && d.value().epoch() != epoch) {
                log.info("switch epoch={} migration stops before promoting: a newer switch was made", epoch);
                return transition(epoch, Set.of(Phase.PENDING, Phase.BUILD, Phase.PROMOTE), Phase.SUPERSEDED,
                        s -> s).thenApply(s -> false);
            }
            return CompletableFuture.completedFuture(true);
        }));
    }

    /**
     * Moves switch {@code epoch}'s stored migration from one of {@code from} to {@code to} (a move {@link Phase}
     * allows; anything else is a bug and fails), applying {@code and} too; completes with what is stored, which
     * the caller checks (another writer may have moved it first).
     */
    private CompletableFuture<MigrationState> transition(long epoch, Set<Phase> from, Phase to,
                                                         UnaryOperator<MigrationState> and) {
        return registry.update(statePath(epoch), MigrationState.class, cur -> cur
                .filter(s -> from.contains(s.phase()))
                .map(s -> and.apply(s.moveTo(to, clock.millis())))).thenApply(this::saw);
    }

    private CompletableFuture<List<MigrationState>> states() {
        return registry.listMigrationStates();
    }

    // ---- the phases of the latest switch's migration ----

    /** Takes the latest switch's migration over (under the lock) and runs the handler of its phase. */
    private CompletableFuture<Void> drive(SwitchDirective d) {
        long epoch = d.epoch();
        String target = d.target();
        MigrationState initial = MigrationState.start(epoch, target, me(), clock.millis());
        return registry.update(statePath(epoch), MigrationState.class, cur -> cur.isPresent()
                        && (cur.get().phase().stopsRuns() || cur.get().phase().terminal()) ? Optional.empty()
                        : Optional.of(cur.orElse(initial).edit().owner(me()).updatedAt(clock.millis()).build()))
                .thenCompose(s -> switch (s.phase()) {
                    case PENDING -> pending(epoch, target);
                    case BUILD, PROMOTE -> new MigrationRun(this, epoch, target).run(s);
                    default -> CompletableFuture.completedFuture(null);
                });
    }

    /** PENDING: waits until every live broker has applied the switch and finished its cutover. */
    private CompletableFuture<Void> pending(long epoch, String target) {
        return BrokerView.read(registry).thenCompose(brokers -> {
            if (!brokers.cutoverComplete(epoch)) {
                log.info("switch epoch={} migration to bookie-cluster={} waits for the cutover of broker(s) {}", epoch,
                        target, brokers.cutoverPending(epoch));
                return CompletableFuture.completedFuture(null);
            }
            return transition(epoch, Set.of(Phase.PENDING), Phase.BUILD, s -> s).thenCompose(s -> goOn(s)
                    && s.phase() == Phase.BUILD ? new MigrationRun(this, epoch, target).run(s)
                    : CompletableFuture.completedFuture(null));
        });
    }

    /**
     * Every PROMOTE run starts with an epoch that lists nothing, so that every broker re-reads the whole
     * table once: an interrupted run (this switch's or an earlier one's) may have stopped between its
     * compare-and-sets and the bump that lists them, and brokers otherwise re-read only what an epoch lists.
     */
    CompletableFuture<Void> announce(long epoch, RegistryView view) {
        if (view.relocations().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return registry.bumpRelocationEpoch(clock.millis(), null).thenCompose(re -> {
            log.info("switch epoch={} PROMOTE starts: brokers re-read the relocation table ({} relocation(s)), "
                    + "relocation epoch={}", epoch, view.relocations().size(), re);
            return awaitApplied(epoch, re);
        });
    }

    /**
     * Waits until every live broker routes with relocation epoch {@code re}, so that no broker falls more
     * than one batch behind the table; gives up waiting after the apply wait (a broker that is live but
     * stuck only slows PROMOTE down, and nothing it may read is deleted until it has caught up anyway).
     */
    CompletableFuture<Void> awaitApplied(long epoch, long re) {
        return awaitApplied(epoch, re, System.nanoTime() + applyWaitNanos);
    }

    private CompletableFuture<Void> awaitApplied(long epoch, long re, long deadlineNanos) {
        if (closed) {
            return CompletableFuture.completedFuture(null);
        }
        // asked for before reading, so that a broker applying the epoch while we read still wakes the wait below
        CompletableFuture<Void> applied = registry.nextChangeAtOrBelow(registry.paths().relocationApplied());
        return BrokerView.read(registry).whenComplete((b, e) -> {
            if (e != null) {
                applied.cancel(false);
            }
        }).thenCompose(brokers -> {
            List<String> behind = brokers.relocationPending(re);
            if (behind.isEmpty()) {
                applied.cancel(false);
                return CompletableFuture.completedFuture(null);
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                applied.cancel(false);
                log.warn("switch epoch={} PROMOTE goes on although broker(s) {} have not applied relocation epoch={} "
                        + "within {} s; nothing is deleted until they have", epoch, behind, re,
                        TimeUnit.NANOSECONDS.toSeconds(applyWaitNanos));
                return CompletableFuture.completedFuture(null);
            }
            // woken by a broker's applied record as soon as it is written, the poll being the safety net; the next
            // look runs on this orchestrator's thread, never on the metadata store's notification thread
            return CompletableFuture.anyOf(applied, delay(APPLY_POLL_MILLIS)).thenComposeAsync(v -> {
                applied.cancel(false);
                return awaitApplied(epoch, re, deadlineNanos);
            }, scheduler);
        });
    }

    // ---- operator actions ----

    /**
     * Runs switch {@code epoch}'s finished migration again on this broker (after the operator fixed what
     * made ledgers fail, collide or stay open): it re-plans from the inventory, so finished copies count
     * as present and only what is still on an old cluster is copied and promoted. Refused (409) while it
     * runs, and when the switch was rolled back or superseded.
     */
    public CompletableFuture<MigrationState> retry(long epoch) {
        // what the stored state already refuses is answered at once; only a re-run waits in the driver's queue for
        // the pass that holds the lock (which can wait 30 s per PROMOTE batch for a lagging broker), and checks again
        return readState(epoch).thenCompose(now -> {
            refuseUnlessFinished(epoch, now);
            return enqueue(() -> readState(epoch).thenCompose(cur -> {
                MigrationState s = refuseUnlessFinished(epoch, cur);
                return transition(epoch, Set.of(s.phase()), Phase.BUILD, x -> x.edit().owner(me()).build());
            }).thenApply(s -> {
                if (s.phase() != Phase.BUILD || !s.owner().equals(me())) {
                    throw RegistryException.conflict("the migration of switch epoch " + epoch + " changed meanwhile ("
                            + s.phase() + " on broker " + s.owner() + ")");
                }
                log.info("switch epoch={} migration to bookie-cluster={} runs again on broker {} (operator request)",
                        epoch, s.target(), me());
                acceptedHere.add(epoch);
                tick();
                return s;
            }));
        });
    }

    /** The finished migration {@code cur} holds; refuses (409) one that has not started or not finished. */
    private static MigrationState refuseUnlessFinished(long epoch, Versioned<MigrationState> cur) {
        if (!cur.present()) {
            throw RegistryException.conflict("the migration of switch epoch " + epoch + " has not started yet; "
                    + "it starts by itself once every broker has finished its cutover");
        }
        MigrationState s = cur.value();
        if (s.phase() != Phase.DONE && s.phase() != Phase.DONE_WITH_FAILURES) {
            throw RegistryException.conflict("the migration of switch epoch " + epoch + " is " + s.phase()
                    + (s.phase().terminal() || s.phase() == Phase.ROLLING_BACK ? "" : " on broker " + s.owner())
                    + "; only a finished migration (DONE or DONE_WITH_FAILURES) can be run again");
        }
        return s;
    }

    /**
     * Rollback of switch {@code epoch} (to {@code target}, back to {@code origin}): records the intent first
     * (ROLLING_BACK; a run on any broker stops at its next step), then, on this broker's driver holding the lock,
     * flips the switch's promotions back, switches the brokers back and marks it ROLLED_BACK. Each step is
     * idempotent: if one fails the intent stays, status shows why, and the rollback is finished by asking again
     * or by the next passes.
     */
    public CompletableFuture<RollbackOutcome> rollBack(long epoch, String target, String origin) {
        MigrationState none = MigrationState.start(epoch, target, me(), clock.millis());
        return registry.update(statePath(epoch), MigrationState.class, cur -> {
            MigrationState s = cur.orElse(none);
            if (s.phase() == Phase.ROLLING_BACK || s.phase() == Phase.ROLLED_BACK) {
                return Optional.empty(); // asked again: resume
            }
            if (!s.phase().canMove(Phase.ROLLING_BACK)) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " is " + s.phase()
                        + "; it cannot be rolled back");
            }
            if (s.originalsDeleted() > 0) {
                throw RegistryException.conflict("cleanup deleted " + s.originalsDeleted() + " original ledger(s) "
                        + "after switch epoch " + epoch + "; a rollback could not read them back");
            }
            return Optional.of(s.moveTo(Phase.ROLLING_BACK, clock.millis()).edit().rollback(origin, null, 0).build());
        }).thenCompose(s -> {
            if (s.phase() == Phase.ROLLED_BACK) {
                return rolledBackEarlier(s);
            }
            log.info("switch epoch={} rollback to bookie-cluster={} recorded; finishing it on broker {}", epoch,
                    s.rollbackTo(), me());
            return enqueue(() -> {
                CompletableFuture<RollbackOutcome> done = new CompletableFuture<>();
                lockedWaiting(() -> finishRollback(epoch).thenAccept(done::complete),
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LOCK_WAIT_MILLIS))
                        .whenComplete((v, e) -> {
                            if (e != null) {
                                done.completeExceptionally(e);
                            }
                        });
                return done;
            });
        });
    }

    /** Rollbacks whose finish failed or was interrupted, resumed (at most every {@link #ROLLBACK_RESUME_MILLIS}). */
    private CompletableFuture<Void> resumeRollbacks() {
        return states().thenCompose(all -> {
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            for (MigrationState s : all) {
                if (s.phase() == Phase.ROLLING_BACK && (s.rollbackError() == null
                        || clock.millis() - s.updatedAt() >= ROLLBACK_RESUME_MILLIS)) {
                    chain = chain.thenCompose(v -> locked(() -> finishRollback(s.switchEpoch())
                            .<Void>thenApply(x -> null).exceptionally(e -> null)));
                }
            }
            return chain;
        });
    }

    /**
     * The answer for a rollback another pass already finished (a background pass on any broker may take the lock
     * before the request's own finish runs): the switch back that pass made, read from the directive. That is the
     * directive right after the rolled-back one, from its target back to the cluster rolled back to; when a later
     * switch has replaced it, there is no switch back to report (null) and the status names the active cluster.
     * The precheck the switch back passed is not kept, so it is not reported.
     */
    private CompletableFuture<RollbackOutcome> rolledBackEarlier(MigrationState s) {
        return registry.readDirective().thenApply(d -> {
            boolean switchBack = d.present() && d.value().epoch() == s.switchEpoch() + 1
                    && d.value().origin().equals(s.target()) && d.value().target().equals(s.rollbackTo());
            return new RollbackOutcome(s, switchBack ? new SwitchResult(d.value(), null) : null);
        });
    }

    /** The rollback's steps, each idempotent; under the lock. Fails (the intent stays) when the switch back fails. */
    private CompletableFuture<RollbackOutcome> finishRollback(long epoch) {
        return readState(epoch).thenCompose(st -> {
            if (!st.present()) {
                throw RegistryException.conflict("no migration state for switch epoch " + epoch);
            }
            MigrationState s = st.value();
            if (s.phase() == Phase.ROLLED_BACK) {
                return rolledBackEarlier(s);
            }
            if (s.phase() != Phase.ROLLING_BACK) {
                throw RegistryException.conflict("switch epoch " + epoch + " is " + s.phase() + ", not ROLLING_BACK");
            }
            CompletableFuture<MigrationState> flipped = s.rollbackFlipEpoch() > 0
                    ? CompletableFuture.completedFuture(s) : flip(s).exceptionallyCompose(e -> {
                        String why = String.valueOf(Failures.unwrap(e).getMessage());
                        log.warn("switch epoch={} rollback: cannot route the promoted ledgers back yet (the rollback "
                                + "stays recorded and is finished when asked again, or by itself): {}", epoch, why);
                        return recordRollbackError(epoch, why, e);
                    });
            return flipped.thenCompose(f -> switchBackIfLatest(f)).thenCompose(sw -> transition(epoch,
                    Set.of(Phase.ROLLING_BACK), Phase.ROLLED_BACK, x -> x.edit().rollback(x.rollbackTo(), null,
                            x.rollbackFlipEpoch()).build())
                    .thenApply(done -> {
                        metrics.rolledBack(done.target());
                        log.info("switch epoch={} rolled back: promotions flipped back (relocation epoch={}), {} "
                                + "copy/copies on bookie-cluster={} to delete once every broker has applied it", epoch,
                                done.rollbackFlipEpoch(), done.pendingDeletionCount(), done.target());
                        return new RollbackOutcome(done, sw);
                    }));
        });
    }

    /**
     * Step 1: the switch's promotions are undone (each ledger's previous home is restored: its original, or the
     * copy an earlier switch promoted), announced by one relocation epoch, which the copies' deletion waits for.
     */
    private CompletableFuture<MigrationState> flip(MigrationState s) {
        long epoch = s.switchEpoch();
        return RegistryView.read(registry).thenCompose(view -> unpromote(epoch, s.target(), view)).thenCompose(u ->
                registry.readCopies(epoch).thenCompose(chunks -> {
                    Set<Long> copies = new TreeSet<>();
                    chunks.values().forEach(copies::addAll);
                    copies.addAll(s.built());
                    copies.addAll(s.pendingDeletions());
                    // copies an earlier version kept in the state go into the chunks, with the rest
                    List<Long> legacy = new ArrayList<>(s.built());
                    legacy.addAll(s.pendingDeletions());
                    legacy.removeIf(id -> chunks.values().stream().anyMatch(c -> c.contains(id)));
                    CompletableFuture<Void> folded = legacy.isEmpty() ? CompletableFuture.completedFuture(null)
                            : registry.writeCopies(epoch, concat(chunks, legacy), chunkedSize(chunks));
                    // a ledger that stays home on the target is its only copy: never on the list of copies to delete
                    copies.removeAll(u.stayed());
                    // every broker re-reads the whole table: the copies' deletion relies on all of it being applied
                    return folded.thenCompose(v -> dropFromCopies(epoch, u.stayed()))
                            .thenCompose(v -> registry.bumpRelocationEpoch(clock.millis(), null))
                            .thenCompose(re -> {
                                log.info("switch epoch={} rollback: {} promotion(s) flipped back, {} stay home on "
                                        + "bookie-cluster={}, relocation epoch={}", epoch, u.flipped().size(),
                                        u.stayed().size(), s.target(), re);
                                return registry.update(statePath(epoch), MigrationState.class, cur -> cur
                                        .filter(x -> x.phase() == Phase.ROLLING_BACK)
                                        .map(x -> x.edit().rollback(x.rollbackTo(), null, re)
                                                .deletions(copies.size(), re).updatedAt(clock.millis()).build()));
                            });
                }));
    }

    /** Takes {@code ids} off switch {@code epoch}'s list of copies to delete; completes with how many were on it. */
    private CompletableFuture<Integer> dropFromCopies(long epoch, java.util.Collection<Long> ids) {
        if (ids.isEmpty()) {
            return CompletableFuture.completedFuture(0);
        }
        Set<Long> drop = new TreeSet<>(ids);
        return registry.readCopies(epoch).thenCompose(chunks -> {
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            int[] removed = {0};
            chunks.forEach((n, list) -> {
                List<Long> rest = list.stream().filter(id -> !drop.contains(id)).toList();
                if (rest.size() < list.size()) {
                    removed[0] += list.size() - rest.size();
                    writes.add(registry.replaceCopiesChunk(epoch, n, rest));
                }
            });
            return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).thenApply(v -> removed[0]);
        });
    }

    private static List<Long> concat(Map<Integer, List<Long>> chunks, List<Long> more) {
        List<Long> all = new ArrayList<>();
        chunks.values().forEach(all::addAll);
        all.addAll(more);
        return all;
    }

    private static int chunkedSize(Map<Integer, List<Long>> chunks) {
        return chunks.values().stream().mapToInt(List::size).sum();
    }

    /**
     * Undoes switch {@code epoch}'s promotions to {@code target}: each ledger goes back to its previous home when
     * that copy is still there, else to its original when that is there; a ledger with neither keeps its home on
     * the target (and its copy there is never deleted). Fails when it cannot tell whether a previous copy is
     * there (its cluster does not answer): routing back to a copy that may be gone would lose the ledger once the
     * target's copy is deleted, so the rollback waits and is resumed.
     */
    private CompletableFuture<Unpromoted> unpromote(long epoch, String target, RegistryView listed) {
        // every promoted ledger is among the copies the migration recorded before promoting: read those directly
        return registry.readCopies(epoch).thenCompose(chunks -> {
            Set<Long> ids = new TreeSet<>(listed.relocations().keySet());
            chunks.values().forEach(ids::addAll);
            return registry.readRelocations(ids);
        }).thenCompose(fresh -> unpromoteFrom(epoch, target, listed.withFresh(fresh)));
    }

    /** What undoing a switch's promotions did: the ids routed back, and the ids that stay home on the target. */
    private record Unpromoted(List<Long> flipped, List<Long> stayed) {
    }

    private CompletableFuture<Unpromoted> unpromoteFrom(long epoch, String target, RegistryView view) {
        List<Relocation> promoted = view.relocations().values().stream()
                .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).toList();
        Map<Long, CompletableFuture<Boolean>> restorable = new java.util.TreeMap<>();
        for (Relocation r : promoted) {
            String back = r.beforeThisSwitch().map(Relocation::home).orElse(r.from());
            restorable.put(r.ledgerId(), copier.facts(r.ledgerId(), back).thenApply(Optional::isPresent)
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(new IllegalStateException(
                            "cannot tell whether ledger " + r.ledgerId() + " is still on bookie-cluster " + back
                                    + ", where it would be read again: " + Failures.unwrap(e).getMessage()))));
        }
        return CompletableFuture.allOf(restorable.values().toArray(CompletableFuture[]::new)).thenCompose(v ->
                registry.updateRelocations(restorable.keySet(), (id, cur) -> {
                    if (cur.isEmpty() || cur.get().switchEpoch() != epoch || !cur.get().home().equals(target)) {
                        return cur;
                    }
                    if (!restorable.get(id).join()) {
                        log.warn("switch epoch={} rollback: ledger={} stays home on bookie-cluster={}: the copy it was "
                                + "read from before is gone", epoch, id, target);
                        return cur;
                    }
                    return cur.get().beforeThisSwitch();
                })).thenApply(stored -> {
                    Predicate<Optional<Relocation>> stays = r -> r.map(x -> x.switchEpoch() == epoch
                            && x.home().equals(target)).orElse(false);
                    return new Unpromoted(
                            stored.entrySet().stream().filter(e -> !stays.test(e.getValue())).map(Map.Entry::getKey)
                                    .toList(),
                            stored.entrySet().stream().filter(e -> stays.test(e.getValue())).map(Map.Entry::getKey)
                                    .toList());
                });
    }

    /** Step 2: the brokers are switched back, unless a later switch was made meanwhile (it decides then). */
    private CompletableFuture<SwitchResult> switchBackIfLatest(MigrationState s) {
        long epoch = s.switchEpoch();
        return registry.readDirective().thenCompose(d -> {
            if (!d.present() || d.value().epoch() != epoch) {
                return CompletableFuture.completedFuture(null);
            }
            return switchBack.switchTo(s.rollbackTo()).thenApply(sw -> {
                log.info("switch epoch={} to bookie-cluster={} rolled back: now epoch={} on {}", epoch, s.target(),
                        sw.directive().epoch(), s.rollbackTo());
                return sw;
            }).exceptionallyCompose(e -> {
                String why = String.valueOf(Failures.unwrap(e).getMessage());
                log.warn("switch epoch={} rollback: cannot switch back to bookie-cluster={} yet (the rollback stays "
                        + "recorded and is finished when asked again, or by itself): {}", epoch, s.rollbackTo(), why);
                return recordRollbackError(epoch, why, e);
            });
        });
    }

    /** Records why the rollback of switch {@code epoch} is not finished (status shows it), then fails with it. */
    private <T> CompletableFuture<T> recordRollbackError(long epoch, String why, Throwable e) {
        return registry.update(statePath(epoch), MigrationState.class, cur -> cur
                .filter(x -> x.phase() == Phase.ROLLING_BACK)
                .map(x -> x.edit().rollback(x.rollbackTo(), why, x.rollbackFlipEpoch())
                        .updatedAt(clock.millis()).build()))
                .thenCompose(x -> CompletableFuture.failedFuture(e));
    }

    /**
     * Cleanup is about to delete {@code n} originals after switch {@code epoch}: recorded first (its rollback is no
     * longer possible), in the same version-checked write that a rollback's intent makes, so that the two never
     * overlap. Fails (nothing is to be deleted) when the migration is not finished or is being rolled back.
     */
    public CompletableFuture<Void> claimOriginalDeletions(long epoch, int n) {
        return registry.update(statePath(epoch), MigrationState.class, cur -> {
            MigrationState c = cur.orElseThrow(() -> RegistryException.conflict("no migration state for switch "
                    + "epoch " + epoch + "; originals are not deleted"));
            if (c.phase() != Phase.DONE && c.phase() != Phase.DONE_WITH_FAILURES) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " is " + c.phase()
                        + "; originals are not deleted");
            }
            return Optional.of(c.edit().originalsDeleted(c.originalsDeleted() + n).updatedAt(clock.millis()).build());
        }).thenApply(x -> null);
    }

    // ---- deletions after a rollback ----

    /**
     * Before ledgers are promoted to {@code target}, they are taken off the deletion lists of rolled-back
     * switches to the same cluster: a ledger is never at once home somewhere and scheduled for deletion there.
     */
    CompletableFuture<Void> cancelDeletions(String target, List<Long> ids) {
        return states().thenCompose(all -> {
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            Set<Long> wanted = new TreeSet<>(ids);
            for (MigrationState s : all) {
                if (s.phase() == Phase.ROLLED_BACK && s.target().equals(target) && s.deletionsPending()) {
                    chain = chain.thenCompose(v -> dropFromCopies(s.switchEpoch(), wanted).thenCompose(removed -> {
                        if (removed == 0) {
                            return CompletableFuture.completedFuture(null);
                        }
                        log.info("switch epoch={}: {} rolled-back copy/copies on bookie-cluster={} are promoted again; "
                                + "they are no longer deleted", s.switchEpoch(), removed, target);
                        return registry.update(statePath(s.switchEpoch()), MigrationState.class, cur -> cur.map(c ->
                                c.edit().deletions(Math.max(0, c.pendingDeletionCount() - removed),
                                        c.deleteAfterRelocationEpoch()).build())).thenApply(x -> null);
                    }));
                }
            }
            return chain;
        });
    }

    private CompletableFuture<Void> processDeletions(List<MigrationState> all) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (MigrationState s : all) {
            if (s.deletionsPending()) {
                // one rollback's list that cannot be worked off now (a cluster it flips back to does not answer)
                // holds up neither the others nor the lists that can go
                chain = chain.thenCompose(v -> deleteCopies(s).exceptionally(e -> {
                    log.warn("switch epoch={} rollback: deleting the copies on bookie-cluster={} waits for the next "
                            + "pass: {}", s.switchEpoch(), s.target(), Failures.unwrap(e).toString());
                    return null;
                }));
            }
        }
        return chain;
    }

    /**
     * Deletes the copies a rollback left on the rolled-back target, once every live broker routes with the epoch
     * that flipped them back, never while the target is the active cluster (its own migration wants them), and
     * each id checked again right before: a ledger that is now home on the target, that the target itself issued,
     * or that a broker holds open there, is not deleted.
     */
    private CompletableFuture<Void> deleteCopies(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return registry.getCluster(target).thenCompose(rec -> {
            if (rec.isEmpty() || rec.get().status() == io.bcswitch.registry.ClusterStatus.DEPRECATED) {
                // a cluster nobody uses any more (its clients are closed, or it is not even registered): the list
                // goes, the copies stay there and go with the cluster
                log.warn("switch epoch={} rollback: bookie-cluster={} is {}; its {} rolled-back copy/copies are left "
                        + "on it", epoch, target, rec.isEmpty() ? "no longer registered" : "DEPRECATED",
                        s.pendingDeletionCount());
                return registry.dropCopies(epoch).thenCompose(v -> registry.update(statePath(epoch),
                        MigrationState.class, cur -> cur.map(c -> c.edit().deletions(0, c.deleteAfterRelocationEpoch())
                                .build()))).thenApply(x -> null);
            }
            return deleteCopiesOn(s);
        });
    }

    private CompletableFuture<Void> deleteCopiesOn(MigrationState s) {
        long epoch = s.switchEpoch();
        String target = s.target();
        return RegistryView.read(registry).thenCompose(view -> {
            if (target.equals(view.activeCluster())) {
                return CompletableFuture.completedFuture(null);
            }
            return registry.readCopies(epoch).thenCompose(chunks -> {
                Map<Integer, List<Long>> work = new java.util.TreeMap<>(chunks);
                if (!s.pendingDeletions().isEmpty()) {
                    work.put(-1, s.pendingDeletions()); // an earlier version's list
                }
                Set<Long> listed = new TreeSet<>();
                work.values().forEach(listed::addAll);
                boolean straggling = view.relocations().values().stream().anyMatch(r -> r.switchEpoch() == epoch
                        && r.home().equals(target) && listed.contains(r.ledgerId()));
                if (straggling) {
                    return flipStragglers(s, view);
                }
                return BrokerView.read(registry).thenCompose(brokers -> {
                    List<String> behind = brokers.relocationPending(s.deleteAfterRelocationEpoch());
                    if (brokers.live().isEmpty() || !behind.isEmpty()) {
                        return CompletableFuture.completedFuture(null); // a broker may still read the copies
                    }
                    return deleteChunks(s, view, brokers, work);
                });
            });
        });
    }

    /**
     * A promotion that raced with the rollback (its copy is on the deletion list, yet it is home on the target):
     * flipped back now and announced; one that cannot go back leaves the list. Deletions wait for the new epoch.
     */
    private CompletableFuture<Void> flipStragglers(MigrationState s, RegistryView view) {
        long epoch = s.switchEpoch();
        return unpromote(epoch, s.target(), view).thenCompose(u -> dropFromCopies(epoch, u.stayed())
                .thenCompose(removed -> registry.bumpRelocationEpoch(clock.millis(), null)
                        .thenCompose(re -> registry.update(statePath(epoch), MigrationState.class, cur -> cur.map(c ->
                                c.edit().deletions(Math.max(0, c.pendingDeletionCount() - removed), re).build())))))
                .thenApply(x -> null);
    }

    private CompletableFuture<Void> deleteChunks(MigrationState s, RegistryView listed, BrokerView brokers,
                                                 Map<Integer, List<Long>> chunks) {
        List<Long> all = new ArrayList<>();
        chunks.values().forEach(all::addAll);
        // each id's relocation read right now, one by one: the table's listing may lag behind a promotion
        return registry.readRelocations(all).thenCompose(fresh -> deleteChunksWith(s, listed.withFresh(fresh), brokers,
                chunks));
    }

    private CompletableFuture<Void> deleteChunksWith(MigrationState s, RegistryView view, BrokerView brokers,
                                                     Map<Integer, List<Long>> chunks) {
        String target = s.target();
        RangeTable ranges = view.ranges();
        List<CompletableFuture<Integer>> each = new ArrayList<>();
        int[] deleted = {0};
        for (Map.Entry<Integer, List<Long>> chunk : chunks.entrySet()) {
            List<CompletableFuture<Long>> kept = new ArrayList<>();
            for (long id : chunk.getValue()) {
                if (view.home(id).map(target::equals).orElse(false) || ranges.owner(id).map(target::equals)
                        .orElse(false)) {
                    continue; // home there (or issued there): not a copy to delete any more
                }
                if (!brokers.holdingOpen(target, id).isEmpty()) {
                    kept.add(CompletableFuture.completedFuture(id));
                    continue;
                }
                String home = view.home(id).or(() -> ranges.owner(id)).orElse(null);
                kept.add(deleteIfHomeHoldsIt(s.switchEpoch(), id, target, home).thenApply(gone -> {
                    if (gone) {
                        synchronized (deleted) {
                            deleted[0]++;
                        }
                    }
                    return (Long) null;
                }).exceptionally(e -> {
                    log.warn("ledger={} bookie-cluster={}: cannot delete rolled-back copy yet: {}", id, target,
                            e.toString());
                    return id;
                }));
            }
            each.add(CompletableFuture.allOf(kept.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                List<Long> rest = kept.stream().map(CompletableFuture::join).filter(java.util.Objects::nonNull)
                        .toList();
                CompletableFuture<Void> write = chunk.getKey() < 0 ? CompletableFuture.completedFuture(null)
                        : registry.replaceCopiesChunk(s.switchEpoch(), chunk.getKey(), rest);
                return write.thenApply(x -> rest.size());
            }));
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            int remaining = each.stream().mapToInt(CompletableFuture::join).sum();
            metrics.deleted(target, deleted[0]);
            log.info("switch epoch={} rollback: deleted {} copy/copies from bookie-cluster={}, {} left", s.switchEpoch(),
                    deleted[0], target, remaining);
            return registry.update(statePath(s.switchEpoch()), MigrationState.class, cur -> cur.map(c ->
                    c.edit().deletions(remaining, c.deleteAfterRelocationEpoch()).updatedAt(clock.millis()).build()))
                    .thenApply(x -> null);
        });
    }

    /**
     * Deletes the rolled-back copy of {@code id} on {@code target} only when the ledger's home holds the same closed
     * content; completes with whether it deleted one. A copy whose home lost the ledger (or holds something else)
     * may be the only one left: it stays where it is, off the list, and cleanup's own checks decide about it.
     */
    private CompletableFuture<Boolean> deleteIfHomeHoldsIt(long epoch, long id, String target, String home) {
        CompletableFuture<Optional<LedgerCopier.LedgerFacts>> there = copier.facts(id, target);
        CompletableFuture<Optional<LedgerCopier.LedgerFacts>> atHome = home == null
                ? CompletableFuture.completedFuture(Optional.empty()) : copier.facts(id, home);
        return there.thenCombine(atHome, (copy, original) -> {
            if (copy.isEmpty()) {
                return CompletableFuture.completedFuture(false); // already gone
            }
            if (original.isEmpty() || !original.get().sameClosedContent(copy.get())) {
                log.warn("switch epoch={} rollback: ledger={} is kept on bookie-cluster={}: its home {} {}; it is "
                        + "no longer scheduled for deletion (cleanup decides about it)", epoch, id, target, home,
                        original.isEmpty() ? "does not hold it" : "holds different content");
                return CompletableFuture.completedFuture(false);
            }
            return copier.delete(id, target).thenApply(v -> true);
        }).thenCompose(f -> f);
    }

    /** Copy lists of switches that can no longer be rolled back (a newer switch exists): not needed any more. */
    private CompletableFuture<Void> dropCopyLists(List<Long> epochs) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (long e : epochs) {
            chain = chain.thenCompose(v -> registry.dropCopies(e));
        }
        return chain;
    }

    @Override
    public void close() {
        closed = true;
        ScheduledFuture<?> t = ticker;
        if (t != null) {
            t.cancel(false);
        }
    }
}
