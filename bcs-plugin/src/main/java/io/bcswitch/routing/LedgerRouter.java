package io.bcswitch.routing;

import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.BookKeeper;

/**
 * Picks the BookKeeper client for each ledger operation: creates go to the active cluster, every
 * operation on an existing ledger to the cluster that owns its id.
 */
public interface LedgerRouter {

    /** The active cluster and its client. */
    CompletableFuture<Target> forCreate();

    /** The cluster owning {@code ledgerId}; fails with {@link UnroutableLedgerException} when none does. */
    CompletableFuture<Target> forLedger(long ledgerId);

    /**
     * For a relocated ledger, the cluster holding its original (the one that issued its id), when that is
     * not its home; empty otherwise, and when that cluster's client was closed on request (it is retired: nothing
     * there is read again). Used to delete the original when Pulsar deletes the ledger.
     */
    default CompletableFuture<java.util.Optional<Target>> originalOf(long ledgerId) {
        return CompletableFuture.completedFuture(java.util.Optional.empty());
    }

    /**
     * For a ledger the migration moved (it has a relocation), every other cluster that may hold a copy the migration
     * made of it: each cluster that ever issued a range, but its home and its original ({@link #originalOf}). Used to
     * delete those copies when Pulsar deletes the ledger: a ledger moved twice (A to B, then B to C) has one on B
     * that is neither. Empty for a ledger never moved; a cluster whose client cannot be built, or was closed on
     * request (a retired cluster), is left out: what is left there is cleanup's.
     */
    default CompletableFuture<java.util.List<Target>> copyHoldersOf(long ledgerId) {
        return CompletableFuture.completedFuture(java.util.List.of());
    }

    /**
     * How long a read of a ledger on {@code cluster} may take before it fails, in milliseconds; 0: only BookKeeper's
     * own timeouts. Asked at each read, since a cluster stops being the active one at a switch.
     */
    default long readTimeoutMillis(String cluster) {
        return 0;
    }

    /** A routing decision. */
    record Target(String cluster, BookKeeper client) {
    }
}
