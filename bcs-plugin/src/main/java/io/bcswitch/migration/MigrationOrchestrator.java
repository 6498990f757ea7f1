package io.bcswitch.migration;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import io.bcswitch.switching.SwitchResult;
import io.bcswitch.tuning.LiveTuning;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

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
 *
 * <p>This class owns the parts and hands each call to the one whose job it is: {@link MigrationDriver} (the
 * queue), {@link OrchestratorLock}, {@link MigrationPass}, {@link PendingPhase}, {@link MigrationRun} (BUILD and
 * PROMOTE), {@link RelocationAnnouncer}, {@link Rollback}, {@link RolledBackCopies}, {@link OperatorRequests} and
 * {@link MigrationStates}.
 */
public final class MigrationOrchestrator implements AutoCloseable {
    /** How long PROMOTE waits, after each batch, for every live broker to apply the batch's relocation epoch. */
    static final long APPLY_WAIT_MILLIS = 30_000;
    /**
     * How long BUILD waits before it tries a ledger that was still open again: an open cursor ledger usually closes
     * within seconds, when the cutover rolls it over.
     */
    static final long OPEN_RETRY_DELAY_MILLIS = 2_000;
    /** BUILD's state write while copying: often enough for status to move, rare enough to cost the store nothing. */
    static final long PERSIST_INTERVAL_MILLIS = 1_000;
    /** How often a run in BUILD re-reads its state, so that a long copy stops within about this long. */
    static final long WATCH_MILLIS = 1_000;

    /**
     * The waits of a run that are bounds on other brokers and on Pulsar, not settings: fixed in production, shorter
     * in tests that do not depend on them.
     *
     * @param applyMillis     see {@link #APPLY_WAIT_MILLIS}
     * @param openRetryMillis see {@link #OPEN_RETRY_DELAY_MILLIS}
     * @param persistMillis   how often BUILD writes its progress to the state (see {@link #PERSIST_INTERVAL_MILLIS})
     * @param watchMillis     how often BUILD re-reads its state to learn that it must stop (see {@link #WATCH_MILLIS})
     */
    record Waits(long applyMillis, long openRetryMillis, long persistMillis, long watchMillis) {
        static final Waits DEFAULT = new Waits(APPLY_WAIT_MILLIS, OPEN_RETRY_DELAY_MILLIS, PERSIST_INTERVAL_MILLIS,
                WATCH_MILLIS);

        Waits(long applyMillis, long openRetryMillis) {
            this(applyMillis, openRetryMillis, PERSIST_INTERVAL_MILLIS);
        }

