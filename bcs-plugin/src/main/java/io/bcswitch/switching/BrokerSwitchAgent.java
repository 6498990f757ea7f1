package io.bcswitch.switching;

import io.bcswitch.registry.ClusterNames;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One per broker: decides the active cluster at start-up, watches the switch directive and applies
 * each new one (advance this broker's routing view, recreate the target's clients, start the
 * cutover). Directive handling runs one at a time, in order, on the agent's own thread.
 */
public class BrokerSwitchAgent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerSwitchAgent.class);

    private final RegistryStore registry;
    private final SwitchConfig config;
    private final ClientActivation activation;
    private final CutoverTrigger cutover;
    private final Clock clock;
    private final ExecutorService events = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "bcs-switch-agent");
        t.setDaemon(true);
        return t;
    });
    private final AtomicReference<CompletableFuture<Ownership>> refreshing = new AtomicReference<>();
    private volatile Ownership ownership;
    private CompletableFuture<Void> applyTail = CompletableFuture.completedFuture(null);
    private volatile boolean closed;

    public BrokerSwitchAgent(RegistryStore registry, SwitchConfig config, ClientActivation activation,
                             CutoverTrigger cutover, Clock clock) {
        this.registry = registry;
        this.config = config;
        this.activation = activation;
        this.cutover = cutover;
        this.clock = clock;
    }

    /** This broker's current routing view. Never null after {@link #start}. */
    public Ownership ownership() {
        return ownership;
    }

    /**
     * Decides the active cluster (PIP-477 order: directive / ACTIVE record, else the configured
     * {@code currentClusterName}, else a name derived from the broker's own metadata service URI,
     * registered ACTIVE), writes the one-time bootstrap record and range table on first activation,
     * and starts watching the directive.
     *
     * @param brokerUri the broker's own {@code bookkeeperMetadataServiceUri} (or its implicit default)
     */
    public CompletableFuture<Ownership> start(String brokerUri) {
        registry.metadataStore().registerListener(n -> {
            if (n.getPath().equals(registry.paths().switchTarget()) && !closed) {
                events.execute(this::applyLatest);
            }
            if (n.getPath().equals(registry.paths().relocationEpoch()) && !closed) {
                events.execute(this::reloadRelocations);
            }
        });
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
        }).thenCompose(o -> activation.activate(o.activeCluster()).thenApply(v -> o))
          .thenCompose(o -> readRelocations(null).thenApply(r -> o.withRelocations(r.homes(), r.epoch())))
          .thenApply(o -> {
              ownership = o;
              log.info("bookie-cluster={} active at start-up, epoch={}, ranges={}", o.activeCluster(),
                      o.activeEpoch(), o.ranges().ranges());
              // a directive written while we were starting is picked up here
              events.execute(this::applyLatest);
              return o;
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

    /**
     * Latest routing view for ids this broker may not know yet: reads the directive and, if it is newer,
     * adds its range (without activating it: that is {@link #applyLatest}'s job). Concurrent callers share
     * one read.
     */
    public CompletableFuture<Ownership> refresh() {
        CompletableFuture<Ownership> mine = new CompletableFuture<>();
        CompletableFuture<Ownership> running = refreshing.compareAndExchange(null, mine);
        if (running != null) {
            return running;
        }
        registry.readDirective().whenComplete((d, e) -> {
            refreshing.set(null);
            if (e != null) {
                log.warn("Cannot read switch directive, routing with the known ranges: {}", e.toString());
                mine.complete(ownership);
                return;
            }
            mine.complete(mergeRange(d));
        });
        return mine;
    }

    private synchronized Ownership mergeRange(Versioned<SwitchDirective> d) {
        Ownership o = ownership;
        if (d.present() && d.value().epoch() > o.ranges().lastEpoch()) {
            o = o.withRanges(o.ranges().with(d.value().range()));
            ownership = o;
        }
        return o;
    }

    /** Applies the newest directive if this broker has not yet; runs on the agent thread. */
    private void applyLatest() {
        applyTail = applyTail.exceptionally(e -> null).thenCompose(v -> closed
                ? CompletableFuture.completedFuture(null)
                : registry.readDirective().thenCompose(this::apply));
    }

    private CompletableFuture<Void> apply(Versioned<SwitchDirective> vd) {
        if (ownership == null) {
            return CompletableFuture.completedFuture(null); // start() applies the latest directive itself
        }
        if (!vd.present() || vd.value().epoch() <= ownership.activeEpoch()) {
            return CompletableFuture.completedFuture(null);
        }
        SwitchDirective d = vd.value();
        mergeRange(vd);
        log.info("bookie-cluster={} switch directive epoch={} from {}: activating", d.target(), d.epoch(), d.origin());
        return activation.activate(d.target()).thenRun(() -> {
            synchronized (this) {
                ownership = ownership.withActive(ownership.ranges().with(d.range()), d.target(), d.epoch());
            }
            log.info("bookie-cluster={} active on this broker, epoch={}, first ledger id of its range={}",
                    d.target(), d.epoch(), d.firstLedgerId());
            cutover.start(ownership);
            repairRegistry(d);
        }).whenComplete((v, e) -> {
            if (e != null) {
                log.error("bookie-cluster={} cannot activate switch epoch={}; will retry on the next directive "
                        + "change or broker restart", d.target(), d.epoch(), e);
            }
        });
    }

    private record Relocations(Map<Long, String> homes, long epoch, int read) {
    }

    /**
     * Reads the epoch first: a table read after it is at least as new as that epoch. One epoch behind,
     * with the epoch listing what it changed (a PROMOTE batch, a rollback), only those ledgers' entries
     * are read; otherwise (and with no {@code current}, at start-up) the whole table.
     */
    private CompletableFuture<Relocations> readRelocations(Ownership current) {
        return registry.readRelocationEpochRecord().thenCompose(rec -> {
            if (current != null && rec.changed() != null && rec.epoch() == current.relocationEpoch() + 1) {
                return registry.readRelocations(rec.changed()).thenApply(changes -> {
                    Map<Long, String> homes = new HashMap<>(current.relocations());
                    changes.forEach((id, r) -> {
                        if (r.isPresent()) {
                            homes.put(id, r.get().home());
                        } else {
                            homes.remove(id);
                        }
                    });
                    return new Relocations(homes, rec.epoch(), changes.size());
                });
            }
            return registry.listRelocations().thenApply(all -> {
                Map<Long, String> homes = new HashMap<>();
                all.forEach((id, r) -> homes.put(id, r.home()));
                return new Relocations(homes, rec.epoch(), all.size());
            });
        });
    }

    /** Re-reads the relocation table after its epoch changed; runs on the agent thread, in order. */
    private void reloadRelocations() {
        applyTail = applyTail.exceptionally(e -> null).thenCompose(v -> closed || ownership == null
                ? CompletableFuture.completedFuture(null)
                : readRelocations(ownership).thenAccept(r -> {
                    synchronized (this) {
                        if (r.epoch() >= ownership.relocationEpoch()) {
                            ownership = ownership.withRelocations(r.homes(), r.epoch());
                        }
                    }
                    log.info("relocation epoch={} applied: {} relocated ledger(s) ({} read)", r.epoch(),
                            r.homes().size(), r.read());
                    relocationListener.accept(r.epoch());
                }).thenCompose(x -> registry.listClusters()).thenAccept(clusters -> {
                    for (BookieClusterRecord c : clusters) {
                        if (c.status() == ClusterStatus.DEPRECATED) {
                            deprecatedListener.accept(c.name());
                        }
                    }
                }).exceptionally(e -> {
                    log.warn("Cannot read the relocation table; routing with the previous one: {}", e.toString());
                    return null;
                }));
    }

    private volatile java.util.function.LongConsumer relocationListener = e -> { };
    private volatile java.util.function.Consumer<String> deprecatedListener = c -> { };

    /** Told (on the agent thread) each DEPRECATED cluster when the registry changes: its clients can close. */
    public void onDeprecated(java.util.function.Consumer<String> listener) {
        this.deprecatedListener = listener;
    }

    /** Told (on the agent thread) each relocation epoch this broker now routes with. */
    public void onRelocationsApplied(java.util.function.LongConsumer listener) {
        this.relocationListener = listener;
        Ownership o = ownership;
        if (o != null) {
            listener.accept(o.relocationEpoch());
        }
    }

    /** Idempotent completion of a switch's follow-up writes, in case the broker that switched died. */
    CompletableFuture<Void> repairRegistry(SwitchDirective d) {
        return RegistryFollowUp.afterSwitch(registry, d).exceptionally(e -> {
            log.warn("bookie-cluster={} epoch={} registry follow-up failed (will be retried): {}", d.target(),
                    d.epoch(), e.toString());
            return null;
        });
    }

    @Override
    public void close() {
        closed = true;
        events.shutdownNow();
    }
}
