package io.bcswitch.inventory;

/**
 * One ledger the broker cluster's metadata refers to.
 *
 * @param ledgerId     the BookKeeper ledger id
 * @param kind         what it holds
 * @param referencedBy what refers to it: a managed-ledger name (with {@code /cursor} for a cursor) or a
 *                     schema id
 */
public record LedgerReference(long ledgerId, LedgerKind kind, String referencedBy) {
}
