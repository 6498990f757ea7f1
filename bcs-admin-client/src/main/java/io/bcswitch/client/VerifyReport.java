package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * What {@code GET /verify} found: every violation of the plugin's invariants, each naming the ledger, the
 * cluster and what refers to it; and what could not be checked. Read only: verifying changes nothing.
 *
 * @param ok                no violation ({@code unchecked} items do not make it false)
 * @param checkedAt         epoch millis
 * @param deep              copies were compared entry by entry (CRC32C of every payload), not only by metadata
 * @param referencedLedgers ledgers the broker metadata references (each checked on its home)
 * @param clusters          clusters whose ledgers were listed and compared
 * @param relocations       relocations in the table
 * @param violations        what breaks an invariant
 * @param unchecked         what could not be checked, and why (e.g. a cluster whose metadata did not answer)
 * @param removal           whether the plugin can be taken out of the brokers now; null from a broker that does not
 *                          say
 * @param notices           what the operator should know that breaks no invariant (e.g. a ledger a rollback kept
 *                          home on the rolled-back cluster); empty from a broker that does not report them
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record VerifyReport(boolean ok, long checkedAt, boolean deep, int referencedLedgers, List<String> clusters,
                           int relocations, List<Violation> violations, List<String> unchecked, Removal removal,
                           List<Notice> notices) {

    public VerifyReport {
        // the plugin always writes these lists; read a missing one as empty so callers need no null checks
        clusters = clusters == null ? List.of() : clusters;
        violations = violations == null ? List.of() : violations;
        unchecked = unchecked == null ? List.of() : unchecked;
        notices = notices == null ? List.of() : notices;
    }

    /** Without notices (kept so that code written against earlier versions still compiles). */
    public VerifyReport(boolean ok, long checkedAt, boolean deep, int referencedLedgers, List<String> clusters,
                        int relocations, List<Violation> violations, List<String> unchecked, Removal removal) {
        this(ok, checkedAt, deep, referencedLedgers, clusters, relocations, violations, unchecked, removal, null);
    }

    /**
     * Something the operator should know that breaks no invariant.
     *
     * @param kind     which: NOT_REVERSED (a ledger a rollback could not route back stays home on the rolled-back
     *                 cluster, readable there; the next migration moves it) (more may come)
     * @param ledgerId the ledger, or null
     * @param cluster  the bookie cluster concerned, or null
     * @param detail   what, in words
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Notice(String kind, Long ledgerId, String cluster, String detail) {
    }

    /**
     * Whether every broker could run stock Pulsar storage now, with {@code bookkeeperMetadataServiceUri} set to
     * {@code metadataServiceUri}, and lose nothing.
     *
     * @param safe               yes or no
     * @param activeCluster      the cluster the brokers would use alone
     * @param metadataServiceUri its metadata service URI
     * @param because            why: every reason when not safe, what was found when safe
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Removal(boolean safe, String activeCluster, String metadataServiceUri, List<String> because) {
        public Removal {
            because = because == null ? List.of() : because;
        }
    }

    /**
     * One broken invariant.
     *
     * @param check        which: REFERENCED_MISSING, NOT_CLOSED, UNEXPLAINED_COPY, COPY_DIFFERS, RANGES,
     *                     ID_GENERATOR, BROKER_NOT_FOLLOWING, BROKER_ROUTES_OLD_RELOCATIONS,
     *                     HOME_SCHEDULED_FOR_DELETION, HOME_IS_CLEANUP_TARGET (more may come)
     * @param ledgerId     the ledger, or null for a check about no single ledger
     * @param cluster      the bookie cluster (the broker, for the broker checks) concerned, or null
     * @param referencedBy what refers to the ledger (a managed ledger, cursor, schema), or null
     * @param detail       what is wrong, in words
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Violation(String check, Long ledgerId, String cluster, String referencedBy, String detail) {
    }
}
