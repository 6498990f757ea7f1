package io.bcswitch.audit;

import java.util.List;

/**
 * What {@code GET /verify} found: every violation of the plugin's invariants, each naming the ledger, the cluster
 * and what refers to it; and what could not be checked (a cluster whose metadata did not answer).
 *
 * @param ok                 no violation (unchecked items do not make it false)
 * @param checkedAt          epoch millis
 * @param deep               copies were compared entry by entry (CRC32C of every payload), not only by metadata
 * @param referencedLedgers  ledgers the broker metadata references (each checked on its home)
 * @param clusters           clusters whose ledgers were listed and compared
 * @param relocations        relocations in the table
 * @param violations         what breaks an invariant
 * @param unchecked          what could not be checked, and why
 * @param removal            whether the plugin can be taken out of the brokers now (null from brokers before it)
 * @param notices            what the operator should know that breaks no invariant (they do not make ok false)
 */
public record VerifyReport(boolean ok, long checkedAt, boolean deep, int referencedLedgers, List<String> clusters,
                           int relocations, List<Violation> violations, List<String> unchecked, Removal removal,
                           List<Notice> notices) {

    /**
     * Something the operator should know that breaks no invariant.
     *
     * @param kind     which: NOT_REVERSED (a rollback could not route the ledger back; it is still home on the
     *                 rolled-back cluster, readable there, and the migration of a later switch moves it)
     * @param ledgerId the ledger, or null
     * @param cluster  the bookie cluster concerned, or null
     * @param detail   what, in words
     */
    public record Notice(String kind, Long ledgerId, String cluster, String detail) {
    }

    /**
     * Whether every broker could run stock Pulsar storage now, with {@code bookkeeperMetadataServiceUri} set to the
     * active cluster, and lose nothing: every ledger the broker metadata references is on the active cluster under
     * its own id, no migration is under way, and nothing else is wrong or unchecked.
     *
     * @param safe               yes or no
     * @param activeCluster      the cluster the brokers would use alone
     * @param metadataServiceUri its metadata service URI: the brokers' {@code bookkeeperMetadataServiceUri} then
     * @param because            why (when not safe, every reason; when safe, what was found)
     */
    public record Removal(boolean safe, String activeCluster, String metadataServiceUri, List<String> because) {
    }

    /**
     * One broken invariant.
     *
     * @param check        which: REFERENCED_MISSING, NOT_CLOSED, UNEXPLAINED_COPY, COPY_DIFFERS, RANGES,
     *                     ID_GENERATOR, BROKER_NOT_FOLLOWING, BROKER_ROUTES_OLD_RELOCATIONS,
     *                     HOME_SCHEDULED_FOR_DELETION, HOME_IS_CLEANUP_TARGET
     * @param ledgerId     the ledger, or null for a check about no single ledger
     * @param cluster      the bookie cluster (or broker, for the broker checks) concerned
     * @param referencedBy what refers to the ledger (a managed ledger, cursor, schema), or null
     * @param detail       what is wrong, in words
     */
    public record Violation(String check, Long ledgerId, String cluster, String referencedBy, String detail) {
    }
}
