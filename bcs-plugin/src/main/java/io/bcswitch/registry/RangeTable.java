package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The append-only ledger-id range table at {@code <configPath>/ranges}. Ranges are ordered by
 * epoch and their first ids strictly increase, so the owner of an id is the cluster of the last
 * range starting at or below it.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RangeTable(int formatVersion, List<IdRange> ranges) {
    public static final int FORMAT_VERSION = 1;

    public RangeTable {
        ranges = List.copyOf(ranges);
    }

    public static RangeTable bootstrap(String cluster, long ts) {
        return new RangeTable(FORMAT_VERSION, List.of(new IdRange(cluster, 0L, 0L, ts)));
    }

    /** Cluster that issued {@code ledgerId}, if any range covers it. */
    public Optional<String> owner(long ledgerId) {
        if (ledgerId < 0) {
            return Optional.empty();
        }
        String owner = null;
        for (IdRange r : ranges) {
            if (r.firstLedgerId() <= ledgerId) {
                owner = r.cluster();
            } else {
                break;
            }
        }
        return Optional.ofNullable(owner);
    }

    @JsonIgnore
    public Optional<IdRange> last() {
        return ranges.isEmpty() ? Optional.empty() : Optional.of(ranges.get(ranges.size() - 1));
    }

    @JsonIgnore
    public long lastEpoch() {
        return last().map(IdRange::epoch).orElse(-1L);
    }

    @JsonIgnore
    public long maxHighOrderBits() {
        return ranges.stream().mapToLong(IdRange::highOrderBits).max().orElse(0L);
    }

    /**
     * Adds {@code range} if its epoch is new. Idempotent: a range already present (same epoch) is
     * not added again. Rejects a range that would not keep first ids increasing.
     */
    public RangeTable with(IdRange range) {
        if (ranges.stream().anyMatch(r -> r.epoch() == range.epoch())) {
            return this;
        }
        List<IdRange> next = new ArrayList<>(ranges);
        next.add(range);
        next.sort(Comparator.comparingLong(IdRange::epoch));
        for (int i = 1; i < next.size(); i++) {
            if (next.get(i).firstLedgerId() <= next.get(i - 1).firstLedgerId()) {
                throw new IllegalArgumentException("range " + range + " does not start above " + next.get(i - 1));
            }
        }
        return new RangeTable(FORMAT_VERSION, next);
    }
}
