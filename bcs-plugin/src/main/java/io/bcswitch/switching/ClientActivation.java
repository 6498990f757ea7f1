package io.bcswitch.switching;

import java.util.concurrent.CompletableFuture;

/** Prepares this broker's BookKeeper clients for a cluster that has just been given a new id range. */
@FunctionalInterface
public interface ClientActivation {
    /** Completes when creates through the routing client may go to {@code cluster}. */
    CompletableFuture<Void> activate(String cluster);

    /**
     * Like {@link #activate(String)} for the switch whose range of {@code cluster} starts at {@code firstLedgerId}:
     * uses the clients {@link #prepare} built for it, if any.
     */
    default CompletableFuture<Void> activate(String cluster, long firstLedgerId) {
        return activate(cluster);
    }

    /**
     * Builds (and warms) the clients a switch to {@code cluster}, whose range starts at {@code firstLedgerId}, will
     * use, without using them yet. Completes when they are ready; a failure only means the switch builds them
     * itself.
     */
    default CompletableFuture<Void> prepare(String cluster, long firstLedgerId) {
        return CompletableFuture.completedFuture(null);
    }
}
