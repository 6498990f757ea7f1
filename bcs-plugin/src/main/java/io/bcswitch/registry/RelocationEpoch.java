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
 * @param changed     ledger ids whose relocation this epoch created or removed, so that a broker one epoch
 *                    behind re-reads only those; null when not known (written by an older version, or not
 *                    meaningful: the per-broker records), which means "re-read the whole table"
 * @param unannounced the relocation table may have changed after this epoch was written (the change is being made,
 *                    or the bump that was to announce it was lost): a broker that applied this epoch may route by an
 *                    older table. Set before each change of the table, cleared by the bump that announces it; absent
 *                    in records of earlier versions: false
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RelocationEpoch(int formatVersion, long epoch, long ts, List<Long> changed,
                              @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean unannounced) {
    public static final int FORMAT_VERSION = 1;
    /** An epoch lists at most this many changed ids; a bigger change is not listed (brokers re-read everything). */
    public static final int MAX_LISTED = 1000;

    public RelocationEpoch {
        changed = changed == null ? null : List.copyOf(changed);
    }

    public RelocationEpoch(int formatVersion, long epoch, long ts, List<Long> changed) {
        this(formatVersion, epoch, ts, changed, false);
    }

    /** A per-broker "applied" record, or an epoch whose changes are not listed. */
    public RelocationEpoch(int formatVersion, long epoch, long ts) {
        this(formatVersion, epoch, ts, null);
    }

    /**
     * The epoch a broker must have applied to route by the relocation table as it is now: this one, or, while a
     * change is {@link #unannounced}, the next one, which no broker has applied yet. Whatever is deleted because
     * every broker routes by the table waits for this epoch.
     */
    public long covering() {
        return unannounced ? epoch + 1 : epoch;
    }
}
