package io.bcswitch.registry;

/** A ledger the migration did not move, and why (failed, collision, skipped while open). */
public record LedgerIssue(long ledgerId, String kind, String cluster, String result, String detail) {
}
