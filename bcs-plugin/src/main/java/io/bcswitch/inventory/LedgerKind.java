package io.bcswitch.inventory;

/** What a ledger referenced by the broker cluster holds. */
public enum LedgerKind {
    /** A managed ledger's data (topic messages, transaction logs, pending acks). */
    DATA,
    /** A cursor's position log. */
    CURSOR,
    /** One schema version. */
    SCHEMA,
    /** A compacted topic's compacted view. */
    COMPACTION,
    /**
     * A ledger id named in a cursor's properties other than the compacted ledger (for example
     * delayed-delivery bucket snapshots). Never copied; never deleted by cleanup while named.
     */
    OTHER
}
