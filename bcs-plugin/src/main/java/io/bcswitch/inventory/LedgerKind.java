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
     * A number a cursor's properties hold under a key Pulsar does not document, which may name a ledger (the compacted
     * ledger is {@link #COMPACTION}; deduplication's sequence ids and a replicated subscription's flag are not
     * references at all). Never copied; never deleted by cleanup while named; verify and the removal verdict skip it,
     * the drain report counts it where a ledger has its id, unregister refuses while the cluster owns its id.
     */
    OTHER
}
