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
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * One pass of the driver: finishes an interrupted rollback, runs or resumes the latest switch's migration when it is
 * this broker's to run (the broker that accepted the switch starts at once, any other takes over a migration whose
 * broker is gone), then the deletions that are due. The reads every pass makes are cheap; the rest happens only
 * when there is work.
 */
final class MigrationPass {
    /** Other brokers leave a fresh switch to the broker that accepted it for this long. */
    static final long START_GRACE_MILLIS = 10_000;

    private final RegistryStore registry;
    private final MigrationStates states;
    private final OrchestratorLock lock;
    private final Rollback rollback;
    private final RolledBackCopies copies;
    private final PendingPhase pending;
    private final BiFunction<Long, String, MigrationRun> runs;
    private final Clock clock;
    private final Supplier<String> brokerId;
    private final Set<Long> acceptedHere = ConcurrentHashMap.newKeySet();

    /** @param runs a run of switch (epoch)'s migration to (target) */
    MigrationPass(RegistryStore registry, MigrationStates states, OrchestratorLock lock, Rollback rollback,
                  RolledBackCopies copies, PendingPhase pending, BiFunction<Long, String, MigrationRun> runs,
                  Clock clock, Supplier<String> brokerId) {
        this.registry = registry;
        this.states = states;
        this.lock = lock;
        this.rollback = rollback;
        this.copies = copies;
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
            return states.read(d.epoch()).thenCompose(state -> {
                states.sawLatest(d, state.present() ? state.value() : null);
                boolean work = !state.present() || !state.value().phase().terminal();
                if (work && state.present() && state.value().phase() == Phase.ROLLING_BACK) {
                    return rollback.resume();
                }
                if (!work) {
                    return states.all().thenCompose(this::housekeeping);
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
            });
        });
    }

    /** Rollbacks to finish, deletions that are due, copy lists nobody needs any more. */
    private CompletableFuture<Void> housekeeping(List<MigrationState> all) {
        boolean rollingBack = all.stream().anyMatch(s -> s.phase() == Phase.ROLLING_BACK);
        boolean deletions = all.stream().anyMatch(MigrationState::deletionsPending);
        if (rollingBack) {
            return rollback.resume();
        }
        return registry.copyEpochs().thenCompose(epochs -> {
            long latest = all.stream().mapToLong(MigrationState::switchEpoch).max().orElse(0);
            List<Long> unneeded = epochs.stream().filter(e -> e < latest && all.stream()
                    .noneMatch(s -> s.switchEpoch() == e && s.phase() == Phase.ROLLED_BACK)).toList();
            if (!deletions && unneeded.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            return lock.locked(() -> copies.process(all).thenCompose(v -> copies.dropCopyLists(unneeded)));
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
