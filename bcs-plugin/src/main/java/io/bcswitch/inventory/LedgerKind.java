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
    COMPACTION
}
