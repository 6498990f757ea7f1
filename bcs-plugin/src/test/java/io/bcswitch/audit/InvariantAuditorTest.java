package io.bcswitch.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.migration.CleanupService;
import io.bcswitch.migration.DrainReports;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.migration.MigrationMetrics;
import io.bcswitch.migration.MigrationOrchestrator;
import io.bcswitch.migration.RetentionLookup;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.RelocationEpoch;
import io.bcswitch.registry.SwitchDirective;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each invariant the auditor checks, broken on purpose one at a time in an otherwise consistent state (in-memory
 * metadata store, clusters as maps of ledgers): the violation is named with its ledger and cluster, and a consistent
 * state has none.
 */
class InvariantAuditorTest {
    /** The copy rate's budget, as the broker builds it. */
    private static final io.bcswitch.migration.ByteBudget.Factory PACE = PulsarByteBudget::refilledAt;
    private static final long B = 1L << 32;

    private MetadataStoreExtended store;
    private RegistryStore registry;
    private ScheduledExecutorService scheduler;
    /** cluster -> ledger id -> (closed, length, copyOf) */
    private final Map<String, Map<Long, LedgerCopier.LedgerFacts>> clusters = new ConcurrentHashMap<>();
    private final List<LedgerReference> refs = new ArrayList<>();
    private long generatorOfB = 1;

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        scheduler = Executors.newSingleThreadScheduledExecutor();
        for (String c : List.of("a", "b")) {
            registry.write(registry.paths().cluster(c), new BookieClusterRecord(1, c, "zk+hierarchical://zk-" + c
                    + ":2181/ledgers", c.equals("b") ? ClusterStatus.ACTIVE : ClusterStatus.STANDBY, 1), -1).get();
            clusters.put(c, new TreeMap<>());
        }
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 0).with(new IdRange("b", B, 1, 0)), -1)
                .get();
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 0, B), -1).get();
        registry.writeEphemeral(registry.paths().broker("x"), new BrokerCutoverRecord(1, "x", 1, "b", 0, 0, 0, 1, 2))
                .get();
        registry.writeEphemeral(registry.paths().relocationApplied("x"), new RelocationEpoch(1, 1, 0)).get();
        registry.write(registry.paths().relocationEpoch(), new RelocationEpoch(1, 1, 0), -1).get();
        // a consistent state: a data ledger on a, one on b (open, the topic's current), a schema ledger relocated to b
        ledger("a", 5, true, 100, null);
        ledger("b", B + 1, false, 0, null);
        ledger("a", 7, true, 50, null);
        ledger("b", 7, true, 50, "a");
        refs.add(new LedgerReference(5, LedgerKind.DATA, "t/ns/persistent/x", 100L, 1L));
        refs.add(new LedgerReference(B + 1, LedgerKind.DATA, "t/ns/persistent/x"));
        refs.add(new LedgerReference(7, LedgerKind.SCHEMA, "t/ns/x"));
        registry.updateRelocations(List.of(7L), (id, cur) -> Optional.of(new Relocation(1, 7, "b", "a", "SCHEMA", 1,
                0))).get();
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "x", 0)
                .moveTo(Phase.BUILD, 1).moveTo(Phase.PROMOTE, 2).moveTo(Phase.DONE, 3), -1).get();
    }

    @AfterEach
    void tearDown() throws Exception {
        scheduler.shutdownNow();
        store.close();
    }

    private void ledger(String cluster, long id, boolean closed, long length, String copyOf) {
        clusters.get(cluster).put(id, new LedgerCopier.LedgerFacts(closed, length, closed ? length / 10 : -1,
                "managed-ledger", copyOf, false));
    }

    private volatile boolean slowFacts;
    /** "id@cluster" whose metadata cannot be read. */
    private final java.util.Set<String> unreadable = ConcurrentHashMap.newKeySet();
    /** What a deep verify's entry comparison answers; null: it fails. */
    private volatile Boolean entriesCompare = true;
    /** The entry comparisons asked for: "id@home~copy". */
    private final List<String> compared = java.util.Collections.synchronizedList(new ArrayList<>());
    private boolean deep;
    /** The compared ledger is deleted everywhere while its entries are read. */
    private volatile boolean deletedWhileCompared;
    /** Clusters whose metadata service never answers (their reads never complete). */
    private final java.util.Set<String> silent = ConcurrentHashMap.newKeySet();
    /** How long a cluster's metadata read may take in a verify. */
    private long answerMillis = InvariantAuditor.CLUSTER_ANSWER_MILLIS;
    /** Ledgers a listing does not show (one begun before they were made, which verify joined). */
    private final java.util.Set<Long> hiddenFromListing = ConcurrentHashMap.newKeySet();
    /** Clusters whose ledgers cannot be listed. */
    private final java.util.Set<String> unlistable = ConcurrentHashMap.newKeySet();
    /** The compacted ledger each topic's owner says it uses now (managed ledger name to id). */
    private final Map<String, Long> compactedInUse = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger mostInFlight =
            new java.util.concurrent.atomic.AtomicInteger();

    private final LedgerCopier copier = new LedgerCopier() {
        @Override
        public CompletableFuture<Outcome> copy(long id, String from, String to, LongFunction<CompletableFuture<Void>> p) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
            if (silent.contains(cluster)) {
                return new CompletableFuture<>();
            }
            if (unreadable.contains(id + "@" + cluster)) {
                return CompletableFuture.failedFuture(new IllegalStateException("metadata service did not answer"));
            }
            Optional<LedgerFacts> f = Optional.ofNullable(clusters.get(cluster).get(id));
            if (!slowFacts) {
                return CompletableFuture.completedFuture(f);
            }
            mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CompletableFuture<Optional<LedgerFacts>> later = new CompletableFuture<>();
            scheduler.schedule(() -> {
                inFlight.decrementAndGet();
                later.complete(f);
            }, 2, TimeUnit.MILLISECONDS);
            return later;
        }

        @Override
        public CompletableFuture<List<Long>> list(String cluster) {
            if (silent.contains(cluster)) {
                return new CompletableFuture<>();
            }
            if (unlistable.contains(cluster)) {
                return CompletableFuture.failedFuture(new IllegalStateException("ledger manager did not answer"));
            }
            List<Long> ids = new ArrayList<>(clusters.get(cluster).keySet());
            ids.removeAll(hiddenFromListing);
            return CompletableFuture.completedFuture(ids);
        }

        @Override
        public CompletableFuture<Boolean> sameEntries(long id, String a, String b,
                                                      LongFunction<CompletableFuture<Void>> pace) {
            compared.add(id + "@" + a + "~" + b);
            if (deletedWhileCompared) {
                clusters.values().forEach(c -> c.remove(id)); // Pulsar deletes it meanwhile: the reads fail
            }
            return entriesCompare == null || deletedWhileCompared
                    ? CompletableFuture.failedFuture(new IllegalStateException("read timed out"))
                    : CompletableFuture.completedFuture(entriesCompare);
        }

        @Override
        public CompletableFuture<Void> delete(long id, String cluster) {
            clusters.get(cluster).remove(id);
            return CompletableFuture.completedFuture(null);
        }
    };

    /** Parts of the inventory that cannot be learnt now (a compacted topic its owner cannot load). */
    private final List<LedgerInventory.Unknown> unknown = new ArrayList<>();

    /** A ledger Pulsar trims (drops from its managed ledger, then deletes) just after verify read the references. */
    private Long trimmedAfterRead;

    private VerifyReport verify() throws Exception {
        SwitchConfig.Migration config = new SwitchConfig.Migration(1, 0, 10, 24);
        LedgerInventory inventory = new LedgerInventory() {
            @Override
            public CompletableFuture<List<LedgerReference>> references() {
                return unknown.isEmpty() ? CompletableFuture.completedFuture(refs)
                        : CompletableFuture.failedFuture(new IllegalStateException("partial"));
            }

            @Override
            public CompletableFuture<Picture> picture() {
                Picture p = new Picture(refs, unknown);
                if (trimmedAfterRead != null) {
                    // Pulsar drops the ledger from its managed ledger and deletes it right after this read
                    refs.removeIf(r -> r.ledgerId() == trimmedAfterRead);
                    clusters.values().forEach(c -> c.remove(trimmedAfterRead));
                    trimmedAfterRead = null;
                }
                return CompletableFuture.completedFuture(p);
            }
        };
        MigrationOrchestrator o = new MigrationOrchestrator(registry, () -> CompletableFuture.completedFuture(refs),
                copier, config, () -> "x", scheduler, PACE, Clock.systemUTC(), MigrationMetrics.NONE,
                c -> CompletableFuture.failedFuture(new UnsupportedOperationException()));
        DrainReports drain = new DrainReports(registry, () -> CompletableFuture.completedFuture(refs), copier,
                ml -> CompletableFuture.completedFuture(new RetentionLookup.Retention(0, "test")));
        CleanupService cleanup = new CleanupService(registry, () -> CompletableFuture.completedFuture(refs), copier,
                o, drain, config, MigrationMetrics.NONE, Clock.systemUTC());
        InvariantAuditor auditor = new InvariantAuditor(registry, inventory, copier, c -> CompletableFuture.completedFuture(new ClusterFacts("HierarchicalLedgerManagerFactory",
                true, c.name().equals("b") ? generatorOfB : 0, -1, 1, 0)), cleanup,
                n -> CompletableFuture.completedFuture(null),
                ml -> CompletableFuture.completedFuture(Optional.ofNullable(compactedInUse.get(ml))),
                Clock.systemUTC(), answerMillis, answerMillis);
        return auditor.verify(deep).get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    private static String checks(VerifyReport r) {
        return String.join(",", r.violations().stream().map(v -> v.check() + ":" + v.ledgerId() + "@" + v.cluster())
                .toList());
    }

    @Test
    void aConsistentStateHasNoViolation() throws Exception {
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r) + " " + r.unchecked());
        assertEquals(3, r.referencedLedgers());
        assertEquals(1, r.relocations());
    }

    @Test
    void aCompactedTopicItsOwnerCannotLoadIsCheckedAsStoredAndSaidSo() throws Exception {
        unknown.add(new LedgerInventory.Unknown("t/ns/persistent/c", 5, "cannot load the topic"));
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r));
        assertEquals(3, r.referencedLedgers(), "the stored references are checked");
        assertTrue(r.unchecked().stream().anyMatch(u -> u.contains("t/ns/persistent/c") && u.contains("ledger 5")
                && u.contains("cannot load the topic")), String.valueOf(r.unchecked()));
        // cleanup would only wait for the same topics again, and refuse: it is not asked
        assertTrue(r.unchecked().stream().anyMatch(u -> u.startsWith("cleanup targets: not computed"))
                && r.unchecked().stream().noneMatch(u -> u.contains("partial")), String.valueOf(r.unchecked()));
    }

    @Test
    void aMissingStoredCompactedLedgerOfATopicThatCannotBeAskedIsUncheckedNotAViolation() throws Exception {
        // the stored compaction cursor names ledger 9, which is not on a (a newer compaction may have replaced it);
        // the owner cannot say which one the topic uses: that is not known, so it is not a violation
        refs.add(new LedgerReference(9, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction#CompactedTopicLedger"));
        unknown.add(new LedgerInventory.Unknown("t/ns/persistent/c", 9, "cannot load the topic"));
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r));
        assertTrue(r.unchecked().stream().anyMatch(u -> u.startsWith("compacted ledger 9 of t/ns/persistent/c")),
                String.valueOf(r.unchecked()));
    }

    @Test
    void manyCopiesAreCheckedAFewAtATime() throws Exception {
        for (long id = 100; id < 400; id++) {
            ledger("a", id, true, 10, null);
            ledger("b", id, true, 10, "a"); // a stray copy of a ledger that is home where it was made
            refs.add(new LedgerReference(id, LedgerKind.SCHEMA, "t/ns/s" + id));
        }
        slowFacts = true;
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r).substring(0, Math.min(300, checks(r).length())));
        // three checks run side by side (referenced ledgers, copies, cleanup's plan), each a window at a time
        assertTrue(mostInFlight.get() <= 3 * InvariantAuditor.PARALLEL_CHECKS + 8,
                "metadata reads at once: " + mostInFlight.get());
    }

    @Test
    void aLeftoverNothingReferencesIsNoViolationWhereItLies() throws Exception {
        // a ledger Pulsar deleted from its metadata whose bookie data stayed: cleanup deletes it where it lies, its
        // home (explorer seed -8719613393222291990 named such a copy HOME_IS_CLEANUP_TARGET)
        ledger("a", 9, true, 10, null);
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r));
    }

    @Test
    void aReferencedLedgerReadFromADeprecatedClusterIsNamed() throws Exception {
        registry.write(registry.paths().cluster("a"), new BookieClusterRecord(1, "a", "zk+hierarchical://zk-a:2181/"
                + "ledgers", ClusterStatus.DEPRECATED, 1), 0).get(); // while a ledger read from a is referenced
        assertEquals("HOME_DEPRECATED:5@a", checks(verify()));
    }

    @Test
    void aDataLedgerPulsarTrimsWhileVerifyReadsIsNotMissing() throws Exception {
        // found on a cluster of broker processes: a broker trimmed a consumed data ledger between verify's read of
        // the references and its look at the ledger, and verify named it REFERENCED_MISSING
        trimmedAfterRead = 5L;
        VerifyReport r = verify();
        assertEquals("", checks(r), r.toString());
        assertTrue(r.ok());
    }

    @Test
    void aReferencedLedgerMissingFromItsHomeIsNamed() throws Exception {
        clusters.get("b").remove(7L); // the relocated schema ledger's home copy is gone
        assertEquals("REFERENCED_MISSING:7@b", checks(verify()));
    }

    @Test
    void aClosedDataLedgerLeftOpenIsNamed() throws Exception {
        ledger("a", 5, false, 100, null);
        assertEquals("NOT_CLOSED:5@a", checks(verify()));
    }

    @Test
    void aLedgerIdOnTwoClustersThatNothingExplainsIsNamed() throws Exception {
        ledger("b", 5, true, 100, null); // not a copy of ours, not where the range table says 5 was issued
        assertEquals("UNEXPLAINED_COPY:5@b", checks(verify()));
    }

    @Test
    void aCopyLeftWhereItIsNotHomeAfterItsLedgerWasDeletedEverywhereElseIsNamed() throws Exception {
        // Pulsar deleted schema ledger 9 on a (its home) after the migration had copied it to b
        ledger("b", 9, true, 10, "a");
        // not left over: an unreferenced ledger where it was issued, and a copy whose original is still there
        ledger("a", 10, true, 10, null);
        ledger("a", 11, true, 10, null);
        ledger("b", 11, true, 10, "a");
        assertEquals("ORPHAN_COPY:9@b", checks(verify()));
    }

    /**
     * A copy a rolled-back switch (or a superseded migration) still lists for deletion is decided about by the
     * migration's passes, which delete it once every broker routes without it since nothing references it: not an
     * orphan while listed (right after a rollback, a broker that has not applied the flip holds that up), named
     * once it leaves the list without being deleted.
     */
    @Test
    void aCopyOnADeletionListIsNotAnOrphanWhileListed() throws Exception {
        ledger("b", 9, true, 10, "a"); // Pulsar deleted 9 on a (its home) after it was copied to b
        registry.write(registry.paths().orchestrator(0), MigrationState.start(0, "b", "x", 0)
                .moveTo(Phase.ROLLING_BACK, 1).moveTo(Phase.ROLLED_BACK, 2).edit().deletions(1, 1).build(), -1).get();
        registry.appendCopies(0, 0, List.of(9L)).get();
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r));
        registry.removeCopies(0, 0, List.of(9L)).get();
        assertEquals("ORPHAN_COPY:9@b", checks(verify()));
        // a superseded migration's list too
        registry.write(registry.paths().orchestrator(5), MigrationState.start(5, "b", "x", 0)
                .moveTo(Phase.SUPERSEDED, 1), -1).get();
        registry.appendCopies(5, 0, List.of(9L)).get();
        r = verify();
        assertTrue(r.ok(), checks(r));
        registry.removeCopies(5, 0, List.of(9L)).get();
        assertEquals("ORPHAN_COPY:9@b", checks(verify()));
        // and a finished one's (the passes look at its copies that are not home once more)
        for (Phase ended : List.of(Phase.DONE, Phase.DONE_WITH_FAILURES)) {
            registry.write(registry.paths().orchestrator(6), MigrationState.start(6, "b", "x", 0)
                    .moveTo(Phase.BUILD, 1).moveTo(Phase.PROMOTE, 1).moveTo(ended, 1), -1).get();
            registry.appendCopies(6, 0, List.of(9L)).get();
            r = verify();
            assertTrue(r.ok(), ended + ": " + checks(r));
            registry.removeCopies(6, 0, List.of(9L)).get();
            assertEquals("ORPHAN_COPY:9@b", checks(verify()));
            store.delete(registry.paths().orchestrator(6), java.util.Optional.empty()).get();
        }
    }

    @Test
    void aCopyLeftOnARetiredClusterIsNotAnOrphan() throws Exception {
        // Pulsar deleted ledger B+5 (issued by b) after a migration had copied it to a
        ledger("a", B + 5, true, 10, "b");
        refs.removeIf(r -> r.ledgerId() == 5);
        clusters.get("a").remove(5L);
        assertEquals("ORPHAN_COPY:" + (B + 5) + "@a", checks(verify()));
        // a retired since (close-client): the brokers do not reach it again on their own, and what is left there goes
        // with it, or with a cleanup of it
        registry.write(registry.paths().cluster("a"), new BookieClusterRecord(1, "a", "zk+hierarchical://zk-a:2181/"
                + "ledgers", ClusterStatus.DEPRECATED, 1), 0).get();
        VerifyReport r = verify();
        assertTrue(r.ok(), checks(r));
    }

    @Test
    void aCopyThatBecameHomeOfALedgerPulsarDeletedThroughItsOldHomeIsNamed() throws Exception {
        // the schema ledger 7 is home on b; Pulsar deleted it on a while the copy was promoted
        clusters.get("a").remove(7L);
        refs.removeIf(r -> r.ledgerId() == 7);
        assertEquals("ORPHAN_COPY:7@b", checks(verify()));
    }

    @Test
    void aCopyThatIsHomeAndReferencedIsNotAnOrphanOnceItsOriginalIsDeleted() throws Exception {
        clusters.get("a").remove(7L); // cleanup deleted the original; the copy on b is what the schema reads
        assertEquals("", checks(verify()));
    }

    @Test
    void aDeepVerifyNamesACopyWhoseEntriesDifferFromItsHomesWithTheSameLengths() throws Exception {
        deep = true;
        assertEquals("", checks(verify()), "entries the same");
        assertEquals(List.of("7@b~a"), compared, "the copy on a compared with its home on b");
        entriesCompare = false;
        VerifyReport r = verify();
        assertEquals("COPY_DIFFERS:7@a", checks(r));
        assertTrue(r.violations().get(0).detail().contains("CRC32C"), r.violations().toString());
        deep = false;
        assertEquals("", checks(verify()), "a shallow verify compares lengths only");
    }

    @Test
    void aDeepComparisonThatFailsIsUncheckedNeverSkipped() throws Exception {
        deep = true;
        entriesCompare = null;
        VerifyReport r = verify();
        assertEquals("", checks(r));
        assertEquals(1, r.unchecked().size(), r.unchecked().toString());
        assertTrue(r.unchecked().get(0).contains("entries of ledger 7 on 'a'"), r.unchecked().toString());
        assertTrue(r.removal().because().stream().anyMatch(b -> b.startsWith("1 item(s) could not be checked")),
                "what was not checked keeps the plugin in: " + r.removal().because());
    }

    @Test
    void aReferencedLedgerTheListingDoesNotShowIsAskedNotTakenForMissing() throws Exception {
        hiddenFromListing.add(5L); // a listing another verify began before ledger 5 was made
        VerifyReport r = verify();
        assertTrue(r.ok(), r.violations().toString());
        clusters.get("a").remove(5L); // now it is really gone, and still referenced
        assertEquals(List.of("REFERENCED_MISSING 5"), verify().violations().stream()
                .map(v -> v.check() + " " + v.ledgerId()).toList());
    }

    @Test
    void aDeepComparisonOfALedgerDeletedMeanwhileLeavesNothingUnchecked() throws Exception {
        deep = true;
        deletedWhileCompared = true;
        VerifyReport r = verify();
        assertEquals(List.of("7@b~a"), compared);
        assertTrue(r.unchecked().stream().noneMatch(u -> u.contains("entries of ledger 7")), r.unchecked().toString());
    }

    @Test
    void aCopyWhoseMetadataCannotBeReadIsUncheckedNotTakenForAbsent() throws Exception {
        unreadable.add("7@a");
        ledger("a", 7, true, 60, null); // would differ from its home, were it read
        VerifyReport r = verify();
        assertEquals("", checks(r));
        // (cleanup's targets, computed from the same reads, are unchecked too)
        assertTrue(r.unchecked().contains("ledger 7 on 'a': its metadata could not be read: metadata service did not "
                + "answer"), r.unchecked().toString());
    }

    @Test
    void aLeftoverWhoseMetadataCannotBeReadIsUncheckedNotTakenForAbsent() throws Exception {
        ledger("b", 9, true, 10, "a"); // an orphaned copy (see below), whose metadata does not answer now
        unreadable.add("9@b");
        VerifyReport r = verify();
        assertEquals("", checks(r));
        assertEquals(1, r.unchecked().size(), r.unchecked().toString());
        assertTrue(r.unchecked().get(0).startsWith("ledger 9 on 'b': its metadata could not be read"),
                r.unchecked().toString());
    }

    @Test
    void aRangeTableWhoseRangesDoNotIncreaseIsNamed() throws Exception {
        // b's second range repeats its epoch (b's generator at its start, so that nothing else is wrong)
        registry.update(registry.paths().ranges(), RangeTable.class, cur -> Optional.of(new RangeTable(
                RangeTable.FORMAT_VERSION, List.of(new IdRange("a", 0, 0, 0), new IdRange("b", B, 1, 0),
                new IdRange("b", 2 * B, 1, 0))))).get();
        generatorOfB = 2;
        VerifyReport r = verify();
        assertEquals("RANGES:null@b", checks(r));
        assertTrue(r.violations().get(0).detail().contains("does not start above"), r.violations().toString());
    }

    @Test
    void aReferencedIdNoRangeCoversIsNamed() throws Exception {
        refs.add(new LedgerReference(-7, LedgerKind.DATA, "t/ns/persistent/y")); // no range covers a negative id
        VerifyReport r = verify();
        assertEquals("REFERENCED_MISSING:-7@null", checks(r));
        assertTrue(r.violations().get(0).detail().contains("no range of the range table covers this id"),
                r.violations().toString());
    }

    @Test
    void aReferencedLedgerWhoseMetadataCannotBeReadIsUnchecked() throws Exception {
        unreadable.add("5@a");
        VerifyReport r = verify();
        assertEquals("", checks(r));
        assertTrue(r.unchecked().contains("ledger 5 on 'a': metadata service did not answer"),
                r.unchecked().toString());
    }

    @Test
    void aClusterWhoseLedgersCannotBeListedIsUncheckedNotEmpty() throws Exception {
        unlistable.add("a");
        VerifyReport r = verify();
        assertEquals("", checks(r), "nothing on a is taken for missing");
        assertTrue(r.unchecked().contains("ledgers of bookie cluster 'a' could not be listed: ledger manager did not "
                + "answer"), r.unchecked().toString());
        assertTrue(r.unchecked().stream().anyMatch(u -> u.startsWith("ledger 5 (t/ns/persistent/x) on 'a': the "
                + "cluster could not be listed")), r.unchecked().toString());
    }

    /**
     * A cluster whose metadata service does not answer at all (its ZooKeeper down: BookKeeper's client waits for it):
     * verify still answers, each of its reads of that cluster bounded, the first that gets no answer naming it, and
     * every later one failing at once instead of waiting again.
     */
    @Test
    void aClusterWhoseMetadataServiceDoesNotAnswerIsUncheckedAndVerifyStillAnswers() throws Exception {
        silent.add("a");
        answerMillis = 300;
        VerifyReport r = verify(); // bounded by the test's wait: unbounded reads would never let it answer
        assertEquals("", checks(r), "nothing on a is taken for missing");
        String silence = "the metadata service of bookie cluster 'a' did not answer within 300 ms in this verify";
        assertTrue(r.unchecked().contains("ledgers of bookie cluster 'a' could not be listed: " + silence),
                r.unchecked().toString());
        assertTrue(r.unchecked().stream().anyMatch(u -> u.startsWith("ledger 5 (t/ns/persistent/x) on 'a'")),
                r.unchecked().toString());
        assertTrue(r.unchecked().stream().noneMatch(u -> u.contains("'b'")), "b answers: " + r.unchecked());
        assertTrue(!r.removal().safe(), r.removal().toString());
    }

    /**
     * A compaction cursor's stored ledger property lags behind: a compacted ledger a newer compaction replaced (and
     * Pulsar deleted) stays named there for a while, and is not missing; the one the topic still uses is.
     */
    @Test
    void aMissingCompactedLedgerIsNamedOnlyWhileItsTopicStillUsesIt() throws Exception {
        refs.add(new LedgerReference(9, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction#compactedLedger"));
        compactedInUse.put("t/ns/persistent/c", 9L);
        assertEquals("REFERENCED_MISSING:9@a", checks(verify()), "the topic still uses it, and a does not hold it");
        compactedInUse.put("t/ns/persistent/c", 11L);
        assertEquals("", checks(verify()), "a newer compaction replaced it");
    }

    @Test
    void aCopyThatDiffersFromItsHomeIsNamed() throws Exception {
        ledger("a", 7, true, 60, null); // the original on a no longer matches its home on b
        assertEquals("COPY_DIFFERS:7@a", checks(verify()));
    }

    @Test
    void theActiveClustersIdGeneratorOutsideItsRangeIsNamed() throws Exception {
        generatorOfB = 0; // b would issue ids of a's range
        assertEquals("ID_GENERATOR:null@b", checks(verify()));
    }

    @Test
    void aLiveBrokerThatDoesNotFollowIsNamed() throws Exception {
        registry.writeEphemeral(registry.paths().broker("y"), new BrokerCutoverRecord(1, "y", 0, "a", 0, 0, 0, 1, 2))
                .get();
        registry.writeEphemeral(registry.paths().relocationApplied("y"), new RelocationEpoch(1, 0, 0)).get();
        assertEquals("BROKER_NOT_FOLLOWING:null@y (at switch epoch 0, not 1),BROKER_ROUTES_OLD_RELOCATIONS:null@y",
                checks(verify()));
    }

    @Test
    void aHomeScheduledForDeletionIsNamed() throws Exception {
        // a rolled-back switch to b still lists 7 for deletion from b, where it is home again
        registry.write(registry.paths().orchestrator(0), MigrationState.start(0, "b", "x", 0)
                .moveTo(Phase.ROLLING_BACK, 1).moveTo(Phase.ROLLED_BACK, 2).edit().deletions(1, 1).build(), -1).get();
        registry.appendCopies(0, 0, List.of(7L)).get();
        assertEquals("HOME_SCHEDULED_FOR_DELETION:7@b", checks(verify()));
    }

    @Test
    void aLedgerARollbackKeptHomeOnItsClusterIsNamedAsANoticeWhileItIsStillHomeThere() throws Exception {
        // an earlier switch to b (epoch 0) was rolled back: it could not route 7 back, nor 5 (moved since), and 8
        // is an issue of its migration, not of its rollback
        String why = "stays home on b: it was read from bookie-cluster c before the switch, and bookie-cluster c is "
                + "no longer registered";
        registry.write(registry.paths().orchestrator(0), MigrationState.start(0, "b", "x", 0)
                .moveTo(Phase.ROLLING_BACK, 1).moveTo(Phase.ROLLED_BACK, 2).edit().issues(List.of(
                        new LedgerIssue(7, "SCHEMA", "b", LedgerIssue.NOT_REVERSED, why),
                        new LedgerIssue(5, "CURSOR", "b", LedgerIssue.NOT_REVERSED, why),
                        new LedgerIssue(8, "SCHEMA", "b", "FAILED", "its bookies did not answer"))).build(), -1).get();
        VerifyReport r = verify();
        assertTrue(r.ok(), "nothing is wrong: " + checks(r));
        assertEquals(List.of(new VerifyReport.Notice("NOT_REVERSED", 7L, "b", "the rollback of switch epoch 0 could "
                + "not route it back: " + why + "; it is read there until the migration of a later switch moves it "
                + "(retry-migration once that migration has finished)")), r.notices());
        assertEquals(List.of(), r.violations());
    }

    @Test
    void thePluginCanBeRemovedOnlyOnceEveryReferencedLedgerIsOnTheActiveCluster() throws Exception {
        // the fixture's data ledger 5 still lives on a (retention has not removed it yet)
        VerifyReport.Removal pinned = verify().removal();
        assertFalse(pinned.safe());
        assertEquals("b", pinned.activeCluster());
        assertEquals("zk+hierarchical://zk-b:2181/ledgers", pinned.metadataServiceUri());
        assertEquals(1, pinned.because().size(), String.valueOf(pinned.because()));
        assertTrue(pinned.because().get(0).startsWith("1 referenced ledger(s) are not on b: ledger 5 on a (data, "
                + "t/ns/persistent/x)"), pinned.because().get(0));
        // retention removed it: every reference is on b, the relocated schema ledger 7 under its own id
        refs.removeIf(r -> r.ledgerId() == 5);
        clusters.get("a").remove(5L);
        VerifyReport.Removal free = verify().removal();
        assertTrue(free.safe(), String.valueOf(free.because()));
        assertTrue(free.because().get(0).contains("all 2 referenced ledgers are on b")
                && free.because().get(0).contains("bookkeeperMetadataServiceUri=zk+hierarchical://zk-b:2181/ledgers"),
                free.because().get(0));
    }

    /**
     * A compaction cursor's stored property still names a compacted ledger a newer compaction replaced and Pulsar
     * deleted (the cursor's metadata is rewritten only when its ledger rolls over): that name pins no cluster, as it
     * is no missing ledger for verify. (Found by the explorer: after a switch back while the old compacted ledger's
     * home was unreachable, and a compaction at the end, the verdict stayed "not safe" for the deleted ledger.)
     */
    @Test
    void aCompactedLedgerANewerCompactionReplacedPinsNoCluster() throws Exception {
        refs.removeIf(r -> r.ledgerId() == 5);
        clusters.get("a").remove(5L);
        refs.add(new LedgerReference(9, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction#CompactedTopicLedger"));
        long newer = B + 3; // on b, the active cluster
        ledger("b", newer, true, 10, null);
        compactedInUse.put("t/ns/persistent/c", newer); // 9 is on no cluster: a newer compaction replaced it
        // the newer one is no reference yet (its compaction finished after the inventory was read): nothing says
        // where it is, so the old name still pins a
        VerifyReport r = verify();
        assertEquals("", checks(r));
        assertFalse(r.removal().safe(), String.valueOf(r.removal().because()));
        // the inventory names the one in use too, and it is on the active cluster: the old name pins nothing
        refs.add(new LedgerReference(newer, LedgerKind.COMPACTION, "t/ns/persistent/c/__compaction#in-use"));
        r = verify();
        assertEquals("", checks(r));
        assertTrue(r.removal().safe(), String.valueOf(r.removal().because()));
        // while the topic still uses it, it is missing, and nothing may be removed
        compactedInUse.put("t/ns/persistent/c", 9L);
        VerifyReport still = verify();
        assertEquals("REFERENCED_MISSING:9@a", checks(still));
        assertFalse(still.removal().safe());
    }

    @Test
    void thePluginCannotBeRemovedWhileAMigrationRunsOrSomethingIsWrong() throws Exception {
        refs.removeIf(r -> r.ledgerId() == 5);
        clusters.get("a").remove(5L);
        registry.write(registry.paths().orchestrator(2), MigrationState.start(2, "b", "x", 0).moveTo(Phase.BUILD, 1),
                -1).get();
        VerifyReport.Removal running = verify().removal();
        assertFalse(running.safe());
        assertEquals(List.of("the migration of switch epoch 2 is in phase BUILD"), running.because());
        store.delete(registry.paths().orchestrator(2), Optional.empty()).get();
        clusters.get("b").remove(7L); // the relocated schema ledger is gone from its home
        VerifyReport wrong = verify();
        assertFalse(wrong.removal().safe());
        assertTrue(wrong.removal().because().stream().anyMatch(b -> b.startsWith("1 violation(s)")),
                String.valueOf(wrong.removal().because()));
    }
}