        Waits(long applyMillis, long openRetryMillis, long persistMillis) {
            this(applyMillis, openRetryMillis, persistMillis, WATCH_MILLIS);
        }
    }

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
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final SwitchConfig.Migration config;
    private final Supplier<String> brokerId;
    private final Clock clock;
    private final MigrationMetrics metrics;
    private final ByteRateLimiter limiter;
    private final LiveTuning tuning;
    private final Waits waits;
    private final DriverTimer timer;
    private final MigrationStates states;
    private final RelocationAnnouncer announcer;
    private final RolledBackCopies copies;
    private final MigrationPass pass;
    private final MigrationDriver driver;
    private final OperatorRequests requests;

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
                Waits.DEFAULT);
    }

    /**
     * @param tuning the copy rate and concurrency now (an operator may change them while a migration runs; both are
     *               read again as the copying goes on)
     */
    public MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                                 SwitchConfig.Migration config, LiveTuning tuning,
                                 Supplier<String> brokerId, ScheduledExecutorService scheduler,
                                 ByteBudget.Factory budgets, Clock clock,
                                 MigrationMetrics metrics, SwitchBack switchBack) {
        this(registry, inventory, copier, config, tuning, brokerId, scheduler, budgets, clock, metrics, switchBack,
                Waits.DEFAULT);
    }

    MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                          SwitchConfig.Migration config, Supplier<String> brokerId, ScheduledExecutorService scheduler,
                          ByteBudget.Factory budgets, Clock clock, MigrationMetrics metrics, SwitchBack switchBack,
                          Waits waits) {
        this(registry, inventory, copier, config, new LiveTuning(
                new LiveTuning.Values(config.bytesPerSecond(), config.concurrency(), 1)), brokerId,
                scheduler, budgets, clock, metrics, switchBack, waits);
    }

    private final OldHomeDeletes oldHomeDeletes;

    MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                          SwitchConfig.Migration config, LiveTuning tuning,
                          Supplier<String> brokerId, ScheduledExecutorService scheduler,
                          ByteBudget.Factory budgets, Clock clock, MigrationMetrics metrics, SwitchBack switchBack,
                          Waits waits) {
        this.waits = waits;
        this.tuning = tuning;
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
        this.config = config;
        this.brokerId = brokerId;
        this.clock = clock;
        this.metrics = metrics;
        this.limiter = new ByteRateLimiter(tuning::migrationBytesPerSecond, budgets, scheduler);
        this.timer = new DriverTimer(scheduler);
        this.states = new MigrationStates(registry, clock, brokerId, timer);
        this.announcer = new RelocationAnnouncer(registry, clock, timer, waits.applyMillis());
        OrchestratorLock lock = new OrchestratorLock(registry.lock(registry.paths().orchestratorLock()), brokerId,
                timer);
        PromotionReversal reversal = new PromotionReversal(registry, copier);
        // one judgement of a listed copy for the rollbacks' lists and the superseded migrations'
        ListedCopies listed = new ListedCopies(registry, copier, inventory);
        this.copies = new RolledBackCopies(registry, states, reversal, listed, metrics, clock);
        Rollback rollback = new Rollback(registry, states, lock, reversal, copies, switchBack, metrics, clock,
                brokerId);
        // a run reads what it needs through this orchestrator; it is only created by a pass, after construction
        BiFunction<Long, String, MigrationRun> runs = (epoch, target) -> new MigrationRun(this, epoch, target);
        this.pass = new MigrationPass(registry, states, lock, rollback, copies,
                new UnpromotedCopies(registry, listed, metrics), new PendingPhase(registry, states, runs), runs, clock,
                brokerId);
        this.driver = new MigrationDriver(timer, brokerId, pass::run, metrics);
        this.requests = new OperatorRequests(states, rollback, driver, brokerId);
        this.oldHomeDeletes = new OldHomeDeletes(registry, copier, scheduler);
    }

    /**
     * Pulsar deleted {@code ledgerId} on {@code cluster}, where this broker routed the delete: if a copy the migration
     * made has become its home elsewhere meanwhile, that copy is deleted too (see {@link OldHomeDeletes}). Returns at
     * once; completes with whether a copy was deleted.
     */
    public CompletableFuture<Boolean> pulsarDeleted(long ledgerId, String cluster) {
        return oldHomeDeletes.deleted(ledgerId, cluster);
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
        return timer.closed();
    }

    ScheduledExecutorService scheduler() {
        return timer.scheduler();
    }

    Waits waits() {
        return waits;
    }

    CompletableFuture<Void> delay(long millis) {
        return timer.delay(millis);
    }

    /** See {@link MigrationStates#persist}. */
    CompletableFuture<MigrationState> persist(long epoch, long token, UnaryOperator<MigrationState> change) {
        return states.persist(epoch, token, change);
    }

    /** See {@link MigrationStates#goOn}. */
    boolean goOn(MigrationState s, long token) {
        return states.goOn(s, token);
    }

    /** See {@link MigrationStates#stillMine}. */
    CompletableFuture<Boolean> stillMine(long epoch, long token) {
        return states.stillMine(epoch, token);
    }

    /** See {@link MigrationStates#recordSuperseded}. */
    CompletableFuture<MigrationState> recordSuperseded(long epoch, long token, UnaryOperator<MigrationState> change) {
        return states.recordSuperseded(epoch, token, change);
    }

    /** See {@link MigrationStates#supersede}. */
    CompletableFuture<MigrationState> supersede(long epoch, long by) {
        return states.supersede(epoch, by);
    }

    /** See {@link RelocationAnnouncer#announce}. */
    CompletableFuture<Void> announce(long epoch, RegistryView view, BooleanSupplier stop) {
        return announcer.announce(epoch, view, stop);
    }

    /** See {@link RelocationAnnouncer#awaitApplied}. */
    CompletableFuture<Void> awaitApplied(long epoch, long re, BooleanSupplier stop) {
        return announcer.awaitApplied(epoch, re, stop);
    }

    /** See {@link RolledBackCopies#cancelDeletions}. */
    CompletableFuture<Void> cancelDeletions(String target, List<Long> ids) {
        return copies.cancelDeletions(target, ids);
    }

    // ---- the driver ----

    /** Checks for work every {@code periodMillis} (from the first call on; later calls change nothing). */
    public void start(long periodMillis) {
        driver.start(periodMillis);
    }

    /** This broker accepted switch {@code epoch}: it runs its migration without waiting for the grace period. */
    public void switchAccepted(long epoch) {
        pass.accepted(epoch);
        tick();
    }

    /**
     * Queues one pass (at most one is queued at a time): finish an interrupted rollback, run or resume the latest
     * switch's migration, then deletions that are due. Completes when that pass has run. A pass counts as queued
     * from before it is handed to the driver until it starts, so that whatever asks for a pass after one started
     * (an operator's retry, finished inside that pass's completion) always gets a pass of its own.
     */
    public CompletableFuture<Void> tick() {
        return driver.tick();
    }

    // ---- state ----

    public CompletableFuture<Versioned<MigrationState>> readState(long epoch) {
        return states.read(epoch);
    }

    /** What this broker last saw of the latest switch and its migration; empty before its first pass. */
    public Optional<Seen> lastSeen() {
        return states.lastSeen();
    }

    /** Latest switch's migration state, if any. */
    public CompletableFuture<Optional<MigrationState>> latest() {
        return states.latest();
    }

    /**
     * Completes with switch {@code epoch}'s stored state once {@code condition} holds for it (checked every
     * {@value MigrationStates#AWAIT_POLL_MILLIS} ms, whoever wrote it); for tests and tools that must wait for a
     * phase instead of sleeping.
     */
    public CompletableFuture<MigrationState> await(long epoch, Predicate<MigrationState> condition) {
        return states.await(epoch, condition);
    }

    /**
     * Cleanup is about to delete {@code n} originals after switch {@code epoch}: recorded first (its rollback is no
     * longer possible), in the same version-checked write that a rollback's intent makes, so that the two never
     * overlap. Fails (nothing is to be deleted) when the migration is not finished or is being rolled back.
     */
    public CompletableFuture<Void> claimOriginalDeletions(long epoch, int n) {
        return states.claimOriginalDeletions(epoch, n);
    }

    // ---- operator actions ----

    /**
     * Runs switch {@code epoch}'s finished migration again on this broker (after the operator fixed what
     * made ledgers fail, collide or stay open): it re-plans from the inventory, so finished copies count
     * as present and only what is still on an old cluster is copied and promoted. Refused (409) while it
     * runs, and when the switch was rolled back or superseded.
     */
    public CompletableFuture<MigrationState> retry(long epoch) {
        return requests.retry(epoch);
    }

    /**
     * Rollback of switch {@code epoch} (to {@code target}, back to {@code origin}): records the intent first
     * (ROLLING_BACK; a run on any broker stops at its next step), then, on this broker's driver holding the lock,
     * flips the switch's promotions back, switches the brokers back and marks it ROLLED_BACK. Each step is
     * idempotent: if one fails the intent stays, status shows why, and the rollback is finished by asking again
     * or by the next passes.
     */
    public CompletableFuture<RollbackOutcome> rollBack(long epoch, String target, String origin) {
        return requests.rollBack(epoch, target, origin);
    }

    @Override
    public void close() {
        driver.close();
    }
}
