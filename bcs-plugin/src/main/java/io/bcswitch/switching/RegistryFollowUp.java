package io.bcswitch.switching;

import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Writes that follow a committed switch directive: append its range to the range table and mark the
 * target ACTIVE and the previous active STANDBY. Each is a version-checked update that does nothing
 * when already done, so the switching broker and every broker applying the directive may all run it.
 */
final class RegistryFollowUp {
    private RegistryFollowUp() {
    }

    /** Appends {@code d}'s range to the range table (nothing when it is there already). */
    static CompletableFuture<Void> recordRange(RegistryStore registry, SwitchDirective d) {
        return registry.update(registry.paths().ranges(), RangeTable.class, cur -> {
            RangeTable t = cur.orElseGet(() -> RangeTable.bootstrap(d.origin(), d.ts()));
            RangeTable next = t.with(d.range());
            return next == t && cur.isPresent() ? Optional.empty() : Optional.of(next);
        }).thenApply(t -> null);
    }

    static CompletableFuture<Void> afterSwitch(RegistryStore registry, SwitchDirective d) {
        CompletableFuture<Void> ranges = recordRange(registry, d);
        // statuses follow the newest directive, which may already be later than d
        return ranges.thenCompose(t -> registry.readDirective()).thenCompose(latest -> {
            String target = latest.present() ? latest.value().target() : d.target();
            return registry.listClusters().thenCompose(clusters -> markActive(registry, clusters, target));
        });
    }

    private static CompletableFuture<Void> markActive(RegistryStore registry, List<BookieClusterRecord> clusters,
                                                      String target) {
        {
            List<CompletableFuture<BookieClusterRecord>> writes = new ArrayList<>();
            for (BookieClusterRecord c : clusters) {
                ClusterStatus want = c.name().equals(target) ? ClusterStatus.ACTIVE
                        : c.status() == ClusterStatus.ACTIVE ? ClusterStatus.STANDBY : c.status();
                if (want != c.status()) {
                    writes.add(registry.update(registry.paths().cluster(c.name()), BookieClusterRecord.class,
                            cur -> cur.filter(r -> r.status() != want).map(r -> r.withStatus(want))));
                }
            }
            return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
        }
    }
}
