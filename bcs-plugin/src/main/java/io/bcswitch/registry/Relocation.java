package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A ledger whose verified copy on another cluster is its home: reads, opens and deletes of
 * {@code ledgerId} go to {@code home} instead of the cluster that issued the id. Persisted at
 * {@code <configPath>/relocations/s<NNNN>/<ledgerId>}, written with a version-checked update: a
 * ledger relocated once can be relocated again (A to B, then B to C).
 *
 * @param ledgerId     the ledger (same id on every cluster holding it)
 * @param home         cluster holding the copy that is now read
 * @param from         cluster that issued the id and holds the original
 * @param kind         what the ledger holds (CURSOR, SCHEMA, COMPACTION)
 * @param switchEpoch  the switch whose migration promoted it (rollback of that switch flips it back)
 * @param promotedAt   epoch millis
 * @param previousHome the home before this relocation when it was itself a copy (null: the original); a
 *                     rollback of {@code switchEpoch} makes it the home again
 * @param previousSwitchEpoch the switch that had promoted {@code previousHome} (null with it)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Relocation(int formatVersion, long ledgerId, String home, String from, String kind, long switchEpoch,
                         long promotedAt, String previousHome, Long previousSwitchEpoch) {
    public static final int FORMAT_VERSION = 1;

    public Relocation(int formatVersion, long ledgerId, String home, String from, String kind, long switchEpoch,
                      long promotedAt) {
        this(formatVersion, ledgerId, home, from, kind, switchEpoch, promotedAt, null, null);
    }

    /** What a rollback of {@code switchEpoch} leaves: the previous copy's relocation, or none (the original). */
    public java.util.Optional<Relocation> beforeThisSwitch() {
        return previousHome == null ? java.util.Optional.empty() : java.util.Optional.of(new Relocation(formatVersion,
                ledgerId, previousHome, from, kind, previousSwitchEpoch == null ? 0 : previousSwitchEpoch, promotedAt));
    }
}
