package io.bcswitch.migration;

import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * One pass of the driver: finishes an interrupted rollback, runs or resumes the latest switch's migration when it is
 * this broker's to run (the broker that accepted the switch starts at once, any other takes over a migration whose
 * broker is gone), then the deletions that are due. The reads every pass makes are cheap; the rest happens only
 * when there is work.
 */
final class MigrationPass {
    /**
     * Migrations whose copy list stays after a newer switch, for the rollbacks' deletions (the ended migrations'
     * lists that {@link UnpromotedCopies} works off stay too).
     */
    private static final Set<Phase> KEPT_LISTS = Set.of(Phase.ROLLING_BACK, Phase.ROLLED_BACK);
    /** Other brokers leave a fresh switch to the broker that accepted it for this long. */
    static final long START_GRACE_MILLIS = 10_000;

    private final RegistryStore registry;
    private final MigrationStates states;
    private final OrchestratorLock lock;
    private final Rollback rollback;
    private final RolledBackCopies copies;
    private final UnpromotedCopies unpromotedCopies;
    private final PendingPhase pending;
    private final BiFunction<Long, String, MigrationRun> runs;
    private final Clock clock;
    private final Supplier<String> brokerId;
    private final Set<Long> acceptedHere = ConcurrentHashMap.newKeySet();

    /** @param runs a run of switch (epoch)'s migration to (target) */
    MigrationPass(RegistryStore registry, MigrationStates states, OrchestratorLock lock, Rollback rollback,
                  RolledBackCopies copies, UnpromotedCopies unpromotedCopies, PendingPhase pending, BiFunction<Long, String, MigrationRun> runs,
                  Clock clock, Supplier<String> brokerId) {
        this.registry = registry;
        this.states = states;
        this.lock = lock;
        this.rollback = rollback;
        this.copies = copies;
        this.unpromotedCopies = unpromotedCopies;
        this.pending = pending;
        this.runs = runs;
        this.clock = clock;
        this.brokerId = brokerId;
    }

    /**
     * This broker accepted switch {@code epoch}: its passes start the migration without the grace. (A re-run needs no
     * such mark: it is recorded in BUILD, and the grace only holds back a migration that has no state yet.)
     */
    void accepted(long epoch) {
        acceptedHere.add(epoch);
    }

    CompletableFuture<Void> run() {
        // cheap reads every pass (lock, directive, latest state); the rest only when there is work
        return lock.releaseLeftLock().thenCompose(x -> registry.readDirective()).thenCompose(directive -> {
            if (!directive.present()) {
                return CompletableFuture.completedFuture(null);
            }
            SwitchDirective d = directive.value();
            // an older migration still under way is moot: it ends now, whichever broker runs it (no lock: its own
            // run sees the phase within a second and stops, and the latest switch's migration never waits for it)
            return states.supersedeOlder(d.epoch()).thenCompose(all -> states.read(d.epoch()).thenCompose(state -> {
                states.sawLatest(d, state.present() ? state.value() : null);
                boolean work = !state.present() || !state.value().phase().terminal();
                if (state.present() && (!work || state.value().phase() == Phase.ROLLING_BACK)) {
                    // a rollback of the latest switch is finished by the housekeeping, beside the rest of it
                    return housekeeping(all);
                }
                if (!state.present() && !acceptedHere.contains(d.epoch())
                        && clock.millis() - d.ts() < START_GRACE_MILLIS) {
                    return CompletableFuture.completedFuture(null);
                }
                String owner = state.present() ? state.value().owner() : null;
                return ownerAlive(owner).thenCompose(alive -> {
                    if (alive && !owner.equals(brokerId.get())) {
                        return CompletableFuture.<Void>completedFuture(null); // its broker is running it
                    }
                    return lock.locked(() -> drive(d)).thenCompose(v -> states.all())
                            .thenCompose(this::housekeeping);
                });
            }));
        });
    }

    /**
     * Rollbacks to finish, deletions that are due, copy lists nobody needs any more: each on its own, so that one that
     * is stuck (a rollback waiting for a cluster that does not answer, a deletion that fails) holds up none of the
     * others. Fails (the pass failed, it is tried again) with the first step that failed, after every step ran.
     */
    private CompletableFuture<Void> housekeeping(List<MigrationState> all) {
        // the active cluster read now: a drive may have run long, and a newer switch been made meanwhile
        return registry.readDirective().thenCompose(d -> housekeeping(all, d.present() ? d.value().target() : null));
    }

    private CompletableFuture<Void> housekeeping(List<MigrationState> all, String active) {
        boolean rollingBack = all.stream().anyMatch(s -> s.phase() == Phase.ROLLING_BACK);
        boolean deletions = all.stream().anyMatch(MigrationState::deletionsPending);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        // a rollback's finish takes the lock itself, one rollback at a time
        CompletableFuture<Void> resumed = rollingBack ? alone(rollback.resume(), failed)
                : CompletableFuture.completedFuture(null);
        return resumed.thenCompose(v -> alone(registry.copyEpochs().thenCompose(epochs -> {
            long latest = all.stream().mapToLong(MigrationState::switchEpoch).max().orElse(0);
            // a rollback in progress still reads its list; a rolled-back or ended migration's copies that are not
            // home are deleted from it
            List<Long> unneeded = epochs.stream().filter(e -> e < latest && !UnpromotedCopies.keepsList(all, e)
                    && all.stream().noneMatch(s -> s.switchEpoch() == e && KEPT_LISTS.contains(s.phase()))).toList();
            // (the lock, a metadata write, only when there is something to do: asked without it first)
            return unpromotedCopies.hasWork(all, epochs, active).thenCompose(work -> !deletions && !work
                    && unneeded.isEmpty() ? CompletableFuture.<Void>completedFuture(null)
                    : lock.locked(() -> alone(copies.process(all), failed)
                    .thenCompose(x -> alone(unpromotedCopies.process(all, epochs, active), failed))
                    .thenCompose(x -> copies.dropCopyLists(unneeded))));
        }), failed)).thenCompose(v -> failed.get() == null ? CompletableFuture.<Void>completedFuture(null)
                : CompletableFuture.<Void>failedFuture(failed.get()));
    }

    /** A step of the housekeeping: its failure is kept in {@code failed} (the first one) and stops no other step. */
    private static CompletableFuture<Void> alone(CompletableFuture<Void> step, AtomicReference<Throwable> failed) {
        return step.exceptionally(e -> {
            failed.compareAndSet(null, e);
            return null;
        });
    }

    /** Whether {@code broker} is live (Pulsar's broker registry or the plugin's record). */
    private CompletableFuture<Boolean> ownerAlive(String broker) {
        if (broker == null) {
            return CompletableFuture.completedFuture(false);
        }
        return BrokerView.read(registry).thenApply(v -> v.live().contains(broker));
    }

    /** Takes the latest switch's migration over (under the lock) and runs the handler of its phase. */
    private CompletableFuture<Void> drive(SwitchDirective d) {
        long epoch = d.epoch();
        String target = d.target();
        return states.takeOver(epoch, target).thenCompose(s -> switch (s.phase()) {
            case PENDING -> pending.pending(epoch, target, s.runToken());
            case BUILD, PROMOTE -> runs.apply(epoch, target).run(s);
            default -> CompletableFuture.completedFuture(null);
        });
    }
}
