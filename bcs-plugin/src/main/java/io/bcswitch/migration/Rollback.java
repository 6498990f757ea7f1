package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.migration.MigrationOrchestrator.RollbackOutcome;
import io.bcswitch.migration.MigrationOrchestrator.SwitchBack;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.switching.SwitchResult;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rollback of a switch: its intent recorded first (ROLLING_BACK; a run on any broker stops at its next step),
 * then, under the lock, its promotions flipped back and the brokers switched back, and ROLLED_BACK. Each step is
 * idempotent: one that fails leaves the intent and its reason in the state, and the rollback is finished when asked
 * again or by a later pass. The copies it leaves are deleted by {@link RolledBackCopies}.
 */
final class Rollback {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);
    /**
     * How long a rollback waits for a cluster that does not answer whether it still holds a ledger's previous copy;
     * after that the ledger stays home on the rolled-back target (and the rollback says so).
     */
    static final long UNANSWERED_WAIT_MILLIS = 120_000;
    /** An unfinished rollback is resumed by the periodic pass at most this often. */
    static final long ROLLBACK_RESUME_MILLIS = 30_000;
    /** How long an operator's rollback waits for the orchestrator lock (the running pass stops within seconds). */
    private static final long LOCK_WAIT_MILLIS = 30_000;

    private final RegistryStore registry;
    private final MigrationStates states;
    private final OrchestratorLock lock;
    private final PromotionReversal reversal;
    private final RolledBackCopies copies;
    private final SwitchBack switchBack;
    private final MigrationMetrics metrics;
    private final Clock clock;
    private final Supplier<String> brokerId;

    Rollback(RegistryStore registry, MigrationStates states, OrchestratorLock lock, PromotionReversal reversal,
             RolledBackCopies copies, SwitchBack switchBack, MigrationMetrics metrics, Clock clock,
             Supplier<String> brokerId) {
        this.registry = registry;
        this.states = states;
        this.lock = lock;
        this.reversal = reversal;
        this.copies = copies;
        this.switchBack = switchBack;
        this.metrics = metrics;
        this.clock = clock;
        this.brokerId = brokerId;
    }

    /**
     * Records the intent to roll switch {@code epoch} (to {@code target}) back to {@code origin}; completes with
     * what is stored (ROLLING_BACK, or ROLLED_BACK when an earlier request got that far). Refused (409) when the
     * migration cannot move to ROLLING_BACK, cleanup deleted originals the rollback would read back, or the cluster
     * it goes back to is DEPRECATED or unregistered (its switch back would be refused for good). That record is read
     * after the state, in the same version-checked update, so that a close-client or unregister of it, which confirms
     * this state after its change ({@link io.bcswitch.registry.ConfirmedChange}), is never missed.
     */
    CompletableFuture<MigrationState> recordIntent(long epoch, String target, String origin) {
        MigrationState none = MigrationState.start(epoch, target, brokerId.get(), clock.millis());
        return registry.updateReading(states.path(epoch), MigrationState.class, cur -> {
            MigrationState s = cur.orElse(none);
            if (s.phase() == Phase.ROLLING_BACK || s.phase() == Phase.ROLLED_BACK) {
                return CompletableFuture.completedFuture(Optional.empty()); // asked again: resume
            }
            if (!s.phase().canMove(Phase.ROLLING_BACK)) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " is " + s.phase()
                        + "; it cannot be rolled back");
            }
            if (s.originalsDeleted() > 0) {
                throw RegistryException.conflict("cleanup deleted " + s.originalsDeleted() + " original ledger(s) "
                        + "after switch epoch " + epoch + "; a rollback could not read them back");
            }
            return registry.getCluster(origin).thenApply(back -> {
                if (back.isEmpty() || back.get().status() == io.bcswitch.registry.ClusterStatus.DEPRECATED) {
                    throw RegistryException.conflict("bookie cluster '" + origin + "', which switch epoch " + epoch
                            + " would be rolled back to, is " + (back.isEmpty() ? "not registered" : "DEPRECATED")
                            + "; it cannot be rolled back");
                }
                return Optional.of(s.moveTo(Phase.ROLLING_BACK, clock.millis()).edit().rollback(origin, null, 0)
                        .rollbackAskedAt(clock.millis()).build());
            });
        });
    }

    /** Finishes switch {@code epoch}'s recorded rollback, waiting (bounded) for the lock another pass may hold. */
    CompletableFuture<RollbackOutcome> finishWhenLocked(long epoch) {
        CompletableFuture<RollbackOutcome> done = new CompletableFuture<>();
        lock.lockedWaiting(() -> finish(epoch).thenAccept(done::complete),
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LOCK_WAIT_MILLIS))
                .whenComplete((v, e) -> {
                    if (e != null) {
                        done.completeExceptionally(e);
                    }
                });
        return done;
    }

    /** Rollbacks whose finish failed or was interrupted, resumed (at most every {@link #ROLLBACK_RESUME_MILLIS}). */
    CompletableFuture<Void> resume() {
        return registry.readDirective().thenCompose(d -> states.all().thenCompose(all -> {
            long latest = d.present() ? d.value().epoch() : 0;
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            for (MigrationState s : all) {
                // one whose flip is made and whose switch a newer one replaced has nothing left that could fail again:
                // finished at once, not after the wait between attempts
                boolean onlyItsEndLeft = s.rollbackFlipEpoch() > 0 && latest > s.switchEpoch();
                if (s.phase() == Phase.ROLLING_BACK && (s.rollbackError() == null || onlyItsEndLeft
                        || clock.millis() - s.updatedAt() >= ROLLBACK_RESUME_MILLIS)) {
                    chain = chain.thenCompose(v -> lock.locked(() -> finish(s.switchEpoch())
                            .<Void>thenApply(x -> null).exceptionally(e -> null)));
                }
            }
            return chain;
        }));
    }

    /**
     * The answer for a rollback another pass already finished (a background pass on any broker may take the lock
     * before the request's own finish runs): the switch back that pass made, read from the directive. That is the
     * directive right after the rolled-back one, from its target back to the cluster rolled back to; when a later
     * switch has replaced it, there is no switch back to report (null) and the status names the active cluster.
     * The precheck the switch back passed is not kept, so it is not reported.
     */
    CompletableFuture<RollbackOutcome> rolledBackEarlier(MigrationState s) {
        return registry.readDirective().thenApply(d -> {
            boolean switchBack = d.present() && d.value().epoch() == s.switchEpoch() + 1
                    && d.value().origin().equals(s.target()) && d.value().target().equals(s.rollbackTo());
            return new RollbackOutcome(s, switchBack ? new SwitchResult(d.value(), null) : null);
        });
    }

    /** The rollback's steps, each idempotent; under the lock. Fails (the intent stays) when the switch back fails. */
    private CompletableFuture<RollbackOutcome> finish(long epoch) {
        return states.read(epoch).thenCompose(st -> {
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
                        return recordError(epoch, why, e);
                    });
            return flipped.thenCompose(f -> switchBackIfLatest(f)).thenCompose(sw -> states.transition(epoch,
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
        Set<Long> ids = new TreeSet<>();
        // a cluster that does not answer is waited for from the rollback's request on (from its first failed attempt
        // for a rollback an earlier version recorded), a bounded time
        boolean waitOver = s.rollbackAskedAt() > 0 && clock.millis() - s.rollbackAskedAt() >= UNANSWERED_WAIT_MILLIS;
        // announced as one change (AnnouncedChange): every broker re-reads the whole table, which the copies'
        // deletion relies on all of; a lost bump leaves the flip marked, and the resumed rollback flips again
        return AnnouncedChange.make(registry, clock.millis(), () -> RegistryView.read(registry)
                .thenCompose(view -> reversal.unpromote(epoch, s.target(), view, waitOver))
                .thenCompose(u -> registry.readCopies(epoch).thenCompose(chunks -> {
                    chunks.values().forEach(ids::addAll);
                    ids.addAll(s.built());
                    ids.addAll(s.pendingDeletions());
                    // copies an earlier version kept in the state go into the chunks, with the rest
                    List<Long> legacy = new ArrayList<>(s.built());
                    legacy.addAll(s.pendingDeletions());
                    legacy.removeIf(id -> chunks.values().stream().anyMatch(c -> c.contains(id)));
                    CompletableFuture<Void> folded = legacy.isEmpty() ? CompletableFuture.completedFuture(null)
                            : registry.appendCopies(epoch, s.runToken(), legacy);
                    // a ledger that stays home on the target is its only copy: never on the list of copies to delete
                    ids.removeAll(u.stayed());
                    return folded.thenCompose(v -> copies.dropFromCopies(epoch, u.stayed())).thenApply(v -> u);
                })), u -> null).thenCompose(a -> {
                    long re = a.epoch();
                    log.info("switch epoch={} rollback: {} promotion(s) flipped back, {} stay home on "
                            + "bookie-cluster={}, relocation epoch={}", epoch, a.result().flipped().size(),
                            a.result().stayed().size(), s.target(), re);
                    return registry.update(states.path(epoch), MigrationState.class, cur -> cur
                            .filter(x -> x.phase() == Phase.ROLLING_BACK)
                            .map(x -> x.edit().rollback(x.rollbackTo(), null, re)
                                    .issues(withNotReversed(x.issues(), a.result().notReversed()))
                                    .deletions(ids.size(), re).updatedAt(clock.millis()).build()));
                });
    }

    /**
     * The ledgers the rollback keeps home on its target first (status and verify name them; the issues kept are
     * capped), then the migration's own issues. The flip is made once, so they are never listed twice.
     */
    private static List<LedgerIssue> withNotReversed(List<LedgerIssue> issues, List<LedgerIssue> notReversed) {
        List<LedgerIssue> all = new ArrayList<>(notReversed);
        all.addAll(issues);
        return all;
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
            }).exceptionallyCompose(e -> registry.readDirective().thenCompose(now -> {
                if (now.present() && now.value().epoch() > epoch) {
                    // a switch committed meanwhile won the compare-and-set: it decides where the brokers go, as when
                    // it came before the flip, and the rollback is finished now rather than by a pass later
                    log.info("switch epoch={} rollback: switch epoch={} to bookie-cluster={} was committed meanwhile; "
                            + "the rollback makes no switch back", epoch, now.value().epoch(), now.value().target());
                    return CompletableFuture.<SwitchResult>completedFuture(null);
                }
                String why = String.valueOf(Failures.unwrap(e).getMessage());
                log.warn("switch epoch={} rollback: cannot switch back to bookie-cluster={} yet (the rollback stays "
                        + "recorded and is finished when asked again, or by itself): {}", epoch, s.rollbackTo(), why);
                return recordError(epoch, why, e);
            }));
        });
    }

    /** Records why the rollback of switch {@code epoch} is not finished (status shows it), then fails with it. */
    private <T> CompletableFuture<T> recordError(long epoch, String why, Throwable e) {
        return registry.update(states.path(epoch), MigrationState.class, cur -> cur
                .filter(x -> x.phase() == Phase.ROLLING_BACK)
                .map(x -> x.edit().rollback(x.rollbackTo(), why, x.rollbackFlipEpoch())
                        // a rollback an earlier version recorded: its bounded wait counts from its first failure
                        .rollbackAskedAt(x.rollbackAskedAt() > 0 ? x.rollbackAskedAt() : clock.millis())
                        .updatedAt(clock.millis()).build()))
                .thenCompose(x -> CompletableFuture.failedFuture(e));
    }
}
