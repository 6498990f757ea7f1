package io.bcswitch.routing;

import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * This broker's view of who owns which ledger ids and which cluster is active. Immutable; the
 * switch agent replaces it as directives and relocations arrive.
 *
 * @param ranges          known ranges (range table plus the latest directive's range)
 * @param activeCluster   cluster creates go to
 * @param activeEpoch     switch epoch that made it active on this broker (0: bootstrap)
 * @param relocations     ledgers whose verified copy on another cluster is their home, by id
 * @param relocationEpoch relocation epoch {@code relocations} was read at
 * @param retired         clusters DEPRECATED when the registry was last read: nothing there is read any more, and
 *                        this broker builds no client for them on its own (to look for copies of a deleted ledger)
 */
public record Ownership(RangeTable ranges, String activeCluster, long activeEpoch, Map<Long, String> relocations,
                        long relocationEpoch, Set<String> retired) {

    public Ownership {
        relocations = Map.copyOf(relocations);
        retired = Set.copyOf(retired);
    }

    public Ownership(RangeTable ranges, String activeCluster, long activeEpoch) {
        this(ranges, activeCluster, activeEpoch, Map.of(), 0L);
    }

    public Ownership(RangeTable ranges, String activeCluster, long activeEpoch, Map<Long, String> relocations,
                     long relocationEpoch) {
        this(ranges, activeCluster, activeEpoch, relocations, relocationEpoch, Set.of());
    }

    /** The cluster holding the ledger: its relocation home if it was relocated, else the cluster that issued it. */
    public Optional<String> owner(long ledgerId) {
        String home = relocations.get(ledgerId);
        return home != null ? Optional.of(home) : ranges.owner(ledgerId);
    }

    /**
     * Whether {@code ledgerId} may belong to a range this broker has not seen yet. Every new range starts at
     * high-order bits above all the ones ever used, so an id whose high-order bits are at most those of the newest
     * known range's start is placed by the known ranges; one above it may be a newer cluster's. So may one between
     * two known ranges whose epochs are not consecutive: every switch has the next epoch, so the range of an epoch in
     * between exists, starts above the earlier range's high-order bits and below the later range, and is not known
     * here yet (a broker that applied the newest directive before it read the range table again).
     */
    public boolean mayBeInUnknownRange(long ledgerId) {
        List<IdRange> known = ranges.ranges();
        if (known.isEmpty()) {
            return true;
        }
        for (int i = 1; i < known.size(); i++) {
            IdRange before = known.get(i - 1);
            IdRange after = known.get(i);
            if (after.epoch() > before.epoch() + 1 && ledgerId < after.firstLedgerId()
                    && (ledgerId >>> 32) > before.highOrderBits()) {
                return true;
            }
        }
        IdRange last = known.get(known.size() - 1);
        return ledgerId >= last.firstLedgerId() && (ledgerId >>> 32) > last.highOrderBits();
    }

    public Ownership withRanges(RangeTable table) {
        return new Ownership(table, activeCluster, activeEpoch, relocations, relocationEpoch, retired);
    }

    public Ownership withActive(RangeTable table, String cluster, long epoch) {
        return new Ownership(table, cluster, epoch, relocations, relocationEpoch, retired);
    }

    public Ownership withRelocations(Map<Long, String> homes, long epoch) {
        return new Ownership(ranges, activeCluster, activeEpoch, homes, epoch, retired);
    }

    public Ownership withRetired(Set<String> clusters) {
        return new Ownership(ranges, activeCluster, activeEpoch, relocations, relocationEpoch, clusters);
    }

    /**
     * Retired: the DEPRECATED ones of {@code clusters}, never the active one (a DEPRECATED that lost to a switch is
     * being undone).
     */
    public Ownership withRetiredOf(List<BookieClusterRecord> clusters) {
        Set<String> out = new java.util.TreeSet<>();
        for (BookieClusterRecord c : clusters) {
            if (c.status() == ClusterStatus.DEPRECATED && !c.name().equals(activeCluster)) {
                out.add(c.name());
            }
        }
        return withRetired(out);
    }
}
