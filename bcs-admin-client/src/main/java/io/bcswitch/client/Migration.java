package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * Progress of the migration that follows a switch: phase (PENDING, BUILD, PROMOTE, DONE,
 * DONE_WITH_FAILURES, SUPERSEDED, ROLLING_BACK, ROLLED_BACK), the broker running it, counts and the ledgers it
 * could not move ({@code issues}).
 *
 * @param copies               copies the migration made (what a rollback deletes)
 * @param rollbackTo           the cluster a requested rollback switches back to (set with ROLLING_BACK), or null
 * @param rollbackError        why the last attempt to finish the rollback failed (null once it succeeds); any
 *                             broker retries it, and asking for the rollback again resumes it
 * @param pendingDeletionCount copies of a rolled-back migration still to delete
 * @param notPromoted          planned ledgers whose home is not the target at the end, each with an issue
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Migration(long switchEpoch, String target, String phase, String owner, long startedAt, long updatedAt,
                        long finishedAt, int planned, int copied, int alreadyPresent, int promoted, int failed,
                        int skipped, int collisions, long bytesCopied, List<Issue> issues, int copies,
                        String rollbackTo, String rollbackError, int pendingDeletionCount, int notPromoted) {

    /** Progress only (kept so that code written against earlier versions still compiles). */
    public Migration(long switchEpoch, String target, String phase, String owner, long startedAt, long updatedAt,
                     long finishedAt, int planned, int copied, int alreadyPresent, int promoted, int failed,
                     int skipped, int collisions, long bytesCopied, List<Issue> issues) {
        this(switchEpoch, target, phase, owner, startedAt, updatedAt, finishedAt, planned, copied, alreadyPresent,
                promoted, failed, skipped, collisions, bytesCopied, issues, 0, null, null, 0, 0);
    }

    /** A ledger the migration did not move and why. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Issue(long ledgerId, String kind, String cluster, String result, String detail) {
    }
}
