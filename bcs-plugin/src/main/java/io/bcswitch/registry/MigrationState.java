package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;

/**
 * Persisted progress of the migration that follows switch {@code switchEpoch}, at
 * {@code <configPath>/orchestrator/<switchEpoch>}. Written by the one broker running it; any broker resumes from
 * it. Counters are cumulative over runs; a resumed run recounts ledgers it finds already copied as
 * {@code alreadyPresent}. Every list in it is bounded: the ids of the copies made live in
 * {@code <configPath>/copies/<switchEpoch>/} ({@link IdChunk}s), the issues are capped at {@link #MAX_ISSUES}.
 *
 * @param copies             number of copy ids recorded in the copies chunks (what a rollback deletes)
 * @param built              ids copied by earlier versions, which kept them here (read, never written)
 * @param pendingDeletions   copies an earlier version's rollback left to delete (read, never written)
 * @param deleteAfterRelocationEpoch copies of a rolled-back migration are deleted once every live broker has
 *                           applied this relocation epoch
 * @param originalsDeleted   originals cleanup deleted from old clusters after this switch (a rollback is then
 *                           refused: they could no longer be read back)
 * @param rollbackTo         the cluster a requested rollback switches back to (set with ROLLING_BACK)
 * @param rollbackError      why the last attempt to finish the rollback failed (cleared when it succeeds)
 * @param rollbackFlipEpoch  relocation epoch that announced the rollback's flip of the promotions (0: not yet)
 * @param pendingDeletionCount copies of a rolled-back migration still to delete
 * @param notPromoted        planned ledgers whose home is not the target at the end, each with an issue
 * @param bytesRemaining     bytes of the planned ledgers the current run has not copied yet, as far as their
 *                           lengths are known (0 once BUILD is over; absent in records of earlier versions: 0)
 * @param runToken           the fencing token of the run that owns the migration: raised by every take-over, so
 *                           that a run that lost the migration (its broker paused past its session) is refused by
 *                           every write it makes after, on the same broker too (absent in records of earlier
 *                           versions: 0)
 * @param rollbackAskedAt    when the rollback was first asked for (set with ROLLING_BACK; 0 in records of earlier
 *                           versions, until its first failed attempt): a cluster that does not answer whether it still
 *                           holds a ledger's previous copy is waited for a bounded time from then
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MigrationState(int formatVersion, long switchEpoch, String target, Phase phase, String owner,
                             long startedAt, long updatedAt, long finishedAt, int planned, int copied,
                             int alreadyPresent, int promoted, int failed, int skipped, int collisions,
                             long bytesCopied, List<LedgerIssue> issues, List<Long> built,
                             List<Long> pendingDeletions, long deleteAfterRelocationEpoch, int originalsDeleted,
                             int copies, String rollbackTo, String rollbackError, long rollbackFlipEpoch,
                             int pendingDeletionCount, int notPromoted, long bytesRemaining, long runToken,
                             long rollbackAskedAt) {
    public static final int FORMAT_VERSION = 1;
    /** Issues kept in the record (the count fields are exact). */
    public static final int MAX_ISSUES = 200;

    public MigrationState {
        issues = issues == null ? List.of() : List.copyOf(issues.size() > MAX_ISSUES ? issues.subList(0, MAX_ISSUES)
                : issues);
        built = built == null ? List.of() : List.copyOf(built);
        pendingDeletions = pendingDeletions == null ? List.of() : List.copyOf(pendingDeletions);
    }

    /** A state of a version before run tokens and rollback request times (both 0). */
    public MigrationState(int formatVersion, long switchEpoch, String target, Phase phase, String owner,
                          long startedAt, long updatedAt, long finishedAt, int planned, int copied,
                          int alreadyPresent, int promoted, int failed, int skipped, int collisions,
                          long bytesCopied, List<LedgerIssue> issues, List<Long> built,
                          List<Long> pendingDeletions, long deleteAfterRelocationEpoch, int originalsDeleted,
                          int copies, String rollbackTo, String rollbackError, long rollbackFlipEpoch,
                          int pendingDeletionCount, int notPromoted, long bytesRemaining) {
        this(formatVersion, switchEpoch, target, phase, owner, startedAt, updatedAt, finishedAt, planned, copied,
                alreadyPresent, promoted, failed, skipped, collisions, bytesCopied, issues, built, pendingDeletions,
                deleteAfterRelocationEpoch, originalsDeleted, copies, rollbackTo, rollbackError, rollbackFlipEpoch,
                pendingDeletionCount, notPromoted, bytesRemaining, 0, 0);
    }

    public static MigrationState start(long epoch, String target, String owner, long now) {
        return new MigrationState(FORMAT_VERSION, epoch, target, Phase.PENDING, owner, now, now, 0, 0, 0, 0, 0, 0,
                0, 0, 0, List.of(), List.of(), List.of(), 0, 0, 0, null, null, 0, 0, 0, 0, 0, 0);
    }

    public Edit edit() {
        return new Edit(this);
    }

    /** This state moved to {@code next}; refused (IllegalStateException) when the phase table does not allow it. */
    public MigrationState moveTo(Phase next, long now) {
        if (!phase.canMove(next)) {
            throw new IllegalStateException("switch epoch " + switchEpoch + " migration cannot move from " + phase
                    + " to " + next);
        }
        return edit().phase(next).updatedAt(now).finishedAt(next.terminal() ? now : 0)
                .bytesRemaining(next == Phase.BUILD ? bytesRemaining : 0).build();
    }

    /** Copies a rollback may have left on {@code target} that are still to delete (legacy lists included). */
    public boolean deletionsPending() {
        return phase == Phase.ROLLED_BACK && (pendingDeletionCount > 0 || !pendingDeletions.isEmpty());
    }

    /** A mutable copy, for changing a few fields of this 29-field record. */
    public static final class Edit {
        private long switchEpoch;
        private String target;
        private Phase phase;
        private String owner;
        private long startedAt;
        private long updatedAt;
        private long finishedAt;
        private int planned;
        private int copied;
        private int alreadyPresent;
        private int promoted;
        private int failed;
        private int skipped;
        private int collisions;
        private long bytesCopied;
        private List<LedgerIssue> issues;
        private List<Long> built;
        private List<Long> pendingDeletions;
        private long deleteAfterRelocationEpoch;
        private int originalsDeleted;
        private int copies;
        private String rollbackTo;
        private String rollbackError;
        private long rollbackFlipEpoch;
        private int pendingDeletionCount;
        private int notPromoted;
        private long bytesRemaining;
        private long runToken;
        private long rollbackAskedAt;

        private Edit(MigrationState s) {
            switchEpoch = s.switchEpoch;
            target = s.target;
            phase = s.phase;
            owner = s.owner;
            startedAt = s.startedAt;
            updatedAt = s.updatedAt;
            finishedAt = s.finishedAt;
            planned = s.planned;
            copied = s.copied;
            alreadyPresent = s.alreadyPresent;
            promoted = s.promoted;
            failed = s.failed;
            skipped = s.skipped;
            collisions = s.collisions;
            bytesCopied = s.bytesCopied;
            issues = s.issues;
            built = s.built;
            pendingDeletions = s.pendingDeletions;
            deleteAfterRelocationEpoch = s.deleteAfterRelocationEpoch;
            originalsDeleted = s.originalsDeleted;
            copies = s.copies;
            rollbackTo = s.rollbackTo;
            rollbackError = s.rollbackError;
            rollbackFlipEpoch = s.rollbackFlipEpoch;
            pendingDeletionCount = s.pendingDeletionCount;
            notPromoted = s.notPromoted;
            bytesRemaining = s.bytesRemaining;
            runToken = s.runToken;
            rollbackAskedAt = s.rollbackAskedAt;
        }

        Edit phase(Phase p) {
            phase = p;
            return this;
        }

        public Edit owner(String o) {
            owner = o;
            return this;
        }

        /** A take-over: the run that takes the migration over holds the next token. */
        public Edit nextRunToken() {
            runToken++;
            return this;
        }

        public Edit updatedAt(long t) {
            updatedAt = t;
            return this;
        }

        Edit finishedAt(long t) {
            finishedAt = t;
            return this;
        }

        /** Counters of the current run: replace the previous run's (a resumed run redoes the plan). */
        public Edit progress(int planned, int copied, int alreadyPresent, int promoted, int failed, int skipped,
                             int collisions, int notPromoted) {
            this.planned = planned;
            this.copied = copied;
            this.alreadyPresent = alreadyPresent;
            this.promoted = promoted;
            this.failed = failed;
            this.skipped = skipped;
            this.collisions = collisions;
            this.notPromoted = notPromoted;
            return this;
        }

        public Edit bytesRemaining(long bytes) {
            bytesRemaining = bytes;
            return this;
        }

        public Edit addBytes(long bytes) {
            bytesCopied += bytes;
            return this;
        }

        public Edit issues(List<LedgerIssue> all) {
            issues = new ArrayList<>(all);
            return this;
        }

        public Edit copies(int n) {
            copies = n;
            return this;
        }

        public Edit rollback(String to, String error, long flipEpoch) {
            rollbackTo = to;
            rollbackError = error;
            rollbackFlipEpoch = flipEpoch;
            return this;
        }

        public Edit rollbackAskedAt(long t) {
            rollbackAskedAt = t;
            return this;
        }

        public Edit deletions(int pending, long afterRelocationEpoch) {
            pendingDeletionCount = pending;
            deleteAfterRelocationEpoch = afterRelocationEpoch;
            pendingDeletions = List.of(); // the legacy list is folded into the chunks when a rollback starts
            return this;
        }

        public Edit originalsDeleted(int total) {
            originalsDeleted = total;
            return this;
        }

        public MigrationState build() {
            return new MigrationState(FORMAT_VERSION, switchEpoch, target, phase, owner, startedAt, updatedAt,
                    finishedAt, planned, copied, alreadyPresent, promoted, failed, skipped, collisions, bytesCopied,
                    issues, built, pendingDeletions, deleteAfterRelocationEpoch, originalsDeleted, copies, rollbackTo,
                    rollbackError, rollbackFlipEpoch, pendingDeletionCount, notPromoted, bytesRemaining, runToken,
                    rollbackAskedAt);
        }
    }
}
