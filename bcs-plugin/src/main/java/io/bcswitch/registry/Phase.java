package io.bcswitch.registry;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Where the migration that follows a switch stands, and the only moves between phases there are. Every change
 * of a stored migration goes through {@link #canMove}: a move the table does not list is a bug, refused.
 *
 * <pre>
 * PENDING --&gt; BUILD --&gt; PROMOTE --&gt; DONE | DONE_WITH_FAILURES --(retry)--&gt; BUILD
 *    \          \          \               |
 *     +----------+----------+---------------+--&gt; ROLLING_BACK --&gt; ROLLED_BACK
 *     +----------+----------+--&gt; SUPERSEDED (a newer switch)
 * </pre>
 */
public enum Phase {
    /** waiting until every broker has applied the switch and finished its cutover */
    PENDING,
    /** copying and verifying closed non-data ledgers of older clusters onto the active one */
    BUILD,
    /** making verified copies the ledgers' home, one compare-and-set per shard of the relocation table */
    PROMOTE,
    /** every planned ledger is home on the active cluster */
    DONE,
    /** finished; some ledgers failed, collided or were skipped (see issues) and stay where they are */
    DONE_WITH_FAILURES,
    /** a newer switch made this migration moot */
    SUPERSEDED,
    /**
     * the operator asked for a rollback (the intent is recorded first): promotions are flipped back, then the
     * brokers are switched back; any broker finishes it if the one that started died, and asking again resumes it
     */
    ROLLING_BACK,
    /** the switch was rolled back: promotions flipped back, brokers switched back, copies scheduled for deletion */
    ROLLED_BACK;

    private static final Map<Phase, Set<Phase>> NEXT = Map.of(
            PENDING, EnumSet.of(BUILD, SUPERSEDED, ROLLING_BACK),
            BUILD, EnumSet.of(PROMOTE, SUPERSEDED, ROLLING_BACK),
            PROMOTE, EnumSet.of(DONE, DONE_WITH_FAILURES, SUPERSEDED, ROLLING_BACK),
            DONE, EnumSet.of(BUILD, ROLLING_BACK),
            DONE_WITH_FAILURES, EnumSet.of(BUILD, ROLLING_BACK),
            SUPERSEDED, EnumSet.noneOf(Phase.class),
            ROLLING_BACK, EnumSet.of(ROLLED_BACK),
            ROLLED_BACK, EnumSet.noneOf(Phase.class));

    /** Whether a migration may move from {@code this} to {@code next}. */
    public boolean canMove(Phase next) {
        return NEXT.get(this).contains(next);
    }

    /** No further work of the migration itself (deletions after a rollback may still be due). */
    public boolean terminal() {
        return this == DONE || this == DONE_WITH_FAILURES || this == SUPERSEDED || this == ROLLED_BACK;
    }

    /** A copy-and-promote run must stop: the operator or a newer switch took the migration elsewhere. */
    public boolean stopsRuns() {
        return this == SUPERSEDED || this == ROLLING_BACK || this == ROLLED_BACK;
    }
}
