package io.bcswitch.migration;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.switching.SwitchService;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The operator's migration actions: rollback, retry, drain report, cleanup, retiring a cluster's client. */
public final class MigrationService {
    private static final Logger log = LoggerFactory.getLogger(MigrationService.class);

    private final RegistryStore registry;
    private final SwitchService switches;
    private final MigrationOrchestrator orchestrator;
    private final CleanupService cleanup;
    private final DrainReports drain;
    private final SwitchConfig.Migration config;
    private final Clock clock;
    private final io.bcswitch.audit.InvariantAuditor auditor;

    public MigrationService(RegistryStore registry, SwitchService switches, MigrationOrchestrator orchestrator,
                            CleanupService cleanup, DrainReports drain, SwitchConfig.Migration config, Clock clock,
                            io.bcswitch.audit.InvariantAuditor auditor) {
        this.registry = registry;
        this.switches = switches;
        this.orchestrator = orchestrator;
        this.cleanup = cleanup;
        this.drain = drain;
        this.config = config;
        this.clock = clock;
        this.auditor = auditor;
    }

    /** Every violation of the plugin's invariants (see {@link io.bcswitch.audit.InvariantAuditor}); changes nothing. */
    public CompletableFuture<io.bcswitch.audit.VerifyReport> verify(boolean deep) {
        if (auditor == null) {
            return CompletableFuture.failedFuture(RegistryException.unavailable("verify is not available here"));
        }
        return auditor.verify(deep);
    }

    /**
     * Undoes the latest switch within {@code rollbackWindowHours}: checks the previous cluster can take writes
     * again (precheck), records the rollback (the migration becomes ROLLING_BACK: nothing of it runs any more),
     * flips the switch's promotions back so reads go to the originals, then switches back to it (with a fresh
     * ledger-id range) and marks the migration ROLLED_BACK. If a step fails, the rollback stays recorded, status
     * shows why, and asking again (or the orchestrator by itself) finishes it. The switch's copies are deleted
     * later, once every live broker routes without them.
     */
    public CompletableFuture<RollbackResult> rollback() {
        return RegistryView.read(registry).thenCompose(view -> {
            if (!view.directive().present()) {
                throw RegistryException.conflict("no switch has been made; there is nothing to roll back");
            }
            var d = view.directive().value();
            return orchestrator.readState(d.epoch()).thenCompose(state -> {
                boolean resuming = state.present() && state.value().phase() == io.bcswitch.registry.Phase.ROLLING_BACK;
                long ageMillis = clock.millis() - d.ts();
                long window = config.rollbackWindowHours() * 3_600_000L;
                if (!resuming && ageMillis > window) {
                    throw RegistryException.conflict("the rollback window of " + config.rollbackWindowHours()
                            + " h for switch epoch " + d.epoch() + " (to '" + d.target() + "') has passed ("
                            + String.format("%.1f", ageMillis / 3_600_000.0) + " h ago); switch to '" + d.origin()
                            + "' instead if it is still wanted");
                }
                if (state.present() && state.value().originalsDeleted() > 0) {
                    throw RegistryException.conflict("cleanup already deleted " + state.value().originalsDeleted()
                            + " original ledger(s) from old clusters after switch epoch " + d.epoch()
                            + "; a rollback could not read them back");
                }
                return switches.precheck(d.origin());
            }).thenCompose(pre -> {
                if (!pre.ok()) {
                    throw new RegistryException(RegistryException.Kind.CONFLICT, "cannot roll back to '" + d.origin()
                            + "': " + String.join("; ", pre.problems()), pre);
                }
                return orchestrator.rollBack(d.epoch(), d.target(), d.origin());
            }).thenApply(outcome -> {
                List<io.bcswitch.registry.LedgerIssue> kept = outcome.state().issues().stream()
                        .filter(i -> i.result().equals(io.bcswitch.registry.LedgerIssue.NOT_REVERSED)).toList();
                int promoted = (int) view.relocations().values().stream()
                        .filter(r -> r.switchEpoch() == d.epoch()).count();
                return new RollbackResult(d.epoch(), outcome.switched(), Math.max(0, promoted - kept.size()),
                        outcome.state().pendingDeletionCount(), kept);
            });
        });
    }

    /** Runs the latest switch's finished migration again (see {@link MigrationOrchestrator#retry}). */
    public CompletableFuture<MigrationState> retryMigration() {
        return registry.readDirective().thenCompose(d -> {
            if (!d.present()) {
                throw RegistryException.conflict("no switch has been made; there is no migration to run again");
            }
            return orchestrator.retry(d.value().epoch());
        });
    }

    public CompletableFuture<DrainReport> drainReport(String cluster) {
        return drain.report(cluster);
    }

    public CompletableFuture<CleanupResult> cleanup(String src, boolean dryRun, int maxDeletions, boolean force) {
        return cleanup.cleanup(src, dryRun, maxDeletions, force);
    }

    /** Cleanup targets on {@code src}, or on every registered cluster that is not active when null. */
    public CompletableFuture<List<CleanupTarget>> cleanupTargets(String src) {
        return src != null ? cleanup.targets(src) : cleanup.targetsOnInactiveClusters();
    }

    /** Marks {@code cluster} DEPRECATED (brokers close its clients); refused while it holds referenced ledgers. */
    public CompletableFuture<io.bcswitch.registry.BookieClusterRecord> closeClient(String cluster) {
        return switches.get(cluster).thenCompose(rec -> RegistryView.read(registry).thenCompose(view -> {
            if (cluster.equals(view.activeCluster())) {
                throw RegistryException.conflict("bookie cluster '" + cluster + "' is the active cluster; its clients "
                        + "stay open");
            }
            return cleanup.deprecate(cluster);
        }).thenCompose(outcome -> {
            if (outcome == ClusterDeprecation.Outcome.DEPRECATED
                    || rec.status() == io.bcswitch.registry.ClusterStatus.DEPRECATED) {
                return switches.get(cluster);
            }
            switch (outcome) {
                case OVERTAKEN -> throw RegistryException.conflict("a switch or a rollback involving bookie cluster '"
                        + cluster + "' was made while close-client decided; its clients stay open (see status)");
                case IN_USE -> throw RegistryException.conflict("bookie cluster '" + cluster + "' is the active "
                        + "cluster, or a rollback under way goes back to it; its clients stay open");
                default -> throw RegistryException.conflict("bookie cluster '" + cluster + "' still holds ledgers "
                        + "the brokers reference, or brokers hold ledger handles open on it (see GET /drain/" + cluster
                        + "); its clients stay open");
            }
        }));
    }

    public CompletableFuture<java.util.Optional<MigrationState>> latest() {
        return orchestrator.latest();
    }
}
