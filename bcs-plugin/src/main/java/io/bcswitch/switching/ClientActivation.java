package io.bcswitch.switching;

import java.util.concurrent.CompletableFuture;

/** Prepares this broker's BookKeeper clients for a cluster that has just been given a new id range. */
@FunctionalInterface
public interface ClientActivation {
    /** Completes when creates through the routing client may go to {@code cluster}. */
    CompletableFuture<Void> activate(String cluster);
}
