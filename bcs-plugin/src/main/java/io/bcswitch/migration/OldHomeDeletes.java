package io.bcswitch.migration;

import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Relocation;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows up a delete of Pulsar's that went to a ledger's old home: a broker routes by the relocation table it has
 * applied, so a delete it routed just before applying a promotion deletes the original while the copy has become the
 * home. Pulsar never uses a ledger again once it deleted it, so that copy is referenced by nothing, on the active
 * cluster, where nothing else would ever delete it. PROMOTE catches the deletes that finished before every broker
 * applied its batch; this catches the ones that were already on their way.
 *
 * <p>Only a copy the migration made is deleted (its mark says so): an original that is home again after a rollback is
 * left alone, the broker deletes it as the original of the ledger it deleted.
 */
final class OldHomeDeletes {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final RegistryStore registry;
    private final LedgerCopier copier;
    private final Executor executor;

    /** @param executor where the follow-up starts: never on the BookKeeper callback thread that reports the delete */
    OldHomeDeletes(RegistryStore registry, LedgerCopier copier, Executor executor) {
        this.registry = registry;
        this.copier = copier;
        this.executor = executor;
    }

    /** Completes with whether a copy was deleted; never fails (a copy that stays is logged). */
    CompletableFuture<Boolean> deleted(long ledgerId, String cluster) {
        CompletableFuture<List<Long>> started;
        try {
            started = CompletableFuture.supplyAsync(() -> List.of(ledgerId), executor);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(false); // the broker is closing
        }
        return started.thenCompose(registry::readRelocations)
                .thenCompose(read -> {
                    Optional<String> home = read.getOrDefault(ledgerId, Optional.empty()).map(Relocation::home);
                    if (home.isEmpty() || home.get().equals(cluster)) {
                        return CompletableFuture.completedFuture(false);
                    }
                    return copier.facts(ledgerId, home.get()).thenCompose(copy -> {
                        if (copy.isEmpty() || copy.get().copyOf() == null) {
                            return CompletableFuture.completedFuture(false);
                        }
                        log.info("ledger={} deleted by Pulsar on bookie-cluster={}, its home before a promotion this "
                                + "broker had not applied yet; deleting its copy on bookie-cluster={}, its home now",
                                ledgerId, cluster, home.get());
                        return copier.delete(ledgerId, home.get()).thenApply(v -> true);
                    });
                }).exceptionally(e -> {
                    log.warn("ledger={} deleted by Pulsar on bookie-cluster={}: could not tell whether a copy of it "
                            + "became its home elsewhere meanwhile (the audit names such a copy ORPHAN_COPY): {}",
                            ledgerId, cluster, e.toString());
                    return false;
                });
    }
}
