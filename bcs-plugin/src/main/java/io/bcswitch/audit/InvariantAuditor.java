package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.concurrent.Failures;
import io.bcswitch.concurrent.Windows;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.migration.CleanupService;
import io.bcswitch.migration.CleanupTarget;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.migration.LedgerCopier.LedgerFacts;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Checks, from the metadata store and every bookie cluster's own metadata, the invariants the plugin lives by, and
 * names every violation (an operator tool: {@code GET /verify}, {@code pulsar-admin bookie-clusters verify}; and the
 * sequence explorer's oracle):
 * <ol>
 *   <li>every ledger Pulsar references (data, cursor, schema, compaction) exists on the cluster routing says
 *       holds it, closed where the reference says it is;</li>
 *   <li>no ledger id exists on two clusters unless the relocation table explains it (its home, the cluster that
 *       issued it, or a copy the migration made and marked), and every copy of a ledger has its home's content
 *       (closed, same last entry and length; with {@code deep}, the same CRC32C of every entry); and no copy the
 *       migration made is left where it is not home once its ledger is gone from everywhere else;</li>
 *   <li>the range table's first ids and epochs strictly increase, and the active cluster's id generator issues
 *       ids in its own range;</li>
 *   <li>every live broker runs the plugin, applied the current switch and routes with the current relocation
 *       epoch;</li>
 *   <li>nothing any of this references is scheduled for deletion: no copy a rollback will delete, and no cleanup
 *       target, is a ledger's home.</li>
 * </ol>
 * Read only: it changes nothing.
 */
public final class InvariantAuditor {
    /** At most this many ledgers are checked at once (their metadata read, and with deep, their entries). */
    static final int PARALLEL_CHECKS = 32;

    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts;
    private final CleanupService cleanup;
    private final LongFunction<CompletableFuture<Void>> pace;
    private final Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf;
    private final Clock clock;

    /**
     * @param facts   reads a cluster's metadata (id generator) without touching its bookies
     * @param pace    paces the entry reads of a deep check (the migration's rate limit)
     * @param compactedLedgerOf the compacted ledger a managed ledger's topic uses now, as its owning broker knows it
     *                (empty: none, or the topic is not loaded): the metadata store's copy of the compaction cursor's
     *                properties lags behind until the cursor next switches ledgers
     */
    public InvariantAuditor(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                            Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts,
                            CleanupService cleanup, LongFunction<CompletableFuture<Void>> pace,
                            Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf, Clock clock) {
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
        this.facts = facts;
        this.cleanup = cleanup;
        this.pace = pace;
        this.compactedLedgerOf = compactedLedgerOf;
        this.clock = clock;
    }

    /** What was read once and is checked against. */
    /**
     * @param unknown the managed ledgers of compacted topics whose ledger in use could not be learnt (see
     *                {@link LedgerInventory#picture()})
     */
    private record World(RegistryView view, List<LedgerReference> refs, Set<String> unknown,
                         List<BookieClusterRecord> clusters, Map<String, List<Long>> ledgers, BrokerView brokers,
                         List<MigrationState> migrations) {
    }

    public CompletableFuture<VerifyReport> verify(boolean deep) {
        List<Violation> violations = Collections.synchronizedList(new ArrayList<>());
        List<String> unchecked = Collections.synchronizedList(new ArrayList<>());
        return read(unchecked).thenCompose(w -> {
            checkRanges(w, violations);
            checkBrokers(w, violations);
            return CompletableFuture.allOf(
                    checkReferenced(w, violations, unchecked),
                    checkCopies(w, deep, violations),
                    checkGenerators(w, violations, unchecked),
                    checkDeletions(w, violations, unchecked)).thenApply(v -> {
                        List<Violation> sorted = new ArrayList<>(violations);
                        sorted.sort(java.util.Comparator.comparing(Violation::check).thenComparing(x ->
                                x.ledgerId() == null ? -1 : x.ledgerId()).thenComparing(x -> String.valueOf(x.cluster())));
                        List<String> u = new ArrayList<>(new TreeSet<>(unchecked));
                        return new VerifyReport(sorted.isEmpty(), clock.millis(), deep,
                                (int) w.refs().stream().map(LedgerReference::ledgerId).distinct().count(),
                                List.copyOf(w.ledgers().keySet()), w.view().relocations().size(), List.copyOf(sorted),
                                List.copyOf(u), removal(w, sorted, u));
                    });
        });
    }

    /** How many ledgers a "not on the active cluster" reason names before it only counts. */
    static final int REMOVAL_EXAMPLES = 5;

    /**
     * Whether stock Pulsar storage, pointed at the active cluster, would find every ledger the brokers reference: each
     * one's home is the active cluster (a relocated ledger's copy there has its own id), no migration is between its
     * start and its end, and nothing was found wrong or left unchecked.
     */
    static VerifyReport.Removal removal(World w, List<Violation> violations, List<String> unchecked) {
        Optional<BookieClusterRecord> active = w.clusters().stream().filter(c -> c.status() == ClusterStatus.ACTIVE)
                .findFirst();
        String name = active.map(BookieClusterRecord::name).orElse(null);
        List<String> because = new ArrayList<>();
        if (active.isEmpty()) {
            because.add("no bookie cluster is ACTIVE in the registry");
        }
        Map<Long, LedgerReference> elsewhere = new TreeMap<>();
        Set<Long> referenced = new TreeSet<>();
        for (LedgerReference r : w.refs()) {
            if (r.kind() == LedgerKind.OTHER) {
                continue;
            }
            referenced.add(r.ledgerId());
            if (!w.view().home(r.ledgerId()).map(h -> h.equals(name)).orElse(false)) {
                elsewhere.putIfAbsent(r.ledgerId(), r);
            }
        }
        if (!elsewhere.isEmpty() && active.isPresent()) {
            List<String> examples = elsewhere.values().stream().limit(REMOVAL_EXAMPLES).map(r -> "ledger "
                    + r.ledgerId() + " on " + w.view().home(r.ledgerId()).orElse("(no cluster)") + " ("
                    + r.kind().name().toLowerCase(java.util.Locale.ROOT) + ", " + r.referencedBy() + ")").toList();
            because.add(elsewhere.size() + " referenced ledger(s) are not on " + name + ": " + String.join("; ",
                    examples) + (elsewhere.size() > examples.size() ? "; ..." : "") + " (see the drain report of "
                    + "each cluster: retention removes data ledgers, the migration moves the others)");
        }
        w.migrations().stream().filter(m -> !m.phase().terminal()).forEach(m -> because.add("the migration of switch "
                + "epoch " + m.switchEpoch() + " is in phase " + m.phase()));
        if (!violations.isEmpty()) {
            because.add(violations.size() + " violation(s) of the plugin's invariants (listed above)");
        }
        if (!unchecked.isEmpty()) {
            because.add(unchecked.size() + " item(s) could not be checked (listed above)");
        }
        boolean safe = because.isEmpty();
        if (safe) {
            because.add("all " + referenced.size() + " referenced ledgers are on " + name + "; set "
                    + "bookkeeperMetadataServiceUri=" + active.get().metadataServiceUri() + " and the default "
                    + "managedLedgerStorageClassName and schemaRegistryStorageClassName on every broker");
        }
        return new VerifyReport.Removal(safe, name, active.map(BookieClusterRecord::metadataServiceUri).orElse(null),
                List.copyOf(because));
    }

    private CompletableFuture<World> read(List<String> unchecked) {
        return RegistryView.read(registry).thenCompose(listed -> registry.readRelocations(
                listed.relocations().keySet()).thenApply(listed::withFresh)).thenCompose(view ->
                inventory.picture().thenCompose(picture -> registry.listClusters().thenCompose(clusters -> {
                    // a compacted topic its owner cannot load is checked as its stored compaction cursor names it
                    picture.unknown().forEach(u -> unchecked.add("the compacted ledger " + u.referencedBy()
                            + " uses now (checked as stored: ledger " + u.storedLedger() + "): " + u.reason()));
                    List<LedgerReference> refs = picture.references();
                    Map<String, CompletableFuture<List<Long>>> lists = new TreeMap<>();
                    for (BookieClusterRecord c : clusters) {
                        lists.put(c.name(), copier.list(c.name()).exceptionally(e -> {
                            unchecked.add("ledgers of bookie cluster '" + c.name() + "' could not be listed: "
                                    + root(e));
                            return null;
                        }));
                    }
                    return CompletableFuture.allOf(lists.values().toArray(CompletableFuture[]::new))
                            .thenCompose(v -> BrokerView.read(registry)).thenCompose(brokers -> migrations()
                                    .thenApply(ms -> {
                                        Map<String, List<Long>> ledgers = new TreeMap<>();
                                        lists.forEach((n, f) -> {
                                            if (f.join() != null) {
                                                ledgers.put(n, f.join());
                                            }
                                        });
                                        Set<String> unknown = new HashSet<>();
                                        picture.unknown().forEach(u -> unknown.add(u.referencedBy()));
                                        return new World(view, refs, unknown, clusters, ledgers, brokers, ms);
                                    }));
                })));
    }

    private CompletableFuture<List<MigrationState>> migrations() {
        return registry.listMigrationStates();
    }

    /** 1: every referenced ledger exists on its home cluster, closed where expected. */
    private CompletableFuture<Void> checkReferenced(World w, List<Violation> violations, List<String> unchecked) {
        Map<Long, LedgerReference> byId = new LinkedHashMap<>();
        // the newest data ledger of each managed ledger is the one it writes: the only one that may be open
        Map<String, Long> newestData = new HashMap<>();
        for (LedgerReference r : w.refs()) {
            if (r.kind() == LedgerKind.OTHER) {
                continue; // a cursor property that may or may not name a ledger
            }
            if (r.kind() == LedgerKind.DATA) {
                newestData.merge(r.referencedBy(), r.ledgerId(), Math::max);
            }
            // a data reference says the most (what it holds, who writes it)
            byId.merge(r.ledgerId(), r, (a, b) -> a.kind() == LedgerKind.DATA ? a : b);
        }
        Set<String> deprecated = new HashSet<>();
        w.clusters().stream().filter(c -> c.status() == ClusterStatus.DEPRECATED).forEach(c -> deprecated.add(c.name()));
        List<LedgerReference> toRead = new ArrayList<>();
        for (LedgerReference r : byId.values()) {
            Optional<String> home = w.view().home(r.ledgerId());
            if (home.isEmpty()) {
                violations.add(new Violation("REFERENCED_MISSING", r.ledgerId(), null, r.referencedBy(),
                        "no range of the range table covers this id: it cannot be routed"));
                continue;
            }
            String cluster = home.get();
            if (deprecated.contains(cluster)) {
                // brokers have closed their clients to it: reads of this ledger fail
                violations.add(new Violation("HOME_DEPRECATED", r.ledgerId(), cluster, r.referencedBy(),
                        r.kind() + " ledger is read from " + cluster + ", which is DEPRECATED"));
            }
            if (!w.ledgers().containsKey(cluster)) {
                unchecked.add("ledger " + r.ledgerId() + " (" + r.referencedBy() + ") on '" + cluster + "': the "
                        + "cluster could not be listed");
                continue;
            }
            toRead.add(r);
        }
        return Windows.map(toRead, PARALLEL_CHECKS, r -> checkReferenced(r, w.view().home(r.ledgerId()).orElseThrow(),
                newestData, w.unknown(), violations, unchecked)).thenApply(x -> null);
    }

    private CompletableFuture<Void> checkReferenced(LedgerReference r, String cluster, Map<String, Long> newestData,
                                                    Set<String> unknown, List<Violation> violations,
                                                    List<String> unchecked) {
        return copier.facts(r.ledgerId(), cluster).handle((f, e) -> {
            if (e != null) {
                unchecked.add("ledger " + r.ledgerId() + " on '" + cluster + "': " + root(e));
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (f.isEmpty() && r.kind() == LedgerKind.COMPACTION && unknown.contains(managedLedger(r))) {
                // its owner could not say which compacted ledger it uses: asking again would only wait again
                unchecked.add("compacted ledger " + r.ledgerId() + " of " + managedLedger(r) + " is not on " + cluster
                        + ", and its topic's owner cannot say whether it is still the one in use");
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (f.isEmpty() && r.kind() == LedgerKind.COMPACTION) {
                return stillTheCompactedLedger(r).thenAccept(current -> {
                    if (current) {
                        violations.add(new Violation("REFERENCED_MISSING", r.ledgerId(), cluster, r.referencedBy(),
                                "the compacted ledger is not on " + cluster + ", where routing sends its reads"));
                    }
                });
            }
            if (f.isEmpty()) {
                violations.add(new Violation("REFERENCED_MISSING", r.ledgerId(), cluster, r.referencedBy(),
                        r.kind() + " ledger is not on " + cluster + ", where routing sends its reads"));
            } else if (!f.get().closed() && mustBeClosed(r, newestData)) {
                violations.add(new Violation("NOT_CLOSED", r.ledgerId(), cluster, r.referencedBy(),
                        r.kind() + " ledger is open on " + cluster + " although "
                                + (r.kind() == LedgerKind.DATA ? "its managed ledger closed it" : "it is written "
                                + "once and closed")));
            }
            return CompletableFuture.<Void>completedFuture(null);
        }).thenCompose(x -> x);
    }

    /**
     * Whether {@code r} (a compaction cursor's ledger property, as the metadata store has it) is still the compacted
     * ledger its topic uses: the stored copy lags behind the cursor's own ledger, so a ledger a newer compaction
     * replaced (and Pulsar deleted) stays named there for a while.
     */
    private CompletableFuture<Boolean> stillTheCompactedLedger(LedgerReference r) {
        return compactedLedgerOf.apply(managedLedger(r)).handle((current, e) -> e != null || current.isEmpty()
                || current.get() == r.ledgerId());
    }

    /** The managed ledger of a compaction reference ({@code "<managed ledger>/<cursor>#<property>"}). */
    private static String managedLedger(LedgerReference r) {
        return r.referencedBy().substring(0, r.referencedBy().lastIndexOf('/'));
    }

    private static boolean mustBeClosed(LedgerReference r, Map<String, Long> newestData) {
        return switch (r.kind()) {
            case DATA -> r.ledgerId() != newestData.get(r.referencedBy());
            case SCHEMA, COMPACTION -> true;
            default -> false;
        };
    }

    /** 2: ids on several clusters are explained, and copies have their home's content. */
    private CompletableFuture<Void> checkCopies(World w, boolean deep, List<Violation> violations) {
        Map<Long, List<String>> holders = new TreeMap<>();
        w.ledgers().forEach((cluster, ids) -> ids.forEach(id -> holders.computeIfAbsent(id, k -> new ArrayList<>())
                .add(cluster)));
        Map<Long, String> refBy = new HashMap<>();
        w.refs().forEach(r -> refBy.putIfAbsent(r.ledgerId(), r.referencedBy()));
        List<Map.Entry<Long, List<String>>> several = holders.entrySet().stream().filter(h -> h.getValue().size() > 1)
                .toList();
        // an id held by one cluster that neither issued it nor is its home: a copy of a ledger gone everywhere else
        List<Map.Entry<Long, List<String>>> alone = holders.entrySet().stream().filter(h -> h.getValue().size() == 1
                && !w.view().home(h.getKey()).map(h.getValue().get(0)::equals).orElse(false)
                && !w.view().ranges().owner(h.getKey()).map(h.getValue().get(0)::equals).orElse(false)).toList();
        return Windows.map(several, PARALLEL_CHECKS, h -> checkCopiesOf(h.getKey(), h.getValue(), w, deep, refBy,
                violations)).thenCompose(x -> Windows.map(alone, PARALLEL_CHECKS, h -> checkLeftOver(h.getKey(),
                h.getValue().get(0), w, refBy, violations))).thenApply(x -> null);
    }

    /**
     * 2b: a copy the migration made, of a ledger no other cluster holds any more, where it is not home: Pulsar deleted
     * the ledger while it was moved, and the copy is read by nothing and deleted by nothing (a referenced one is
     * named missing at its home instead).
     */
    private CompletableFuture<Void> checkLeftOver(long id, String cluster, World w, Map<Long, String> refBy,
                                                  List<Violation> violations) {
        if (refBy.containsKey(id)) {
            return CompletableFuture.completedFuture(null);
        }
        return copier.facts(id, cluster).exceptionally(e -> Optional.empty()).thenAccept(f -> {
            if (f.map(x -> x.copyOf() != null).orElse(false)) {
                violations.add(new Violation("ORPHAN_COPY", id, cluster, null, "a copy the migration made from "
                        + f.get().copyOf() + " of a ledger no other cluster holds and nothing references; its home is "
                        + w.view().home(id).orElse("(none)") + ", so nothing reads it and nothing deletes it"));
            }
        });
    }

    private CompletableFuture<Void> checkCopiesOf(long id, List<String> holderClusters, World w, boolean deep,
                                                  Map<Long, String> refBy, List<Violation> violations) {
        Optional<String> home = w.view().home(id);
        Optional<String> issuer = w.view().ranges().owner(id);
        Map<String, CompletableFuture<Optional<LedgerFacts>>> facts = new TreeMap<>();
        holderClusters.forEach(c -> facts.put(c, copier.facts(id, c).exceptionally(e -> Optional.empty())));
        return CompletableFuture.allOf(facts.values().toArray(CompletableFuture[]::new)).thenCompose(v -> {
            Optional<LedgerFacts> homeFacts = home.flatMap(c -> facts.containsKey(c) ? facts.get(c).join()
                    : Optional.empty());
            List<CompletableFuture<Void>> checks = new ArrayList<>();
            for (String c : holderClusters) {
                if (home.map(c::equals).orElse(false)) {
                    continue;
                }
                Optional<LedgerFacts> f = facts.get(c).join();
                boolean explained = issuer.map(c::equals).orElse(false)
                        || f.map(x -> x.copyOf() != null || x.probe()).orElse(false);
                if (!explained) {
                    violations.add(new Violation("UNEXPLAINED_COPY", id, c, refBy.get(id), "ledger id also "
                            + "exists on " + holderClusters + "; its home is " + home.orElse("(none)")
                            + ", and the one on " + c + " is neither the original nor a copy the migration made"));
                    continue;
                }
                if (f.isEmpty() || homeFacts.isEmpty() || !f.get().closed() || !refBy.containsKey(id)) {
                    continue; // a copy being written, or a copy of a ledger nothing references: cleanup's
                }
                if (!homeFacts.get().sameClosedContent(f.get())) {
                    violations.add(new Violation("COPY_DIFFERS", id, c, refBy.get(id), "the copy on " + c
                            + " has last entry " + f.get().lastEntryId() + " and length " + f.get().length()
                            + ", its home on " + home.get() + " " + homeFacts.get().lastEntryId() + " and "
                            + homeFacts.get().length()));
                } else if (deep) {
                    checks.add(copier.sameEntries(id, home.get(), c, pace).handle((same, e) -> {
                        if (e == null && !same) {
                            violations.add(new Violation("COPY_DIFFERS", id, c, refBy.get(id), "the entries "
                                    + "on " + c + " differ from those of its home on " + home.get()
                                    + " (CRC32C of the payloads)"));
                        }
                        return null;
                    }));
                }
            }
            return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new));
        });
    }

    /** 3a: first ids and epochs strictly increase. */
    private void checkRanges(World w, List<Violation> violations) {
        RangeTable t = w.view().ranges();
        List<IdRange> r = t.ranges();
        for (int i = 1; i < r.size(); i++) {
            if (r.get(i).firstLedgerId() <= r.get(i - 1).firstLedgerId() || r.get(i).epoch() <= r.get(i - 1).epoch()) {
                violations.add(new Violation("RANGES", null, r.get(i).cluster(), null, "range " + r.get(i)
                        + " does not start above " + r.get(i - 1)));
            }
        }
    }

    /** 3b: the active cluster issues ids only in its own range. */
    private CompletableFuture<Void> checkGenerators(World w, List<Violation> violations, List<String> unchecked) {
        String active = w.view().activeCluster();
        Optional<BookieClusterRecord> rec = w.clusters().stream().filter(c -> c.name().equals(active)).findFirst();
        if (rec.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return facts.apply(rec.get()).handle((f, e) -> {
            if (e != null) {
                unchecked.add("id generator of the active cluster '" + active + "': " + root(e));
                return null;
            }
            long next = f.maxHighOrderBits() << 32;
            Optional<String> owner = w.view().ranges().owner(next);
            Optional<IdRange> newest = w.view().ranges().last();
            boolean inOwnRange = owner.map(active::equals).orElse(false)
                    && newest.map(n -> n.cluster().equals(active) && next >= n.firstLedgerId()).orElse(false);
            if (!inOwnRange) {
                violations.add(new Violation("ID_GENERATOR", null, active, null, "the active cluster's id generator "
                        + "is at high-order bits " + f.maxHighOrderBits() + ", which the range table gives to "
                        + owner.orElse("(nobody)") + "; newest range " + newest.orElse(null)));
            }
            return null;
        });
    }

    /** 4: every live broker follows the current switch and relocation table. */
    private void checkBrokers(World w, List<Violation> violations) {
        long epoch = w.view().switchEpoch();
        for (String b : w.brokers().notFollowing(epoch)) {
            violations.add(new Violation("BROKER_NOT_FOLLOWING", null, b, null, "live broker does not follow switch "
                    + "epoch " + epoch));
        }
        for (String b : w.brokers().relocationPending(w.view().relocationEpoch())) {
            violations.add(new Violation("BROKER_ROUTES_OLD_RELOCATIONS", null, b, null, "live broker has not applied "
                    + "relocation epoch " + w.view().relocationEpoch()));
        }
    }

    /** 5: nothing scheduled for deletion is a ledger's home. */
    private CompletableFuture<Void> checkDeletions(World w, List<Violation> violations, List<String> unchecked) {
        List<CompletableFuture<Void>> each = new ArrayList<>();
        for (MigrationState s : w.migrations()) {
            if (s.phase() != Phase.ROLLED_BACK || !s.deletionsPending()) {
                continue;
            }
            each.add(registry.readCopies(s.switchEpoch()).thenAccept(chunks -> {
                Set<Long> ids = new TreeSet<>(s.pendingDeletions());
                chunks.values().forEach(ids::addAll);
                for (long id : ids) {
                    if (w.view().home(id).map(s.target()::equals).orElse(false)) {
                        violations.add(new Violation("HOME_SCHEDULED_FOR_DELETION", id, s.target(), null,
                                "the rollback of switch epoch " + s.switchEpoch() + " lists it for deletion from "
                                        + s.target() + ", where it is home"));
                    }
                }
            }));
        }
        if (!w.unknown().isEmpty()) {
            // cleanup plans only on a complete picture: asking it would wait for the same topics again, for nothing
            unchecked.add("cleanup targets: not computed while the inventory is incomplete (cleanup refuses too)");
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
        }
        each.add(cleanup.targetsOnInactiveClusters().handle((targets, e) -> {
            if (e != null) {
                unchecked.add("cleanup targets: " + root(e));
                return null;
            }
            for (CleanupTarget t : targets) {
                // an unreferenced ledger is deleted where it lies, its home: that is what cleanup is for (a leftover
                // whose metadata Pulsar deleted, the copy of a ledger deleted while it was migrated)
                if (!t.reason().equals("UNREFERENCED")
                        && w.view().home(t.ledgerId()).map(t.cluster()::equals).orElse(false)) {
                    violations.add(new Violation("HOME_IS_CLEANUP_TARGET", t.ledgerId(), t.cluster(), null,
                            "cleanup would delete it (" + t.reason() + ") where it is home"));
                }
            }
            return null;
        }));
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
    }

    private static String root(Throwable e) {
        Throwable t = Failures.unwrap(e);
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }
}
