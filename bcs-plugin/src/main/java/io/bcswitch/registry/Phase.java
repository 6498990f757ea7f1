package io.bcswitch.registry;

/** Where the migration that follows a switch stands. */
public enum Phase {
    /** waiting until every broker has applied the switch and finished its cutover */
    PENDING,
    /** copying and verifying closed non-data ledgers of older clusters onto the active one */
    BUILD,
    /** making verified copies the ledgers' home, one compare-and-set per ledger */
    PROMOTE,
    /** every planned ledger is home on the active cluster */
    DONE,
    /** finished; some ledgers failed, collided or were skipped (see issues) and stay where they are */
    DONE_WITH_FAILURES,
    /** a newer switch made this migration moot */
    SUPERSEDED,
    /** the switch was rolled back: promotions flipped back, copies scheduled for deletion */
    ROLLED_BACK;

    public boolean terminal() {
        return this == DONE || this == DONE_WITH_FAILURES || this == SUPERSEDED || this == ROLLED_BACK;
    }
}
