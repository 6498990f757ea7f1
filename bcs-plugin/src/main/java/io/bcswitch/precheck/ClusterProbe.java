package io.bcswitch.precheck;

import io.bcswitch.registry.BookieClusterRecord;
import java.util.concurrent.CompletableFuture;

/**
 * Proves that brokers will be able to use a cluster: builds the BookKeeper client a broker builds for it (the
 * broker's own client factory and settings) and creates, writes, reads and deletes a probe ledger with the
 * broker's ensemble and quorum sizes. A cluster whose metadata looks healthy can still refuse writes (bookies
 * registered but unreachable, authentication, too few bookies for the placement policy); the precheck finds out
 * before the brokers do.
 */
@FunctionalInterface
public interface ClusterProbe {
    /** Probes nothing (for components without a broker, such as unit tests). */
    ClusterProbe NONE = cluster -> CompletableFuture.completedFuture(null);

    /** Completes with null when {@code cluster} took a ledger and gave it back, else with what went wrong. */
    CompletableFuture<String> probe(BookieClusterRecord cluster);
}
