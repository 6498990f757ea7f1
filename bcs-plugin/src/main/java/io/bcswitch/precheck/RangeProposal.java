package io.bcswitch.precheck;

import io.bcswitch.registry.IdSpace;
import io.bcswitch.registry.IdWatermark;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Where a switch's new id range starts: one high-order value above every id it must stay above, and, where the
 * id space leaves room, above every other id seen anywhere too.
 *
 * <p>What a range <em>must</em> start above ({@link Claim#required}): the ranges already handed out and the current
 * directive's, the source's id generator (or, when the source cannot be read, what was last seen of it, with a
 * margin), and the target's generator and existing ledgers (its generator must never issue an id that exists
 * there). When those leave no room, the switch is refused with the claim that took it.
 *
 * <p>What it starts above <em>where there is room</em> (a margin, not a need): the source's ledgers above what its
 * generator issued (they were made with ids of their own choosing by another application: the broker cluster's
 * ledgers come from the generators or are copies of ids the ranges cover) and what was recorded of other registered
 * clusters. Such an id that would leave no room is not counted, and a warning names it: one ledger somewhere near
 * the top of the id space must never block switches between other clusters. Ids in the band reserved for probes
 * ({@link IdSpace#PROBE_FIRST_ID} on) are counted by nobody.
 */
public final class RangeProposal {

    /**
     * Something the new range starts above.
     *
     * @param bits     the high-order bits of the highest id concerned
     * @param required whether the range must start above it (refused otherwise); else only where there is room
     * @param what     what it is, as an operator reads it ("'c' holds ledger 42")
     */
    public record Claim(long bits, boolean required, String what) {
    }

    private final long bits;
    private final String problem;
    private final List<String> warnings;

    private RangeProposal(long bits, String problem, List<String> warnings) {
        this.bits = bits;
        this.problem = problem;
        this.warnings = List.copyOf(warnings);
    }

    /** The range for a switch to {@code target} given {@code claims}. */
    public static RangeProposal of(List<Claim> claims, String target) {
        long required = 0;
        Claim top = null;
        for (Claim c : claims) {
            if (c.required() && c.bits() >= required) {
                required = c.bits();
                top = c;
            }
        }
        long start = required + 1;
        if (!IdSpace.fits(start)) {
            return new RangeProposal(0, top.what() + ": no ledger-id range is left above it for a switch to '" + target
                    + "'", List.of());
        }
        List<String> warnings = new ArrayList<>();
        for (Claim c : claims) {
            if (c.required() || c.bits() < start) {
                continue;
            }
            if (IdSpace.fits(c.bits() + 1)) {
                start = c.bits() + 1;
            } else {
                warnings.add(c.what() + ": not counted, no ledger-id range would be left above it (an id chosen by "
                        + "another application: no generator of the broker cluster's issued it)");
            }
        }
        return new RangeProposal(start, null, warnings);
    }

    /** Where the range starts (0 when there is no room: see {@link #problem}). */
    public long bits() {
        return bits;
    }

    /** Its first ledger id ({@code -1} when there is no room). */
    public long firstLedgerId() {
        return problem == null ? IdSpace.firstLedgerId(bits) : -1;
    }

    /** Why no range is left, or null. */
    public String problem() {
        return problem;
    }

    /** Ids near the top of the space that were not counted. */
    public List<String> warnings() {
        return warnings;
    }

    /** The claims of the range table and the current directive (ids the broker cluster handed out). */
    static List<Claim> ofRanges(RangeTable ranges, Versioned<SwitchDirective> d) {
        List<Claim> out = new ArrayList<>();
        if (ranges != null) {
            out.add(new Claim(ranges.maxHighOrderBits(), true, "the ranges handed out reach high-order bits "
                    + ranges.maxHighOrderBits()));
        }
        if (d.present()) {
            long b = IdSpace.bitsOf(d.value().firstLedgerId());
            out.add(new Claim(b, true, "the range of switch epoch " + d.value().epoch() + " starts at high-order bits "
                    + b));
        }
        return out;
    }

    /**
     * The claims of a cluster's facts: its generator always; its ledgers required on the target, and on the source
     * only as far as its generator could have issued them.
     */
    static List<Claim> ofFacts(String cluster, ClusterFacts f, boolean target) {
        List<Claim> out = new ArrayList<>();
        out.add(new Claim(f.maxHighOrderBits(), true, "the id generator of '" + cluster + "' is at high-order bits "
                + f.maxHighOrderBits()));
        if (f.maxLedgerId() >= 0) {
            long b = IdSpace.bitsOf(f.maxLedgerId());
            out.add(new Claim(b, target || b <= f.maxHighOrderBits(), "'" + cluster + "' holds ledger "
                    + f.maxLedgerId() + " (high-order bits " + b + ")"));
        }
        return out;
    }

    /** The claim of what was recorded of {@code cluster} (registered, neither source nor target): a margin. */
    static Claim ofWatermark(IdWatermark w) {
        return new Claim(w.highestKnownBits(), false, "ids recorded for '" + w.cluster() + "' reach high-order bits "
                + w.highestKnownBits());
    }

    /**
     * The claims of a source that cannot be read, from what was last recorded of it: its generator may have moved on
     * to its next high-order bits since (required, with that margin); its ledgers as for a readable source.
     */
    static List<Claim> ofUnreadSource(IdWatermark w) {
        long generator = Math.max(0, w.maxHighOrderBits()) + 1;
        List<Claim> out = new ArrayList<>();
        out.add(new Claim(generator, true, "the id generator of '" + w.cluster() + "' was last seen at high-order bits "
                + w.maxHighOrderBits() + " (and may have moved on to the next)"));
        out.add(new Claim(w.highestKnownBits() + 1, false, "ids recorded for '" + w.cluster() + "' reach high-order "
                + "bits " + w.highestKnownBits() + " (and may have moved on to the next)"));
        return out;
    }

    /** The claims of every source of ids a switch knows of; see {@link SwitchPrecheck#proposedHighOrderBits}. */
    static List<Claim> all(RangeTable ranges, Versioned<SwitchDirective> d, ClusterFacts source, ClusterFacts target,
                           Collection<IdWatermark> marks) {
        List<Claim> claims = new ArrayList<>(ofRanges(ranges, d));
        if (source != null) {
            claims.addAll(ofFacts("source", source, false));
        }
        if (target != null) {
            claims.addAll(ofFacts("target", target, true));
        }
        marks.forEach(w -> claims.add(ofWatermark(w)));
        return claims;
    }
}
