package io.bcswitch.migration;

import io.bcswitch.migration.MigrationOrchestrator.RollbackOutcome;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.Versioned;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's actions on a migration (retry, rollback): what the stored state already refuses is answered at
 * once; the rest is queued onto the driver, so that it never runs beside a pass of this broker.
 */
final class OperatorRequests {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    private final MigrationStates states;
    private final Rollback rollback;
    private final MigrationDriver driver;
    private final Supplier<String> brokerId;

    OperatorRequests(MigrationStates states, Rollback rollback, MigrationDriver driver,
                     Supplier<String> brokerId) {
        this.states = states;
        this.rollback = rollback;
        this.driver = driver;
        this.brokerId = brokerId;
    }

    /** Switch {@code epoch}'s finished migration, run again on this broker ({@link MigrationOrchestrator#retry}). */
    CompletableFuture<MigrationState> retry(long epoch) {
        // what the stored state already refuses is answered at once; only a re-run waits in the driver's queue for
        // the pass that holds the lock (which can wait 30 s per PROMOTE batch for a lagging broker), and checks again
        return states.read(epoch).thenCompose(now -> {
            refuseUnlessFinished(epoch, now);
            return driver.enqueue(() -> states.read(epoch).thenCompose(cur -> {
                MigrationState s = refuseUnlessFinished(epoch, cur);
                return states.transition(epoch, Set.of(s.phase()), Phase.BUILD,
                        x -> x.edit().owner(brokerId.get()).build());
            }).thenApply(s -> {
                if (s.phase() != Phase.BUILD || !s.owner().equals(brokerId.get())) {
                    throw RegistryException.conflict("the migration of switch epoch " + epoch + " changed meanwhile ("
                            + s.phase() + " on broker " + s.owner() + ")");
                }
                log.info("switch epoch={} migration to bookie-cluster={} runs again on broker {} (operator request)",
                        epoch, s.target(), brokerId.get());
                driver.tick();
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

    /** Switch {@code epoch}'s rollback, recorded and finished ({@link MigrationOrchestrator#rollBack}). */
    CompletableFuture<RollbackOutcome> rollBack(long epoch, String target, String origin) {
        return rollback.recordIntent(epoch, target, origin).thenCompose(s -> {
            if (s.phase() == Phase.ROLLED_BACK) {
                return rollback.rolledBackEarlier(s);
            }
            log.info("switch epoch={} rollback to bookie-cluster={} recorded; finishing it on broker {}", epoch,
                    s.rollbackTo(), brokerId.get());
            return driver.enqueue(() -> rollback.finishWhenLocked(epoch));
        });
    }
}
