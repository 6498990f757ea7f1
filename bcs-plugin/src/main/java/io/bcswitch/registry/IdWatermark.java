package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The highest ledger ids a bookie cluster was ever seen to issue, at {@code <configPath>/id-watermarks/<cluster>}.
 * Raised (never lowered) whenever the cluster's id generator is read or moved: at first start, by every
 * precheck and switch. A switch away from a cluster that cannot be read any more starts the new range above
 * it, so ids it may have issued are never issued again by another cluster.
 *
 * @param maxHighOrderBits the highest {@code idgen-long/HOB-n} seen (0: it issued 31-bit ids only)
 * @param maxLedgerId      the largest ledger id seen on it (-1: none)
 * @param observedAt       epoch millis of the latest observation that raised a value
 * @param source           what observed it (bootstrap, precheck, switch)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record IdWatermark(int formatVersion, String cluster, long maxHighOrderBits, long maxLedgerId, long observedAt,
                          String source) {
    public static final int FORMAT_VERSION = 1;

    /**
     * High-order bits of every id this cluster may have issued, as far as known: an id in the probe band (recorded by
     * an earlier version) is nobody's ({@link IdSpace}).
     */
    public long highestKnownBits() {
        return Math.max(maxHighOrderBits, IdSpace.isProbeId(maxLedgerId) ? 0 : IdSpace.bitsOf(maxLedgerId));
    }

    /** This watermark raised by an observation; null when the observation adds nothing. */
    public IdWatermark raisedBy(long hob, long maxId, long now, String by) {
        if (hob <= maxHighOrderBits && maxId <= maxLedgerId) {
            return null;
        }
        return new IdWatermark(FORMAT_VERSION, cluster, Math.max(hob, maxHighOrderBits), Math.max(maxId, maxLedgerId),
                now, by);
    }
}
