package io.bcswitch.switching;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterNames;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which cluster a starting broker writes to (PIP-477 order: the directive, else the ACTIVE record, else the
 * configured {@code currentClusterName}, else a name derived from the broker's own metadata service URI, registered
 * ACTIVE), and the one-time bootstrap record and range table of the first activation ever.
 */
final class FirstActivation {
    private static final Logger log = LoggerFactory.getLogger(BrokerSwitchAgent.class);

    private final RegistryStore registry;
    private final SwitchConfig config;
    private final Clock clock;

    FirstActivation(RegistryStore registry, SwitchConfig config, Clock clock) {
        this.registry = registry;
        this.config = config;
        this.clock = clock;
    }

    /** The routing a broker starts with ({@code brokerUri}: its own {@code bookkeeperMetadataServiceUri}). */
    CompletableFuture<Ownership> decide(String brokerUri) {
        return registry.readDirective().thenCompose(d -> {
            if (d.present()) {
                return startFromDirective(d.value());
            }
            return registry.listClusters().thenCompose(clusters -> {
                Optional<BookieClusterRecord> active = clusters.stream()
                        .filter(c -> c.status() == ClusterStatus.ACTIVE).findFirst();
                if (active.isPresent()) {
                    return bootstrap(active.get().name());
                }
                String name = config.currentClusterName().isEmpty()
                        ? ClusterNames.derive(brokerUri) : config.currentClusterName();
                return registerActive(name, brokerUri, clusters).thenCompose(v -> bootstrap(name));
            });
        });
    }

    private CompletableFuture<Ownership> startFromDirective(SwitchDirective d) {
        return registry.readRanges().thenApply(r -> {
            RangeTable table = r.orElseGet(() -> RangeTable.bootstrap(d.origin(), d.ts())).with(d.range());
            return new Ownership(table, d.target(), d.epoch());
        });
    }

    private CompletableFuture<Void> registerActive(String name, String uri, List<BookieClusterRecord> clusters) {
        Optional<BookieClusterRecord> existing = clusters.stream().filter(c -> c.name().equals(name)).findFirst();
        if (existing.isPresent() && !existing.get().metadataServiceUri().equals(uri)) {
            log.warn("bookie-cluster={} is registered with metadataServiceUri={}, but this broker is configured "
                    + "with {}; using the registered URI", name, existing.get().metadataServiceUri(), uri);
        }
        long now = clock.millis();
        return registry.update(registry.paths().cluster(name), BookieClusterRecord.class, cur -> {
            if (cur.isPresent() && cur.get().status() == ClusterStatus.ACTIVE) {
                return Optional.empty();
            }
            return Optional.of(cur.map(c -> c.withStatus(ClusterStatus.ACTIVE)).orElseGet(() ->
                    new BookieClusterRecord(BookieClusterRecord.FORMAT_VERSION, name, uri, ClusterStatus.ACTIVE,
                            now)));
        }).thenAccept(rec -> log.info("bookie-cluster={} registered ACTIVE with metadataServiceUri={}", name,
                rec.metadataServiceUri()));
    }

    /** First activation ever: the bootstrap record and the range table are created once, never rewritten. */
    private CompletableFuture<Ownership> bootstrap(String cluster) {
        long now = clock.millis();
        CompletableFuture<BootstrapRecord> boot = registry.update(registry.paths().bootstrap(), BootstrapRecord.class,
                cur -> cur.isPresent() ? Optional.empty()
                        : Optional.of(new BootstrapRecord(BootstrapRecord.FORMAT_VERSION, cluster, now)));
        return boot.thenCompose(b -> registry.update(registry.paths().ranges(), RangeTable.class,
                cur -> cur.isPresent() ? Optional.empty() : Optional.of(RangeTable.bootstrap(b.cluster(), b.ts()))))
                .thenApply(table -> new Ownership(table, cluster, 0L));
    }
}
