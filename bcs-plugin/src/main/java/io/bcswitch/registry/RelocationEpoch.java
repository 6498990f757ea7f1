package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * Counter at {@code <configPath>/relocation-epoch}, incremented after each change of the relocation
 * table (a batch of promotions, a rollback), and, per live broker, the epoch it routes with
 * ({@code <configPath>/relocation-applied/<brokerId>}). Nothing moved by epoch n is deleted from its
 * old cluster before every live broker has applied n.
 *
 * @param changed ledger ids whose relocation this epoch created or removed, so that a broker one epoch
 *                behind re-reads only those; null when not known (written by an older version, or not
 *                meaningful: the per-broker records), which means "re-read the whole table"
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RelocationEpoch(int formatVersion, long epoch, long ts, List<Long> changed) {
    public static final int FORMAT_VERSION = 1;
    /** An epoch lists at most this many changed ids; a bigger change is not listed (brokers re-read everything). */
    public static final int MAX_LISTED = 1000;

    public RelocationEpoch {
        changed = changed == null ? null : List.copyOf(changed);
    }

    /** A per-broker "applied" record, or an epoch whose changes are not listed. */
    public RelocationEpoch(int formatVersion, long epoch, long ts) {
        this(formatVersion, epoch, ts, null);
    }
}
