package io.bcswitch.migration;

import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.ConfirmedChange;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Marks a bookie cluster DEPRECATED (brokers then close its clients) once it holds nothing the brokers reference, for
 * close-client and after a cleanup. The drain report it decides from takes seconds to read, so the decision is made
 * under what was read before it, and stands only if that did not change ({@link ConfirmedChange}): the switch
 * directive (a switch to the cluster), and, when the cluster is the one a rollback of the latest switch would go back
 * to, that switch's migration state (a rollback's intent).
 */
final class ClusterDeprecation {
    private static final Logger log = LoggerFactory.getLogger(CleanupService.class);

    /** What a request to deprecate a cluster came to. */
    enum Outcome {
        /** it is DEPRECATED (now, or it was already) */
        DEPRECATED,
        /** it still holds ledgers the brokers reference, or a broker holds a ledger open on it */
        NOT_DRAINED,
        /** it is the active cluster, or a rollback under way goes back to it */
        IN_USE,
        /** a switch to it, or a rollback's intent to go back to it, was committed while it was decided */
        OVERTAKEN
    }

    private final RegistryStore registry;
    private final MigrationOrchestrator orchestrator;
    private final DrainReports drain;
    private final ConfirmedChange confirmed;
    private final Clock clock;

    ClusterDeprecation(RegistryStore registry, MigrationOrchestrator orchestrator, DrainReports drain, Clock clock) {
        this.registry = registry;
        this.orchestrator = orchestrator;
        this.drain = drain;
        this.confirmed = new ConfirmedChange(registry);
        this.clock = clock;
    }

    CompletableFuture<Outcome> deprecate(String cluster) {
        String path = registry.paths().cluster(cluster);
        // read before deciding, in this order: the directive, the state a rollback would record its intent in, then
        // the record (see ConfirmedChange for why the order matters)
        return registry.readDirective().thenCompose(d -> ConfirmedChange.underSwitch(registry, d).thenCompose(
                underSwitch -> rollbackState(d, cluster).thenCompose(state ->
                registry.read(path, BookieClusterRecord.class).thenCompose(rec -> {
                    if (!rec.present()) {
                        throw RegistryException.notFound("bookie cluster '" + cluster + "' is not registered");
                    }
                    if (d.present() && cluster.equals(d.value().target())) {
                        return CompletableFuture.completedFuture(Outcome.IN_USE);
                    }
                    if (state.isPresent() && state.get().present()
                            && state.get().value().phase() == Phase.ROLLING_BACK) {
                        log.info("bookie-cluster={} is not deprecated: the rollback of switch epoch={} goes back to it",
                                cluster, d.value().epoch());
                        return CompletableFuture.completedFuture(Outcome.IN_USE);
                    }
                    return drain.report(cluster).thenCompose(report -> {
                        if (!report.empty() || report.active() || !report.openHandles().isEmpty()) {
                            return CompletableFuture.completedFuture(Outcome.NOT_DRAINED);
                        }
                        List<ConfirmedChange.Under> under = new ArrayList<>(underSwitch);
                        state.ifPresent(s -> under.add(ConfirmedChange.Under.of(
                                registry.paths().orchestrator(d.value().epoch()), s)));
                        return write(cluster, rec, under);
                    });
                }))));
    }

    /**
     * The migration state of the latest switch when a rollback of it would go back to {@code cluster} (its origin),
     * as read (absent: none yet); empty when no rollback goes there.
     */
    private CompletableFuture<Optional<Versioned<MigrationState>>> rollbackState(Versioned<SwitchDirective> d,
                                                                                 String cluster) {
        if (!d.present() || !cluster.equals(d.value().origin())) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return orchestrator.readState(d.value().epoch()).thenApply(Optional::of);
    }

    private CompletableFuture<Outcome> write(String cluster, Versioned<BookieClusterRecord> rec,
                                             List<ConfirmedChange.Under> under) {
        CompletableFuture<ConfirmedChange.Outcome> changed = rec.value().status() == ClusterStatus.DEPRECATED
                ? CompletableFuture.completedFuture(ConfirmedChange.Outcome.STANDS)
                : confirmed.change(registry.paths().cluster(cluster), rec,
                        Optional.of(rec.value().withStatus(ClusterStatus.DEPRECATED)), under);
        return changed.thenCompose(outcome -> {
            if (outcome != ConfirmedChange.Outcome.STANDS) {
                log.info("bookie-cluster={} is not deprecated: a switch, a rollback or a change of its record came "
                        + "while it was decided (outcome={})", cluster, outcome);
                return CompletableFuture.completedFuture(Outcome.OVERTAKEN);
            }
            // no relocation changed: brokers react to the bump by closing the cluster's clients (a change of the
            // table not announced yet stays marked: this epoch does not announce it)
            return registry.bumpRelocationEpochWithoutChange(clock.millis()).thenApply(x -> {
                log.info("bookie-cluster={} holds nothing the brokers reference: DEPRECATED; its clients are closed",
                        cluster);
                return Outcome.DEPRECATED;
            });
        });
    }
}
