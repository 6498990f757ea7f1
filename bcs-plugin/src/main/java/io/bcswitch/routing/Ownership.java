package io.bcswitch.routing;

import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import java.util.Optional;

/**
 * This broker's view of who owns which ledger ids and which cluster is active. Immutable; the
 * switch agent replaces it as directives arrive.
 *
 * @param ranges        known ranges (range table plus the latest directive's range)
 * @param activeCluster cluster creates go to
 * @param activeEpoch   switch epoch that made it active on this broker (0: bootstrap)
 */
public record Ownership(RangeTable ranges, String activeCluster, long activeEpoch) {

    public Optional<String> owner(long ledgerId) {
        return ranges.owner(ledgerId);
    }

    /** Ids at or above the newest range's start may belong to a range this broker has not seen yet. */
    public boolean inNewestRange(long ledgerId) {
        return ranges.last().map(IdRange::firstLedgerId).map(first -> ledgerId >= first).orElse(true);
    }
}
