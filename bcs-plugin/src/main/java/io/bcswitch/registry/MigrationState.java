package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.ArrayList;
import java.util.List;

/**
 * Persisted progress of the migration that follows switch {@code switchEpoch}, at
 * {@code <configPath>/orchestrator/<switchEpoch>}. Written by the one broker running it; any broker
 * resumes from it. Counters are cumulative over runs; a resumed run recounts ledgers it finds already
 * copied as {@code alreadyPresent}.
 *
 * @param built             ids copied and verified on {@code target} by this migration (what a rollback deletes)
 * @param pendingDeletions  copies to delete from {@code target} after a rollback, once every live broker
 *                          has applied relocation epoch {@code deleteAfterRelocationEpoch}
 * @param originalsDeleted  originals cleanup deleted from old clusters after this switch (a rollback is
 *                          then refused: they could no longer be read back)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record MigrationState(int formatVersion, long switchEpoch, String target, Phase phase, String owner,
                             long startedAt, long updatedAt, long finishedAt, int planned, int copied,
                             int alreadyPresent, int promoted, int failed, int skipped, int collisions,
                             long bytesCopied, List<LedgerIssue> issues, List<Long> built,
                             List<Long> pendingDeletions, long deleteAfterRelocationEpoch, int originalsDeleted) {
    public static final int FORMAT_VERSION = 1;
    /** Issues kept in the record (the count fields are exact). */
    public static final int MAX_ISSUES = 200;

    public MigrationState {
        issues = issues == null ? List.of() : List.copyOf(issues);
        built = built == null ? List.of() : List.copyOf(built);
        pendingDeletions = pendingDeletions == null ? List.of() : List.copyOf(pendingDeletions);
    }

    public static MigrationState start(long epoch, String target, String owner, long now) {
        return new MigrationState(FORMAT_VERSION, epoch, target, Phase.PENDING, owner, now, now, 0, 0, 0, 0, 0, 0,
                0, 0, 0, List.of(), List.of(), List.of(), 0, 0);
    }

    public MigrationState withPhase(Phase p, long now) {
        return new MigrationState(formatVersion, switchEpoch, target, p, owner, startedAt, now,
                p.terminal() ? now : finishedAt, planned, copied, alreadyPresent, promoted, failed, skipped,
                collisions, bytesCopied, issues, built, pendingDeletions, deleteAfterRelocationEpoch, originalsDeleted);
    }

    public MigrationState withOwner(String broker, long now) {
        return new MigrationState(formatVersion, switchEpoch, target, phase, broker, startedAt, now, finishedAt,
                planned, copied, alreadyPresent, promoted, failed, skipped, collisions, bytesCopied, issues, built,
                pendingDeletions, deleteAfterRelocationEpoch, originalsDeleted);
    }

    /** Counters of one BUILD or PROMOTE pass replace the previous pass's (a resumed run redoes the plan). */
    public MigrationState withProgress(int planned, int copied, int alreadyPresent, int promoted, int failed,
                                       int skipped, int collisions, long bytes, List<LedgerIssue> issues,
                                       List<Long> built, long now) {
        List<LedgerIssue> kept = issues.size() > MAX_ISSUES ? new ArrayList<>(issues.subList(0, MAX_ISSUES)) : issues;
        return new MigrationState(formatVersion, switchEpoch, target, phase, owner, startedAt, now, finishedAt,
                planned, copied, alreadyPresent, promoted, failed, skipped, collisions, bytesCopied + bytes, kept,
                built, pendingDeletions, deleteAfterRelocationEpoch, originalsDeleted);
    }

    public MigrationState rolledBack(List<Long> toDelete, long afterEpoch, long now) {
        return new MigrationState(formatVersion, switchEpoch, target, Phase.ROLLED_BACK, owner, startedAt, now, now,
                planned, copied, alreadyPresent, 0, failed, skipped, collisions, bytesCopied, issues, built,
                toDelete, afterEpoch, originalsDeleted);
    }

    /** Copies still to delete after a rollback, and the relocation epoch every broker must have applied first. */
    public MigrationState withDeletions(List<Long> remaining, long afterRelocationEpoch, long now) {
        return new MigrationState(formatVersion, switchEpoch, target, phase, owner, startedAt, now, finishedAt,
                planned, copied, alreadyPresent, promoted, failed, skipped, collisions, bytesCopied, issues, built,
                remaining, afterRelocationEpoch, originalsDeleted);
    }

    public MigrationState withOriginalsDeleted(int more, long now) {
        return new MigrationState(formatVersion, switchEpoch, target, phase, owner, startedAt, now, finishedAt,
                planned, copied, alreadyPresent, promoted, failed, skipped, collisions, bytesCopied, issues, built,
                pendingDeletions, deleteAfterRelocationEpoch, originalsDeleted + more);
    }
}
