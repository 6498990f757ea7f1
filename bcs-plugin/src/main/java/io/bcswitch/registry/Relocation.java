package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A ledger whose verified copy on another cluster is its home: reads, opens and deletes of
 * {@code ledgerId} go to {@code home} instead of the cluster that issued the id. Persisted at
 * {@code <configPath>/relocations/<ledgerId>}, created by compare-and-set (expected absent).
 *
 * @param ledgerId    the ledger (same id on both clusters)
 * @param home        cluster holding the copy that is now read
 * @param from        cluster that issued the id and holds the original
 * @param kind        what the ledger holds (CURSOR, SCHEMA, COMPACTION)
 * @param switchEpoch the switch whose migration promoted it (rollback of that switch flips it back)
 * @param promotedAt  epoch millis
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Relocation(int formatVersion, long ledgerId, String home, String from, String kind, long switchEpoch,
                         long promotedAt) {
    public static final int FORMAT_VERSION = 1;
}
