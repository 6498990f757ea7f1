package io.bcswitch.precheck;

import java.util.concurrent.CompletableFuture;

/** Reads and advances one bookie cluster's metadata (layout, id generator, bookie registrations). */
public interface ClusterMetadata {

    /** Current facts; fails if the metadata service does not answer in time or the cluster is not initialised. */
    CompletableFuture<ClusterFacts> facts();

    /**
     * Makes the cluster issue ids from {@code highOrderBits << 32} on, by creating
     * {@code idgen-long/HOB-<highOrderBits>}. Idempotent. Clients that cache the generator state must be
     * recreated afterwards.
     */
    CompletableFuture<Void> advanceHighOrderBits(long highOrderBits);
}
