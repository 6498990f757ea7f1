package io.bcswitch.switching;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.ClusterNames;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.precheck.ClusterLocation;
import io.bcswitch.precheck.ClusterMetadataAccess;
import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.IdWatermark;
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
    private final ClusterProbe probe;
    private final long prepareTimeoutMillis;

    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory) {
        this(registry, metadata, requiredBookies, clock, inventory, ClusterProbe.NONE);
    }

    /**
     * @param probe proves a target can take ledgers from a broker's own client (see {@link ClusterProbe})
     */
    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory, ClusterProbe probe) {
        this(registry, metadata, requiredBookies, clock, inventory, probe, 0);
    }

    /**
     * @param prepareTimeoutMillis longest wait, before committing a switch, for every live broker to have its clients
     *                             of the target ready; 0: commit without announcing the switch first
     */
    public SwitchService(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                         LedgerInventory inventory, ClusterProbe probe, long prepareTimeoutMillis) {
        this.prepareTimeoutMillis = prepareTimeoutMillis;
        this.registry = registry;
        this.metadata = metadata;
        this.requiredBookies = requiredBookies;
        this.clock = clock;
        this.inventory = inventory;
        this.probe = probe;
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

    /**
     * Registers {@code name} as STANDBY after checking the name, the URI and that its metadata answers. A bookie
     * cluster is identified by its own instance id ({@code INSTANCEID} under its ledgers root), not by the spelling
     * of its URI: a second registration of the same bookie cluster under another name or URI is refused.
     */
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
                    }).thenCompose(facts -> sameInstance(clusters, facts.instanceId()).thenApply(twin -> {
                        if (twin != null) {
                            throw RegistryException.conflict("metadataServiceUri " + metadataServiceUri + " is bookie "
                                    + "cluster instance " + facts.instanceId() + ", already registered as '"
                                    + twin.name() + "' (" + twin.metadataServiceUri() + ")");
                        }
                        return facts;
                    }));
        }).thenCompose(facts -> {
            BookieClusterRecord rec = new BookieClusterRecord(BookieClusterRecord.FORMAT_VERSION, name,
                    metadataServiceUri, ClusterStatus.STANDBY, clock.millis(), facts.instanceId());
            return registry.write(registry.paths().cluster(name), rec, -1L).thenApply(v -> {
                log.info("bookie-cluster={} registered STANDBY, metadataServiceUri={}, instance={}, layout={}, "
                                + "writable bookies={}", name, metadataServiceUri, facts.instanceId(),
                        facts.layoutManagerFactory(), facts.writableBookies());
                return rec;
            }).exceptionally(e -> {
                if (RegistryStore.isVersionConflict(e)) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is already registered");
                }
                throw new CompletionException(e);
            });
        });
    }

    /**
     * The registered cluster that is bookie cluster instance {@code instanceId}, or null. Records of clusters
     * registered before instance ids were kept are read (bounded by the probe timeout; one that cannot be read
     * is compared by its URI only, above).
     */
    private CompletableFuture<BookieClusterRecord> sameInstance(List<BookieClusterRecord> clusters,
                                                               String instanceId) {
        if (instanceId == null) {
            return CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<BookieClusterRecord>> each = new ArrayList<>();
        for (BookieClusterRecord c : clusters) {
            if (c.instanceId() != null) {
                each.add(CompletableFuture.completedFuture(instanceId.equals(c.instanceId()) ? c : null));
            } else {
                each.add(facts(c).thenApply(f -> instanceId.equals(f.instanceId()) ? c : null)
                        .exceptionally(e -> null));
            }
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                .map(CompletableFuture::join).filter(java.util.Objects::nonNull).findFirst().orElse(null));
    }

    /**
     * Records what the active cluster's metadata says now (its id watermark, and its instance id if the record
     * has none): called by every broker at start-up, so that a later switch away from it knows which ids it
     * issued even when it can no longer be read.
     */
    public CompletableFuture<Void> observe(String cluster, String source) {
        return registry.getCluster(cluster).thenCompose(rec -> rec.isEmpty() ? CompletableFuture.completedFuture(null)
                : facts(rec.get()).thenCompose(f -> remember(rec.get(), f, source)))
                .exceptionally(e -> {
                    log.warn("bookie-cluster={} cannot read its metadata to record its id watermark: {}", cluster,
                            rootMessage(e));
                    return null;
                });
    }

    /** Raises {@code c}'s id watermark to what {@code f} says, and fills in its instance id if missing. */
    private CompletableFuture<Void> remember(BookieClusterRecord c, ClusterFacts f, String source) {
        CompletableFuture<IdWatermark> mark = registry.raiseWatermark(c.name(), f.maxHighOrderBits(), f.maxLedgerId(),
                clock.millis(), source);
        CompletableFuture<BookieClusterRecord> id = c.instanceId() != null || f.instanceId() == null
                ? CompletableFuture.completedFuture(c)
                : registry.update(registry.paths().cluster(c.name()), BookieClusterRecord.class, cur -> cur
                        .filter(r -> r.instanceId() == null).map(r -> r.withInstanceId(f.instanceId())));
        return CompletableFuture.allOf(mark, id);
    }

    private boolean sameCluster(BookieClusterRecord c, ClusterLocation location) {
        try {
            return ClusterLocation.parse(c.metadataServiceUri()).sameClusterAs(location);
        } catch (IllegalArgumentException e) {
            return c.metadataServiceUri().equals(location.uri());
        }
    }

    public CompletableFuture<PrecheckReport> precheck(String target) {
        return precheck(target, false);
    }

    /**
     * The precheck report; what it read of the clusters' id generators is remembered (id watermarks), so that
     * a later switch away from one that cannot be read any more still knows which ids it issued.
     *
     * @param allowUnknownSourceIds switch although the source cannot be read and nothing records which ids it issued
     */
    public CompletableFuture<PrecheckReport> precheck(String target, boolean allowUnknownSourceIds) {
        return get(target).thenCompose(rec -> registry.readDirective()
                .thenCompose(d -> precheck(rec, d, allowUnknownSourceIds)))
                .thenCompose(report -> remember(report, "precheck").thenApply(v -> report));
    }

    /**
     * Remembers what {@code report} read of its source and target (best effort). Only done for a precheck that was
     * answered and a switch that was committed: a refused request changes nothing in the metadata store.
     */
    private CompletableFuture<Void> remember(PrecheckReport report, String source) {
        return registry.listClusters().thenCompose(clusters -> {
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (BookieClusterRecord c : clusters) {
                ClusterFacts f = c.name().equals(report.target()) ? report.targetFacts()
                        : c.name().equals(report.source()) ? report.sourceFacts() : null;
                if (f != null) {
                    writes.add(remember(c, f, source));
                }
            }
            return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
        }).exceptionally(e -> {
            log.warn("Cannot record the id watermarks read by {}: {}", source, e.toString());
            return null;
        });
    }

    private CompletableFuture<PrecheckReport> precheck(BookieClusterRecord target, Versioned<SwitchDirective> d,
                                                       boolean allowUnknownSourceIds) {
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
                    return srcFacts.thenCombine(tgtFacts, (s, t) -> new Object[] {s, t}).thenCompose(st -> {
                        ClusterFacts sf = st[0] instanceof ClusterFacts f ? f : null;
                        ClusterFacts tf = st[1] instanceof ClusterFacts f ? f : null;
                        return registry.listWatermarks().thenCompose(marks -> {
                            if (tf == null) {
                                problems.add("metadata service of '" + target.name() + "' cannot be read: " + st[1]);
                            } else {
                                checkTarget(target, tf, clusters, problems);
                            }
                            long hob = proposedHighOrderBits(ranges.orElse(null), d, sf, tf, marks.values());
                            List<String> warnings = new ArrayList<>(warnings(target.name(), source, sf,
                                    sf != null ? null : st[0], tf));
                            if (source != null && sf == null) {
                                IdWatermark mark = marks.get(source);
                                if (mark != null) {
                                    // the source may have moved on to its next high-order bits since it was seen
                                    hob = Math.max(hob, mark.highestKnownBits() + 2);
                                    warnings.add("ids '" + source + "' issued are known up to high-order bits "
                                            + mark.highestKnownBits() + " (seen " + mark.source() + " at "
                                            + java.time.Instant.ofEpochMilli(mark.observedAt()) + "); the new range "
                                            + "starts above them with a margin");
                                } else if (!allowUnknownSourceIds) {
                                    problems.add("'" + source + "' cannot be read and nothing records which ledger ids "
                                            + "it issued: the new range could overlap them. Switch with "
                                            + "allowUnknownSourceIds only if you know it never used 63-bit ids");
                                } else {
                                    warnings.add("allowUnknownSourceIds: '" + source + "' cannot be read and its ids "
                                            + "are not known; the new range may overlap ids it issued");
                                }
                            }
                            long proposed = hob;
                            CompletableFuture<String> probed = problems.isEmpty() ? probe.probe(target)
                                    .exceptionally(e -> rootMessage(e)) : CompletableFuture.completedFuture(null);
                            return probed.thenApply(probeProblem -> {
                                if (probeProblem != null) {
                                    problems.add("a broker's BookKeeper client cannot use '" + target.name()
                                            + "': " + probeProblem);
                                }
                                return new PrecheckReport(target.name(), problems.isEmpty(), List.copyOf(problems),
                                        List.copyOf(warnings), source, sf != null, sf != null ? null
                                        : String.valueOf(st[0]), sf, tf, requiredBookies, proposed, proposed << 32);
                            });
                        });
                    });
                })));
    }

    private void checkTarget(BookieClusterRecord target, ClusterFacts tf, List<BookieClusterRecord> clusters,
                             List<String> problems) {
        if (!tf.supports63BitIds()) {
            problems.add("'" + target.name() + "' uses " + tf.layoutManagerFactory()
                    + ", which cannot issue 63-bit ledger ids; use the hierarchical ledger manager");
        }
        if (tf.writableBookies() < requiredBookies) {
            problems.add("'" + target.name() + "' has " + tf.writableBookies()
                    + " writable bookies, fewer than the ensemble size " + requiredBookies);
        }
        if (target.instanceId() != null && tf.instanceId() != null && !target.instanceId().equals(tf.instanceId())) {
            problems.add("'" + target.name() + "' was registered as bookie cluster instance " + target.instanceId()
                    + ", but its metadataServiceUri now leads to instance " + tf.instanceId());
        }
        for (BookieClusterRecord c : clusters) {
            if (!c.name().equals(target.name()) && tf.instanceId() != null && tf.instanceId().equals(c.instanceId())) {
                problems.add("'" + target.name() + "' is the same bookie cluster (instance " + tf.instanceId()
                        + ") as registered cluster '" + c.name() + "'");
            }
        }
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
                                      ClusterFacts target, java.util.Collection<IdWatermark> marks) {
        long max = 0;
        for (IdWatermark w : marks) {
            max = Math.max(max, w.highestKnownBits());
        }
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

    /** What {@code c}'s metadata says now (id generator, bookies, instance id), bounded by the probe timeout. */
    public CompletableFuture<ClusterFacts> facts(BookieClusterRecord c) {
        ClusterLocation loc;
        try {
            loc = ClusterLocation.parse(c.metadataServiceUri());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
        return metadata.forLocation(loc).thenCompose(m -> m.facts());
    }

    private volatile java.util.function.LongConsumer switchCommitted = e -> { };

    /** Told the epoch of each switch this service commits (the migration starts on this broker). */
    public void onSwitchCommitted(java.util.function.LongConsumer listener) {
        this.switchCommitted = listener;
    }

    /**
     * Switches the broker cluster to {@code target}: refused (409) while a live broker would not follow it (it
     * runs without the plugin, or has not confirmed the current epoch: its agent could miss the new directive),
     * then the precheck inline (refused with the report when it fails); records the current directive's range in
     * the range table (so that every directive but the newest is in the table, whatever happened to the broker that
     * wrote it), moves the target's id generator to a fresh range, and writes the directive by compare-and-set on
     * the version read at the start, so that of two concurrent switches exactly one wins. Returns as soon as the
     * directive is written; brokers apply it asynchronously.
     */
    public CompletableFuture<SwitchResult> switchTo(String target) {
        return switchTo(target, false);
    }

    public CompletableFuture<SwitchResult> switchTo(String target, boolean allowUnknownSourceIds) {
        return get(target).thenCompose(rec -> registry.readDirective().thenCompose(d ->
                BrokerView.read(registry).thenCompose(brokers -> {
                    long current = d.present() ? d.value().epoch() : 0L;
                    List<String> notFollowing = brokers.wouldNotFollow(current);
                    if (!notFollowing.isEmpty()) {
                        throw RegistryException.conflict("cannot switch while live broker(s) would not follow the "
                                + "switch: " + String.join("; ", notFollowing) + ". Every broker must run the plugin "
                                + "and have applied switch epoch " + current + " (see status)");
                    }
                    return precheck(rec, d, allowUnknownSourceIds);
                }).thenCompose(report -> {
                    if (!report.ok()) {
                        throw new RegistryException(RegistryException.Kind.CONFLICT,
                                "precheck failed for '" + target + "': " + String.join("; ", report.problems()),
                                report);
                    }
                    ClusterLocation loc = ClusterLocation.parse(rec.metadataServiceUri());
                    CompletableFuture<Void> previousRecorded = d.present()
                            ? RegistryFollowUp.recordRange(registry, d.value()) : CompletableFuture.completedFuture(null);
                    return previousRecorded
                            .thenCompose(v -> metadata.forLocation(loc))
                            .thenCompose(m -> m.advanceHighOrderBits(report.proposedHighOrderBits()))
                            .thenCompose(v -> prepareBrokers(target, d.present() ? d.value().epoch() + 1 : 1,
                                    report.proposedFirstLedgerId()))
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
                                return registry.raiseWatermark(target, report.proposedHighOrderBits(), -1,
                                                clock.millis(), "switch")
                                        .thenCompose(w -> remember(report, "switch"))
                                        .exceptionally(e -> null)
                                        .thenCompose(w -> RegistryFollowUp.afterSwitch(registry, next))
                                        .exceptionally(e -> {
                                            log.warn("bookie-cluster={} epoch={} registry follow-up failed; brokers "
                                                    + "will complete it: {}", target, next.epoch(), e.toString());
                                            return null;
                                        })
                                        .thenApply(v -> new SwitchResult(next, report));
                            });
                })));
    }

    private static final long PREPARE_FIRST_POLL_MILLIS = 25;
    private static final long PREPARE_MAX_POLL_MILLIS = 200;

    /**
     * Announces the switch about to be committed (its target already has the new range) and waits, at most
     * {@code prepareTimeoutMillis}, until every live broker says it has its clients of the target ready. Never
     * fails: the announcement only saves the brokers work in the first moments after the commit, so a broker that
     * is slow or cannot prepare is left to build its clients when it applies the directive, as without it.
     */
    private CompletableFuture<Void> prepareBrokers(String target, long epoch, long firstLedgerId) {
        if (prepareTimeoutMillis <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        long started = System.nanoTime();
        long deadline = started + prepareTimeoutMillis * 1_000_000L;
        var announcement = new io.bcswitch.registry.SwitchPreparation(
                io.bcswitch.registry.SwitchPreparation.FORMAT_VERSION, target, epoch, firstLedgerId, clock.millis());
        // the bound holds whatever the metadata store does: a read that hangs ends the wait like a slow broker
        return registry.update(registry.paths().switchPrepare(), io.bcswitch.registry.SwitchPreparation.class,
                        cur -> Optional.of(announcement))
                .thenCompose(w -> awaitPrepared(firstLedgerId, deadline, PREPARE_FIRST_POLL_MILLIS))
                .orTimeout(prepareTimeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
                .handle((waiting, e) -> {
                    long ms = (System.nanoTime() - started) / 1_000_000L;
                    if (e != null && RegistryStore.unwrap(e) instanceof java.util.concurrent.TimeoutException) {
                        log.warn("bookie-cluster={} epoch={}: not every broker said it prepared its clients within "
                                + "{} ms; committing anyway (those that did not build them when they apply the "
                                + "switch)", target, epoch, prepareTimeoutMillis);
                    } else if (e != null) {
                        log.warn("bookie-cluster={} epoch={}: cannot announce the switch ({} ms), committing it "
                                + "anyway: {}", target, epoch, ms, rootMessage(e));
                    } else if (waiting.isEmpty()) {
                        log.info("bookie-cluster={} epoch={}: every live broker prepared its clients in {} ms", target,
                                epoch, ms);
                    } else {
                        log.warn("bookie-cluster={} epoch={}: broker(s) {} did not prepare their clients within {} ms;"
                                + " committing anyway (they build them when they apply the switch)", target, epoch,
                                waiting, prepareTimeoutMillis);
                    }
                    return null;
                });
    }

    /**
     * Live brokers not ready for the range starting at {@code firstLedgerId} at the deadline (empty: none). Wakes when
     * a broker record changes (the registry's change hint), or at the latest after {@code pollMillis}, backing off to
     * {@value #PREPARE_MAX_POLL_MILLIS} ms, since a notification may be lost.
     */
    private CompletableFuture<List<String>> awaitPrepared(long firstLedgerId, long deadlineNanos, long pollMillis) {
        // registered before the read: a record written after the read wakes the next one
        CompletableFuture<Void> changed = registry.nextChangeAtOrBelow(registry.paths().brokers());
        return BrokerView.read(registry).thenCompose(view -> {
            List<String> waiting = view.notPrepared(firstLedgerId);
            if (waiting.isEmpty() || System.nanoTime() >= deadlineNanos) {
                changed.cancel(false);
                return CompletableFuture.completedFuture(waiting);
            }
            CompletableFuture<Void> tick = CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(
                    pollMillis, java.util.concurrent.TimeUnit.MILLISECONDS));
            return CompletableFuture.anyOf(changed, tick).thenComposeAsync(x -> {
                changed.cancel(false);
                return awaitPrepared(firstLedgerId, deadlineNanos, Math.min(PREPARE_MAX_POLL_MILLIS, pollMillis * 2));
            });
        });
    }

    public CompletableFuture<StatusReport> status() {
        var directive = registry.readDirective();
        var bootstrap = registry.readBootstrap();
        var ranges = registry.readRanges();
        var clusters = registry.listClusters();
        var brokers = BrokerView.read(registry);
        var relocationEpoch = registry.readRelocationEpoch();
        var tuning = registry.readTuning();
        var migration = directive.thenCompose(d -> d.present()
                ? registry.read(registry.paths().orchestrator(d.value().epoch()), io.bcswitch.registry.MigrationState.class)
                : CompletableFuture.completedFuture(Versioned.<io.bcswitch.registry.MigrationState>absent()));
        return CompletableFuture.allOf(directive, bootstrap, ranges, clusters, brokers, relocationEpoch, migration,
                        tuning)
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
                    withoutPlugin, tuning.join().value());
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
