package io.bcswitch.migration;

import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryStore;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PENDING: the migration waits until every live broker has applied the switch and finished its cutover, so that
 * nothing is copied while a broker may still write to a ledger of an old cluster; then it moves to BUILD.
 */
final class PendingPhase {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    private final RegistryStore registry;
    private final MigrationStates states;
    private final BiFunction<Long, String, MigrationRun> runs;

    /** @param runs a run of switch (epoch)'s migration to (target) */
    PendingPhase(RegistryStore registry, MigrationStates states, BiFunction<Long, String, MigrationRun> runs) {
        this.registry = registry;
        this.states = states;
        this.runs = runs;
    }

    /**
     * Moves switch {@code epoch}'s migration to BUILD and runs it once every cutover is done; else waits. The move is
     * the run's first write: made only while the run holding {@code token} owns the migration.
     */
    CompletableFuture<Void> pending(long epoch, String target, long token) {
        return BrokerView.read(registry).thenCompose(brokers -> {
            if (!brokers.cutoverComplete(epoch)) {
                log.info("switch epoch={} migration to bookie-cluster={} waits for the cutover of broker(s) {}", epoch,
                        target, brokers.cutoverPending(epoch));
                return CompletableFuture.completedFuture(null);
            }
            return states.transition(epoch, token, Phase.PENDING, Phase.BUILD).thenCompose(s ->
                    states.goOn(s, token) && s.phase() == Phase.BUILD
                    ? runs.apply(epoch, target).run(s)
                    : CompletableFuture.completedFuture(null));
        });
    }
}
