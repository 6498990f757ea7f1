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
        return recordRange(registry, d).thenCompose(t -> followLatest(registry, d, MAX_ROUNDS));
    }

    /** Rounds of {@link #followLatest} (each one only when a newer switch came while the last was written). */
    private static final int MAX_ROUNDS = 5;

    /**
     * Marks the newest directive's target ACTIVE and the previous ACTIVE STANDBY, then reads the directive again and
     * does it once more if a switch was committed meanwhile: statuses decided under a directive that was replaced
     * while they were written (a demotion of the cluster the new switch made active) are redone under the new one.
     * That follow-up of the new switch, made after its commit, may have run before our late writes; redoing ours
     * after them leaves the newest target ACTIVE whichever ran last.
     */
    private static CompletableFuture<Void> followLatest(RegistryStore registry, SwitchDirective d, int rounds) {
        return registry.readDirective().thenCompose(latest -> {
            // statuses follow the newest directive, which may already be later than d
            String target = latest.present() ? latest.value().target() : d.target();
            long epoch = latest.present() ? latest.value().epoch() : d.epoch();
            return registry.listClusters().thenCompose(clusters -> markActive(registry, clusters, target))
                    .thenCompose(v -> registry.readDirective()).thenCompose(after -> after.present()
                            && after.value().epoch() != epoch && rounds > 1
                            ? followLatest(registry, d, rounds - 1) : CompletableFuture.completedFuture(null));
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
