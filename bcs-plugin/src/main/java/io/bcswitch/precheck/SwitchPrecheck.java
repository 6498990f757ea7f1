package io.bcswitch.precheck;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdWatermark;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The precheck of a switch: reads the source's and the target's metadata (bounded by the probe timeout), checks
 * the target can take the broker cluster's ledgers, proposes the new id range, and remembers what it read of each
 * cluster's id generator (id watermarks), so that a later switch away from a cluster that can no longer be read
 * still knows which ids it issued.
 */
public class SwitchPrecheck {
    private static final Logger log = LoggerFactory.getLogger(SwitchPrecheck.class);

    private final RegistryStore registry;
    private final ClusterMetadataAccess metadata;
    private final int requiredBookies;
    private final Clock clock;
    private final ClusterProbe probe;

    /**
     * @param requiredBookies the ensemble size: a target needs at least this many writable bookies
     * @param probe           proves a target can take ledgers from a broker's own client
     */
    public SwitchPrecheck(RegistryStore registry, ClusterMetadataAccess metadata, int requiredBookies, Clock clock,
                          ClusterProbe probe) {
        this.registry = registry;
        this.metadata = metadata;
        this.requiredBookies = requiredBookies;
        this.clock = clock;
        this.probe = probe;
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

    /** Whether {@code c}'s URI names the same cluster (servers and ledgers root) as {@code location}. */
    public static boolean sameCluster(BookieClusterRecord c, ClusterLocation location) {
        try {
            return ClusterLocation.parse(c.metadataServiceUri()).sameClusterAs(location);
        } catch (IllegalArgumentException e) {
            return c.metadataServiceUri().equals(location.uri());
        }
    }

    /**
     * Remembers what {@code report} read of its source and target (best effort). Only done for a precheck that was
     * answered and a switch that was committed: a refused request changes nothing in the metadata store.
     */
    public CompletableFuture<Void> remember(PrecheckReport report, String source) {
        return registry.listClusters().thenCompose(clusters -> {
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (BookieClusterRecord c : clusters) {
                // a refused target's ids are nobody's business yet: only a target that can take the switch is
                // remembered, so that nothing a cluster holds can weigh on switches it is not part of
                ClusterFacts f = c.name().equals(report.target()) ? (report.ok() ? report.targetFacts() : null)
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

    /**
     * The precheck of a switch to {@code target} after directive {@code d} (absent: none yet): problems refuse the
     * switch, warnings do not; the proposed range starts above every id known to be used.
     */
    public CompletableFuture<PrecheckReport> check(BookieClusterRecord target, Versioned<SwitchDirective> d,
                                                   boolean allowUnknownSourceIds) {
        CompletableFuture<String> sourceName = d.present()
                ? CompletableFuture.completedFuture(d.value().target())
                : registry.readBootstrap().thenApply(b -> b.map(x -> x.cluster()).orElse(null));
        return sourceName.thenCompose(source -> registry.listClusters().thenCompose(clusters ->
                registry.readRanges().thenCompose(ranges -> {
                    forgetUnregistered(clusters);
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
                            List<RangeProposal.Claim> claims = new ArrayList<>(RangeProposal.ofRanges(
                                    ranges.orElse(null), d));
                            if (sf != null) {
                                claims.addAll(RangeProposal.ofFacts(source, sf, false));
                            }
                            if (tf != null) {
                                claims.addAll(RangeProposal.ofFacts(target.name(), tf, true));
                            }
                            // what was recorded of the other registered clusters: a margin where there is room
                            clusters.stream().map(c -> marks.get(c.name())).filter(w -> w != null
                                    && !w.cluster().equals(source) && !w.cluster().equals(target.name()))
                                    .forEach(w -> claims.add(RangeProposal.ofWatermark(w)));
                            List<String> warnings = new ArrayList<>(warnings(target.name(), source, sf,
                                    sf != null ? null : st[0], tf));
                            if (source != null && sf == null) {
                                IdWatermark mark = marks.get(source);
                                if (mark != null) {
                                    // the source may have moved on to its next high-order bits since it was seen
                                    claims.addAll(RangeProposal.ofUnreadSource(mark));
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
                            RangeProposal range = RangeProposal.of(claims, target.name());
                            if (range.problem() != null) {
                                problems.add(range.problem());
                            }
                            warnings.addAll(range.warnings());
                            CompletableFuture<String> probed = problems.isEmpty() ? probe.probe(target)
                                    .exceptionally(e -> rootMessage(e)) : CompletableFuture.completedFuture(null);
                            return probed.thenApply(probeProblem -> {
                                if (probeProblem != null) {
                                    problems.add("a broker's BookKeeper client cannot use '" + target.name()
                                            + "': " + probeProblem);
                                }
                                return new PrecheckReport(target.name(), problems.isEmpty(), List.copyOf(problems),
                                        List.copyOf(warnings), source, sf != null, sf != null ? null
                                        : String.valueOf(st[0]), sf, tf, requiredBookies, range.bits(),
                                        range.problem() == null ? range.firstLedgerId() : 0);
                            });
                        });
                    });
                })));
    }

    /** Closes the metadata stores of clusters no longer registered (see {@link ClusterMetadataAccess#retainOnly}). */
    private void forgetUnregistered(List<BookieClusterRecord> clusters) {
        java.util.Set<String> urls = new java.util.HashSet<>();
        for (BookieClusterRecord c : clusters) {
            try {
                urls.add(ClusterLocation.parse(c.metadataServiceUri()).storeUrl());
            } catch (IllegalArgumentException e) {
                // a URI that cannot be parsed has no store of its own here
            }
        }
        metadata.retainOnly(urls);
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
            if (tf.maxProbeBandLedgerId() >= 0) {
                w.add("'" + target + "' holds ledger " + tf.maxProbeBandLedgerId() + ", an id of the band reserved for "
                        + "precheck probes (a probe left behind, or another application's ledger): no range counts "
                        + "it");
            }
            if (tf.maxLedgerId() >= 0) {
                w.add("'" + target + "' already holds ledgers (largest id " + tf.maxLedgerId()
                        + "); the new range starts above them");
            }
        }
        return List.copyOf(w);
    }

    /**
     * First high-order value above every id the broker cluster has used on any cluster, and above every other id
     * known where there is room ({@link RangeProposal}); 0 when no range is left.
     */
    public static long proposedHighOrderBits(RangeTable ranges, Versioned<SwitchDirective> d, ClusterFacts source,
                                      ClusterFacts target, java.util.Collection<IdWatermark> marks) {
        return RangeProposal.of(RangeProposal.all(ranges, d, source, target, marks), "target").bits();
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


    /** What the metadata at {@code location} says now, bounded by the probe timeout. */
    public CompletableFuture<ClusterFacts> facts(ClusterLocation location) {
        return metadata.forLocation(location).thenCompose(m -> m.facts());
    }

    /** Moves {@code c}'s id generator to high-order bits {@code highOrderBits} (the new range of a switch). */
    public CompletableFuture<Void> advanceHighOrderBits(BookieClusterRecord c, long highOrderBits) {
        return metadata.forLocation(ClusterLocation.parse(c.metadataServiceUri()))
                .thenCompose(m -> m.advanceHighOrderBits(highOrderBits));
    }

    /** The message an operator reads for {@code e} (a timeout says which). */
    public static String rootMessage(Throwable e) {
        Throwable t = Failures.unwrap(e);
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
