package io.bcswitch.precheck;

/**
 * What a bookie cluster's metadata says about it, read without touching its bookies.
 *
 * @param layoutManagerFactory ledger manager factory class named in {@code <root>/LAYOUT}
 * @param supports63BitIds     whether its id generator can be moved to a new high-order range
 * @param maxHighOrderBits     largest {@code idgen-long/HOB-n}, 0 when the cluster still issues 31-bit ids
 * @param maxLedgerId          largest id of a ledger that exists on the cluster below the probe band
 *                             ({@link io.bcswitch.registry.IdSpace}), -1 when it has none
 * @param writableBookies      bookies registered as writable
 * @param readOnlyBookies      bookies registered read-only
 * @param instanceId           the cluster's identity ({@code <ledgersRoot>/INSTANCEID}), null when it has none
 * @param maxProbeBandLedgerId largest id of a ledger in the probe band (a probe left behind, or another
 *                             application's ledger there), -1 when there is none: counted by no range
 */
public record ClusterFacts(String layoutManagerFactory, boolean supports63BitIds, long maxHighOrderBits,
                           long maxLedgerId, int writableBookies, int readOnlyBookies, String instanceId,
                           long maxProbeBandLedgerId) {

    public ClusterFacts(String layoutManagerFactory, boolean supports63BitIds, long maxHighOrderBits,
                        long maxLedgerId, int writableBookies, int readOnlyBookies, String instanceId) {
        this(layoutManagerFactory, supports63BitIds, maxHighOrderBits, maxLedgerId, writableBookies, readOnlyBookies,
                instanceId, -1);
    }

    public ClusterFacts(String layoutManagerFactory, boolean supports63BitIds, long maxHighOrderBits,
                        long maxLedgerId, int writableBookies, int readOnlyBookies) {
        this(layoutManagerFactory, supports63BitIds, maxHighOrderBits, maxLedgerId, writableBookies, readOnlyBookies,
                null);
    }
}
