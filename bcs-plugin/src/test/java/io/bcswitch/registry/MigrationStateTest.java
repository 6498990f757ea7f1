package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The persisted migration state's own rules: bounded lists, phase moves, what a rollback leaves to delete. */
class MigrationStateTest {

    private static MigrationState started() {
        return MigrationState.start(3, "b", "broker-1", 100);
    }

    private static List<LedgerIssue> issues(int n) {
        return IntStream.range(0, n).mapToObj(i -> new LedgerIssue(i, "failed", "a", "X", "d")).toList();
    }

    @Test
    void issuesAreKeptUpToTheirBoundAndTheFirstOnesAreKept() {
        assertEquals(issues(MigrationState.MAX_ISSUES),
                started().edit().issues(issues(MigrationState.MAX_ISSUES)).build().issues());
        List<LedgerIssue> kept = started().edit().issues(issues(MigrationState.MAX_ISSUES + 1)).build().issues();
        assertEquals(issues(MigrationState.MAX_ISSUES), kept);
    }

    @Test
    void listsAnEarlierVersionWroteAreReadAndAbsentOnesAreEmpty() {
        MigrationState s = started();
        MigrationState old = new MigrationState(1, 3, "b", Phase.ROLLED_BACK, "o", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                null, List.of(7L, 8L), List.of(9L), 0, 0, 0, null, null, 0, 0, 0, 0);
        assertEquals(List.of(7L, 8L), old.built());
        assertEquals(List.of(9L), old.pendingDeletions());
        assertEquals(List.of(), s.built());
        assertEquals(List.of(), s.pendingDeletions());
        assertEquals(List.of(), s.issues());
        assertTrue(old.deletionsPending(), "an earlier version's list of copies to delete");
    }

    @Test
    void onlyARolledBackMigrationWithCopiesLeftHasDeletionsPending() {
        MigrationState rolledBack = started().moveTo(Phase.ROLLING_BACK, 1).moveTo(Phase.ROLLED_BACK, 2);
        assertFalse(rolledBack.deletionsPending());
        assertTrue(rolledBack.edit().deletions(1, 5).build().deletionsPending());
        assertFalse(started().edit().deletions(1, 5).build().deletionsPending(), "not rolled back");
    }

    @Test
    void movingKeepsTheBytesStillToCopyOnlyIntoBuildAndStampsTheEndOfATerminalPhase() {
        MigrationState building = started().edit().bytesRemaining(500).build().moveTo(Phase.BUILD, 200);
        assertEquals(500, building.bytesRemaining());
        assertEquals(0, building.finishedAt());
        assertEquals(200, building.updatedAt());
        MigrationState promoting = building.moveTo(Phase.PROMOTE, 300);
        assertEquals(0, promoting.bytesRemaining(), "nothing is left to copy once BUILD is over");
        MigrationState done = promoting.moveTo(Phase.DONE, 400);
        assertEquals(400, done.finishedAt());
        assertEquals(0, done.moveTo(Phase.BUILD, 500).finishedAt(), "a new run is not finished");
        assertThrows(IllegalStateException.class, () -> done.moveTo(Phase.PENDING, 600));
    }

    @Test
    void copiedBytesAddUpAcrossRuns() {
        assertEquals(30, started().edit().addBytes(10).addBytes(20).build().bytesCopied());
    }
}
