package io.bcswitch.switching;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.ClusterNames;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.precheck.ClusterLocation;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's actions: list, register, unregister, precheck, switch, status. Any broker can serve them; they
 * act only on the registry (and, for a switch, the target's id generator), never on this broker's
 * clients: brokers apply a switch when they see its directive.
 */
public class SwitchService {
    private static final Logger log = LoggerFactory.getLogger(SwitchService.class);

    private final RegistryStore registry;
    private final ClusterMetadataAccess metadata;
    private final int requiredBookies;
    private final Clock clock;
    private final LedgerInventory inventory;

    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory) {
        this.registry = registry;
        this.metadata = metadata;
        this.requiredBookies = requiredBookies;
        this.clock = clock;
        this.inventory = inventory;
    }

    /**
     * Unregisters {@code name}. Refused (409) for the active cluster (or the target of the latest
     * switch) and for a cluster that owns, by the range table, a ledger the broker cluster still
     * references: unregistering it would leave those ledgers unroutable. The record is deleted with a
     * version check, so a concurrent change to it makes this call fail instead of losing that change.
     */
    public CompletableFuture<BookieClusterRecord> unregister(String name) {
        String problem = ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        String path = registry.paths().cluster(name);
        return registry.read(path, BookieClusterRecord.class).thenCompose(rec -> {
            if (!rec.present()) {
                throw RegistryException.notFound("bookie cluster '" + name + "' is not registered");
            }
            return RegistryView.read(registry).thenCompose(view -> {
                if (name.equals(view.activeCluster()) || rec.value().status() == ClusterStatus.ACTIVE) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is the active cluster; switch "
                            + "to another cluster first");
                }
                boolean ownsRange = view.ranges().ranges().stream().anyMatch(r -> r.cluster().equals(name))
                        || view.relocations().values().stream().anyMatch(r -> r.home().equals(name));
                if (!ownsRange) {
                    return CompletableFuture.completedFuture(view);
                }
                return inventory.references().thenApply(refs -> {
                    String pinned = pinnedBy(refs, view, name);
                    if (pinned != null) {
                        throw RegistryException.conflict("bookie cluster '" + name + "' still holds ledgers the "
                                + "brokers reference: " + pinned + "; they must be migrated or expire first");
                    }
                    return view;
                });
            }).thenCompose(t -> registry.delete(path, rec.version()).exceptionally(e -> {
                if (RegistryStore.isVersionConflict(e)) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' changed concurrently; retry");
                }
                throw new CompletionException(RegistryStore.unwrap(e));
            })).thenApply(v -> {
                log.info("bookie-cluster={} unregistered", name);
                return rec.value();
            });
        });
    }

    /** Summary of the references owned by {@code cluster} ("3 data, 1 cursor (e.g. ledger 7 of t1)"), or null. */
    static String pinnedBy(List<LedgerReference> refs, RegistryView view, String cluster) {
        Map<LedgerKind, Integer> counts = new TreeMap<>();
        LedgerReference example = null;
        for (LedgerReference r : refs) {
            Optional<String> home = view.home(r.ledgerId());
            if (home.map(cluster::equals).orElse(false)) {
                counts.merge(r.kind(), 1, Integer::sum);
                if (example == null) {
                    example = r;
                }
            }
        }
        if (example == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        counts.forEach((k, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(n).append(' ')
                .append(k.name().toLowerCase(java.util.Locale.ROOT)));
        return sb + " (e.g. ledger " + example.ledgerId() + " of " + example.referencedBy() + ")";
    }

    public CompletableFuture<List<BookieClusterRecord>> list() {
        return registry.listClusters();
    }

    public CompletableFuture<BookieClusterRecord> get(String name) {
        String problem = ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        return registry.getCluster(name).thenApply(c -> c.orElseThrow(() ->
                RegistryException.notFound("bookie cluster '" + name + "' is not registered")));
    }

    /** Registers {@code name} as STANDBY after checking the name, the URI and that its metadata answers. */
    public CompletableFuture<BookieClusterRecord> register(String name, String metadataServiceUri) {
        String problem = ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        ClusterLocation location;
        try {
            location = ClusterLocation.parse(metadataServiceUri);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(RegistryException.invalid(e.getMessage()));
        }
        return registry.listClusters().thenCompose(clusters -> {
            for (BookieClusterRecord c : clusters) {
                if (c.name().equals(name)) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is already registered");
                }
                if (sameCluster(c, location)) {
                    throw RegistryException.conflict("metadataServiceUri " + metadataServiceUri
                            + " names the same bookie cluster (ZooKeeper servers and ledgers root) as registered "
                            + "cluster '" + c.name() + "' (" + c.metadataServiceUri() + ")");
                }
            }
            return metadata.forLocation(location).thenCompose(m -> m.facts())
                    .exceptionally(e -> {
                        throw RegistryException.invalid("cannot read bookie cluster metadata at "
                                + metadataServiceUri + ": " + rootMessage(e));
                    });
        }).thenCompose(facts -> {
            BookieClusterRecord rec = new BookieClusterRecord(BookieClusterRecord.FORMAT_VERSION, name,
                    metadataServiceUri, ClusterStatus.STANDBY, clock.millis());
            return registry.write(registry.paths().cluster(name), rec, -1L).thenApply(v -> {
                log.info("bookie-cluster={} registered STANDBY, metadataServiceUri={}, layout={}, writable bookies={}",
                        name, metadataServiceUri, facts.layoutManagerFactory(), facts.writableBookies());
                return rec;
            }).exceptionally(e -> {
                if (RegistryStore.isVersionConflict(e)) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is already registered");
                }
                throw new CompletionException(e);
            });
        });
    }

    private boolean sameCluster(BookieClusterRecord c, ClusterLocation location) {
        try {
            return ClusterLocation.parse(c.metadataServiceUri(), isImplicit(c)).sameClusterAs(location);
        } catch (IllegalArgumentException e) {
            return c.metadataServiceUri().equals(location.uri());
        }
    }

    public CompletableFuture<PrecheckReport> precheck(String target) {
        return get(target).thenCompose(rec -> registry.readDirective()
                .thenCompose(d -> precheck(rec, d)));
    }

    private CompletableFuture<PrecheckReport> precheck(BookieClusterRecord target, Versioned<SwitchDirective> d) {
        CompletableFuture<String> sourceName = d.present()
                ? CompletableFuture.completedFuture(d.value().target())
                : registry.readBootstrap().thenApply(b -> b.map(x -> x.cluster()).orElse(null));
        return sourceName.thenCompose(source -> registry.listClusters().thenCompose(clusters ->
                registry.readRanges().thenCompose(ranges -> {
                    List<String> problems = new ArrayList<>();
                    ClusterLocation targetLoc = ClusterLocation.parse(target.metadataServiceUri());
                    for (BookieClusterRecord c : clusters) {
                        if (!c.name().equals(target.name()) && sameCluster(c, targetLoc)) {
                            problems.add("metadata root of '" + target.name() + "' collides with registered cluster '"
                                    + c.name() + "'");
                        }
                    }
                    if (target.name().equals(source)) {
                        problems.add("bookie cluster '" + target.name() + "' is already active");
                    }
                    if (target.status() == ClusterStatus.DEPRECATED) {
                        problems.add("bookie cluster '" + target.name() + "' is DEPRECATED");
                    }
                    Optional<BookieClusterRecord> sourceRec = clusters.stream()
                            .filter(c -> c.name().equals(source)).findFirst();
                    CompletableFuture<Object> srcFacts = sourceRec.isEmpty()
                            ? CompletableFuture.completedFuture("source cluster is not registered")
                            : facts(sourceRec.get()).<Object>thenApply(f -> f).exceptionally(e -> rootMessage(e));
                    CompletableFuture<Object> tgtFacts = facts(target).<Object>thenApply(f -> f)
                            .exceptionally(e -> rootMessage(e));
                    return srcFacts.thenCombine(tgtFacts, (s, t) -> {
                        ClusterFacts sf = s instanceof ClusterFacts f ? f : null;
                        ClusterFacts tf = t instanceof ClusterFacts f ? f : null;
                        if (tf == null) {
                            problems.add("metadata service of '" + target.name() + "' cannot be read: " + t);
                        } else {
                            if (!tf.supports63BitIds()) {
                                problems.add("'" + target.name() + "' uses " + tf.layoutManagerFactory()
                                        + ", which cannot issue 63-bit ledger ids; use the hierarchical ledger manager");
                            }
                            if (tf.writableBookies() < requiredBookies) {
                                problems.add("'" + target.name() + "' has " + tf.writableBookies()
                                        + " writable bookies, fewer than the ensemble size " + requiredBookies);
                            }
                        }
                        long hob = proposedHighOrderBits(ranges.orElse(null), d, sf, tf);
                        List<String> warnings = warnings(target.name(), source, sf, sf != null ? null : s, tf);
                        return new PrecheckReport(target.name(), problems.isEmpty(), List.copyOf(problems),
                                warnings, source, sf != null, sf != null ? null : String.valueOf(s), sf, tf,
                                requiredBookies, hob, hob << 32);
                    });
                })));
    }

    /** Things an operator should know before switching that do not block the switch. */
    private List<String> warnings(String target, String source, ClusterFacts sf, Object sourceError, ClusterFacts tf) {
        List<String> w = new ArrayList<>();
        if (source != null && sf == null) {
            w.add("source '" + source + "' cannot be read (" + sourceError + "): the switch does not need it, "
                    + "but ledgers on it stay unreadable until it is back");
        }
        if (tf != null) {
            if (tf.writableBookies() == requiredBookies) {
                w.add("'" + target + "' has exactly " + requiredBookies + " writable bookies, the ensemble size: "
                        + "one bookie failure will stop new ledgers from being created");
            }
            if (tf.readOnlyBookies() > 0) {
                w.add("'" + target + "' has " + tf.readOnlyBookies() + " read-only bookie(s)");
            }
            if (tf.maxLedgerId() >= 0) {
                w.add("'" + target + "' already holds ledgers (largest id " + tf.maxLedgerId()
                        + "); the new range starts above them");
            }
        }
        return List.copyOf(w);
    }

    /** First high-order value above every id the broker cluster has used on any cluster. */
    static long proposedHighOrderBits(RangeTable ranges, Versioned<SwitchDirective> d, ClusterFacts source,
                                      ClusterFacts target) {
        long max = 0;
        if (ranges != null) {
            max = Math.max(max, ranges.maxHighOrderBits());
        }
        if (d.present()) {
            max = Math.max(max, d.value().firstLedgerId() >>> 32);
        }
        for (ClusterFacts f : new ClusterFacts[] {source, target}) {
            if (f != null) {
                max = Math.max(max, f.maxHighOrderBits());
                max = Math.max(max, Math.max(0, f.maxLedgerId()) >>> 32);
            }
        }
        return max + 1;
    }

    private CompletableFuture<ClusterFacts> facts(BookieClusterRecord c) {
        ClusterLocation loc;
        try {
            loc = ClusterLocation.parse(c.metadataServiceUri(), isImplicit(c));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
        return metadata.forLocation(loc).thenCompose(m -> m.facts());
    }

    /** The broker's implicit default cluster ({@code metadata-store:<store>/ledgers} sharing the broker's store). */
    private boolean isImplicit(BookieClusterRecord c) {
        return implicitUri != null && implicitUri.equals(c.metadataServiceUri());
    }

    private volatile String implicitUri;
    private volatile java.util.function.LongConsumer switchCommitted = e -> { };

    /** Told the epoch of each switch this service commits (the migration starts on this broker). */
    public void onSwitchCommitted(java.util.function.LongConsumer listener) {
        this.switchCommitted = listener;
    }

    /** Tells the service which URI is the broker's implicit default (null when the broker sets one explicitly). */
    public void setImplicitBrokerUri(String uri) {
        this.implicitUri = uri;
    }

    /**
     * Switches the broker cluster to {@code target}: precheck inline (refused with the report when it
     * fails), move the target's id generator to a fresh range, then write the directive by
     * compare-and-set on the version read at the start, so that of two concurrent switches exactly one
     * wins. Returns as soon as the directive is written; brokers apply it asynchronously.
     */
    public CompletableFuture<SwitchResult> switchTo(String target) {
        return get(target).thenCompose(rec -> registry.readDirective().thenCompose(d ->
                precheck(rec, d).thenCompose(report -> {
                    if (!report.ok()) {
                        throw new RegistryException(RegistryException.Kind.CONFLICT,
                                "precheck failed for '" + target + "': " + String.join("; ", report.problems()),
                                report);
                    }
                    ClusterLocation loc = ClusterLocation.parse(rec.metadataServiceUri(), isImplicit(rec));
                    return metadata.forLocation(loc)
                            .thenCompose(m -> m.advanceHighOrderBits(report.proposedHighOrderBits()))
                            .thenCompose(v -> {
                                long epoch = d.present() ? d.value().epoch() + 1 : 1;
                                SwitchDirective next = new SwitchDirective(SwitchDirective.FORMAT_VERSION, target,
                                        report.source(), epoch, clock.millis(), report.proposedFirstLedgerId());
                                return registry.write(registry.paths().switchTarget(), next, d.version())
                                        .thenApply(ver -> next);
                            })
                            .exceptionally(e -> {
                                if (RegistryStore.isVersionConflict(e)) {
                                    throw RegistryException.conflict("another switch was committed concurrently; "
                                            + "check status and retry");
                                }
                                throw new CompletionException(RegistryStore.unwrap(e));
                            })
                            .thenCompose(next -> {
                                log.info("bookie-cluster={} switch committed: epoch={}, origin={}, first ledger id={}",
                                        target, next.epoch(), next.origin(), next.firstLedgerId());
                                switchCommitted.accept(next.epoch());
                                return RegistryFollowUp.afterSwitch(registry, next)
                                        .exceptionally(e -> {
                                            log.warn("bookie-cluster={} epoch={} registry follow-up failed; brokers "
                                                    + "will complete it: {}", target, next.epoch(), e.toString());
                                            return null;
                                        })
                                        .thenApply(v -> new SwitchResult(next, report));
                            });
                })));
    }

    public CompletableFuture<StatusReport> status() {
        var directive = registry.readDirective();
        var bootstrap = registry.readBootstrap();
        var ranges = registry.readRanges();
        var clusters = registry.listClusters();
        var brokers = registry.listBrokerProgress();
        var relocationEpoch = registry.readRelocationEpoch();
        var relocationApplied = registry.listRelocationApplied();
        var migration = directive.thenCompose(d -> d.present()
                ? registry.read(registry.paths().orchestrator(d.value().epoch()), io.bcswitch.registry.MigrationState.class)
                : CompletableFuture.completedFuture(Versioned.<io.bcswitch.registry.MigrationState>absent()));
        return CompletableFuture.allOf(directive, bootstrap, ranges, clusters, brokers, relocationEpoch,
                        relocationApplied, migration).thenApply(v -> {
            Versioned<SwitchDirective> d = directive.join();
            long epoch = d.present() ? d.value().epoch() : 0L;
            String active = d.present() ? d.value().target()
                    : bootstrap.join().map(b -> b.cluster()).orElse(null);
            RangeTable table = ranges.join().orElse(null);
            if (table != null && d.present()) {
                table = table.with(d.value().range());
            }
            var bs = brokers.join();
            List<String> pending = bs.stream().filter(b -> b.appliedEpoch() != epoch || !b.done())
                    .map(b -> b.broker()).toList();
            boolean complete = !bs.isEmpty() && pending.isEmpty();
            return new StatusReport(active, epoch, d.value(), bootstrap.join().orElse(null),
                    table == null ? List.of() : table.ranges(), clusters.join(), bs, complete, pending,
                    migration.join().value(), relocationEpoch.join(), relocationApplied.join().entrySet().stream()
                            .filter(e -> e.getValue() < relocationEpoch.join()).map(java.util.Map.Entry::getKey).toList());
        });
    }

    static String rootMessage(Throwable e) {
        Throwable t = RegistryStore.unwrap(e);
        while (t.getCause() != null && t.getCause() != t && (t.getMessage() == null
                || t instanceof java.util.concurrent.TimeoutException)) {
            t = t.getCause();
        }
        if (t instanceof java.util.concurrent.TimeoutException) {
            return "no answer within the probe timeout";
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }
}
