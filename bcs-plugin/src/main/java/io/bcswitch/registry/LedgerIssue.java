package io.bcswitch.registry;

/** A ledger the migration did not move, and why (failed, collision, skipped while open). */
public record LedgerIssue(long ledgerId, String kind, String cluster, String result, String detail) {
    /**
     * The result of a ledger a rollback could not route back: it stays home on the rolled-back target ({@code
     * cluster}), nothing is lost, and {@code detail} says why.
     */
    public static final String NOT_REVERSED = "NOT_REVERSED";
}
