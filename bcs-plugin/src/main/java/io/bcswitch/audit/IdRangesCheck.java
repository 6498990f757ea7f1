package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Invariant 3: the range table's first ids and epochs strictly increase, and the active cluster's id generator
 * issues ids in its own range (routing by id range is only sound if both hold).
 */
final class IdRangesCheck {
    private final Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts;

    /** @param facts reads a cluster's metadata (id generator) without touching its bookies */
    IdRangesCheck(Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts) {
        this.facts = facts;
    }

    /** 3a: first ids and epochs strictly increase. */
    void checkTable(AuditWorld w, Findings found) {
        RangeTable t = w.view().ranges();
        List<IdRange> r = t.ranges();
        for (int i = 1; i < r.size(); i++) {
            if (r.get(i).firstLedgerId() <= r.get(i - 1).firstLedgerId() || r.get(i).epoch() <= r.get(i - 1).epoch()) {
                found.violation(new Violation("RANGES", null, r.get(i).cluster(), null, "range " + r.get(i)
                        + " does not start above " + r.get(i - 1)));
            }
        }
    }

    /** 3b: the active cluster issues ids only in its own range. */
    CompletableFuture<Void> checkGenerator(AuditWorld w, Findings found) {
        String active = w.view().activeCluster();
        Optional<BookieClusterRecord> rec = w.clusters().stream().filter(c -> c.name().equals(active)).findFirst();
        if (rec.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return facts.apply(rec.get()).handle((f, e) -> {
            if (e != null) {
                found.unchecked("id generator of the active cluster '" + active + "'", e);
                return null;
            }
            long next = f.maxHighOrderBits() << 32;
            Optional<String> owner = w.view().ranges().owner(next);
            Optional<IdRange> newest = w.view().ranges().last();
            boolean inOwnRange = owner.map(active::equals).orElse(false)
                    && newest.map(n -> n.cluster().equals(active) && next >= n.firstLedgerId()).orElse(false);
            if (!inOwnRange) {
                found.violation(new Violation("ID_GENERATOR", null, active, null, "the active cluster's id generator "
                        + "is at high-order bits " + f.maxHighOrderBits() + ", which the range table gives to "
                        + owner.orElse("(nobody)") + "; newest range " + newest.orElse(null)));
            }
            return null;
        });
    }
}
