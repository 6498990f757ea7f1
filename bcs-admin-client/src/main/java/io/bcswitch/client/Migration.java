package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * Progress of the migration that follows a switch: phase (PENDING, BUILD, PROMOTE, DONE,
 * DONE_WITH_FAILURES, SUPERSEDED, ROLLED_BACK), the broker running it, counts and the ledgers it
 * could not move ({@code issues}).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Migration(long switchEpoch, String target, String phase, String owner, long startedAt, long updatedAt,
                        long finishedAt, int planned, int copied, int alreadyPresent, int promoted, int failed,
                        int skipped, int collisions, long bytesCopied, List<Issue> issues) {

    /** A ledger the migration did not move and why. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Issue(long ledgerId, String kind, String cluster, String result, String detail) {
    }
}
