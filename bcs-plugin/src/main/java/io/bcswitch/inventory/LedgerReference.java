package io.bcswitch.inventory;

/**
 * One ledger the broker cluster's metadata refers to.
 *
 * @param ledgerId     the BookKeeper ledger id
 * @param kind         what it holds
 * @param referencedBy what refers to it: a managed-ledger name (with {@code /cursor} for a cursor) or a
 *                     schema id
 * @param size         bytes, when the referring metadata records it (data ledgers), else null
 * @param closedAt     epoch millis the ledger was closed, when recorded (data ledgers), else null
 */
public record LedgerReference(long ledgerId, LedgerKind kind, String referencedBy, Long size, Long closedAt) {

    public LedgerReference(long ledgerId, LedgerKind kind, String referencedBy) {
        this(ledgerId, kind, referencedBy, null, null);
    }
}
