package io.bcswitch.switching;

import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/** Reads the status report (every part of it in parallel, one consistent-enough snapshot per call). */
public class StatusReporter {
    private final RegistryStore registry;

    public StatusReporter(RegistryStore registry) {
        this.registry = registry;
    }

    /** The registry as an operator reads it: active cluster, switch, ranges, clusters, brokers, migration. */
    public CompletableFuture<StatusReport> status() {
        var directive = registry.readDirective();
        var bootstrap = registry.readBootstrap();
        var ranges = registry.readRanges();
        var clusters = registry.listClusters();
        var brokers = BrokerView.read(registry);
        var relocationEpoch = registry.readRelocationEpoch();
        var tuning = registry.readTuning();
        var migration = directive.thenCompose(d -> d.present()
                ? registry.read(registry.paths().orchestrator(d.value().epoch()), MigrationState.class)
                : CompletableFuture.completedFuture(Versioned.<MigrationState>absent()));
        // after a rollback, the latest switch is its switch back: what the rollback did is the switch before's
        var before = directive.thenCompose(d -> d.present() && d.value().epoch() > 1
                ? registry.read(registry.paths().orchestrator(d.value().epoch() - 1), MigrationState.class)
                : CompletableFuture.completedFuture(Versioned.<MigrationState>absent()));
        return CompletableFuture.allOf(directive, bootstrap, ranges, clusters, brokers, relocationEpoch, migration,
                        tuning, before)
                .thenApply(v -> {
            Versioned<SwitchDirective> d = directive.join();
            long epoch = d.present() ? d.value().epoch() : 0L;
            String active = d.present() ? d.value().target()
                    : bootstrap.join().map(b -> b.cluster()).orElse(null);
            RangeTable table = ranges.join().orElse(null);
            if (table != null && d.present()) {
                table = table.with(d.value().range());
            }
            BrokerView bv = brokers.join();
            List<String> pending = bv.cutoverPending(epoch);
            List<String> withoutPlugin = bv.withoutRecord();
            return new StatusReport(active, epoch, d.value(), bootstrap.join().orElse(null),
                    table == null ? List.of() : table.ranges(), clusters.join(),
                    List.copyOf(new TreeMap<>(bv.records()).values()), bv.cutoverComplete(epoch), pending,
                    migration.join().value(), relocationEpoch.join(), bv.relocationPending(relocationEpoch.join()),
                    withoutPlugin, tuning.join().value(), ReadMode.CURRENT, rolledBack(before.join().value()));
        });
    }

    /** {@code s} (the switch before the latest one's migration) when it was rolled back, else null. */
    static MigrationState rolledBack(MigrationState s) {
        return s != null && s.phase() == Phase.ROLLED_BACK ? s : null;
    }
}
