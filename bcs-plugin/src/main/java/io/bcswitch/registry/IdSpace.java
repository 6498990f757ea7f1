package io.bcswitch.registry;

/**
 * The 63-bit ledger-id space as switches divide it. A 63-bit id is its high-order bits (BookKeeper's
 * {@code idgen-long/HOB-n} node, a non-negative int) above 32 low-order bits; every switch hands the target a range
 * starting at the next high-order value. The last high-order value, {@link #PROBE_BITS}, is nobody's range: the
 * precheck's probe ledgers are made there, so a probe left behind is never counted as an id a range must start
 * above, and it can never be an id a cluster's generator issues. Every computation on ids and high-order bits goes
 * through here, checked: a value that does not fit is refused, never wrapped.
 */
public final class IdSpace {
    /** The high-order bits reserved for the precheck's probe ledgers (the last 2^32 ids there are). */
    public static final long PROBE_BITS = Integer.MAX_VALUE;
    /** The first id of the probe band. */
    public static final long PROBE_FIRST_ID = PROBE_BITS << 32;
    /** The highest high-order bits a switch's range may start at. */
    public static final long MAX_RANGE_BITS = PROBE_BITS - 1;

    private IdSpace() {
    }

    /** The first ledger id of a range starting at {@code bits}; refused when no range may start there. */
    public static long firstLedgerId(long bits) {
        if (bits < 0 || bits > MAX_RANGE_BITS) {
            throw new IllegalArgumentException("high-order bits " + bits + " are outside the ranges a switch can "
                    + "start (0 to " + MAX_RANGE_BITS + ")");
        }
        return bits << 32;
    }

    /** The high-order bits of {@code ledgerId} (0 for a negative id, which no ledger has). */
    public static long bitsOf(long ledgerId) {
        return Math.max(0, ledgerId) >>> 32;
    }

    /** Whether {@code ledgerId} is in the band reserved for probe ledgers. */
    public static boolean isProbeId(long ledgerId) {
        return ledgerId >= PROBE_FIRST_ID;
    }

    /** Whether a range may start at {@code bits}. */
    public static boolean fits(long bits) {
        return bits >= 0 && bits <= MAX_RANGE_BITS;
    }
}
