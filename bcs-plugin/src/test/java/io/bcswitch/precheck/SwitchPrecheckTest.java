package io.bcswitch.precheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdWatermark;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The precheck's rules, each on its own: what refuses a switch (problems), what an operator is only told
 * (warnings), and what a precheck or a broker's start-up remembers of the clusters it read. Bookie clusters'
 * metadata are in-memory stores; a cluster without one cannot be read.
 */
class SwitchPrecheckTest {
    private static final String HIERARCHICAL = InMemoryBookieClusters.HIERARCHICAL;
    private static final String FLAT = InMemoryBookieClusters.FLAT;
    private static final int REQUIRED = 2;

    private final InMemoryMetadataPort registryPort = new InMemoryMetadataPort();
    private final RegistryStore registry = new RegistryStore(registryPort, new RegistryPaths("/bcs"));
    private final InMemoryBookieClusters bookies = new InMemoryBookieClusters();
    private SwitchPrecheck precheck;

    @BeforeEach
    void setUp() {
        precheck = new SwitchPrecheck(registry, bookies.access(), REQUIRED, Clock.fixed(Instant.ofEpochMilli(5000),
                ZoneOffset.UTC), ClusterProbe.NONE);
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "a", 1), -1).join();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("a", 1), -1).join();
    }

    @AfterEach
    void tearDown() {
        bookies.close();
        registryPort.close();
    }

    private static String uri(String name) {
        return InMemoryBookieClusters.uri(name);
    }

    private BookieClusterRecord register(String name, ClusterStatus status, String instanceId) {
        BookieClusterRecord r = new BookieClusterRecord(1, name, uri(name), status, 1L, instanceId);
        registry.write(registry.paths().cluster(name), r, -1).join();
        return r;
    }

    private PrecheckReport check(BookieClusterRecord target, boolean allowUnknownSourceIds) throws Exception {
        return precheck.check(target, registry.readDirective().get(), allowUnknownSourceIds)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    private Map<String, IdWatermark> marks() throws Exception {
        return registry.listWatermarks().get();
    }

    @Test
    void aHealthyTargetPassesWithoutWarningsAndWhatWasReadIsRememberedOnlyWhenAsked() throws Exception {
        register("a", ClusterStatus.ACTIVE, "id-a");
        BookieClusterRecord b = register("b", ClusterStatus.STANDBY, null);
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 4);
        bookies.add("b", HIERARCHICAL, "id-b", 3, 0, 0);

        PrecheckReport r = check(b, false);
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(List.of(), r.warnings());
        assertEquals("a", r.source());
        assertTrue(r.sourceReachable());
        assertEquals(5, r.proposedHighOrderBits(), "above the source's high-order bits");
        assertEquals(5L << 32, r.proposedFirstLedgerId());
        assertEquals(Map.of(), marks(), "a check alone writes nothing");

        precheck.remember(r, "precheck").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(4, marks().get("a").maxHighOrderBits());
        assertEquals("precheck", marks().get("a").source());
        assertEquals(5000, marks().get("a").observedAt());
        assertEquals(0, marks().get("b").maxHighOrderBits());
        assertEquals("id-b", registry.getCluster("b").get().orElseThrow().instanceId(), "the instance id filled in");
        assertEquals("id-a", registry.getCluster("a").get().orElseThrow().instanceId());
        long aVersion = registryPort.get(registry.paths().cluster("a")).get().orElseThrow().version();
        precheck.remember(r, "precheck").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(aVersion, registryPort.get(registry.paths().cluster("a")).get().orElseThrow().version(),
                "a known instance id is not rewritten");
    }

    @Test
    void whatDoesNotBlockASwitchIsToldAsWarnings() throws Exception {
        register("a", ClusterStatus.ACTIVE, null);
        BookieClusterRecord b = register("b", ClusterStatus.STANDBY, null);
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 1);
        InMemoryMetadataPort bp = bookies.add("b", HIERARCHICAL, "id-b", REQUIRED, 1, 0);
        InMemoryBookieClusters.put(bp, "/ledgers/00/0000/L0042", "metadata");

        PrecheckReport r = check(b, false);
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(List.of(
                "'b' has exactly 2 writable bookies, the ensemble size: one bookie failure will stop new ledgers from "
                        + "being created",
                "'b' has 1 read-only bookie(s)",
                "'b' already holds ledgers (largest id 42); the new range starts above them"), r.warnings());
    }

    /**
     * What was recorded of a third registered cluster keeps the new range above its ids (a margin: it may be
     * switched to again), while the source's and target's own records count only as what is read of them now; and a
     * target that holds only ledger 0 already holds a ledger.
     */
    @Test
    void recordedIdsOfAThirdRegisteredClusterAreAMarginAndLedgerZeroIsALedger() throws Exception {
        register("a", ClusterStatus.ACTIVE, "id-a");
        BookieClusterRecord b = register("b", ClusterStatus.STANDBY, "id-b");
        register("c", ClusterStatus.STANDBY, "id-c");
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 4);
        InMemoryMetadataPort bp = bookies.add("b", HIERARCHICAL, "id-b", 3, 0, 0);
        InMemoryBookieClusters.put(bp, "/ledgers/00/0000/L0000", "metadata");
        bookies.add("c", HIERARCHICAL, "id-c", 3, 0, 0);
        registry.raiseWatermark("c", 9, -1, 1000, "precheck").get();
        registry.raiseWatermark("b", 30, -1, 1000, "precheck").get();

        PrecheckReport r = check(b, false);
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(10, r.proposedHighOrderBits(), "above what was recorded of c, not of b's old record");
        assertEquals(List.of("'b' already holds ledgers (largest id 0); the new range starts above them"),
                r.warnings());
    }

    @Test
    void aTargetThatCannotTakeTheNewRangeIsRefusedWithEveryReason() throws Exception {
        register("a", ClusterStatus.ACTIVE, null);
        register("c", ClusterStatus.STANDBY, "id-c");
        BookieClusterRecord b = register("b", ClusterStatus.STANDBY, "id-b");
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 1);
        bookies.add("b", FLAT, "id-c", 1, 0, 0);

        PrecheckReport r = check(b, false);
        assertFalse(r.ok());
        assertEquals(List.of(
                "'b' uses org.apache.bookkeeper.meta.FlatLedgerManagerFactory, which cannot issue 63-bit ledger ids; "
                        + "use the hierarchical ledger manager",
                "'b' has 1 writable bookies, fewer than the ensemble size 2",
                "'b' was registered as bookie cluster instance id-b, but its metadataServiceUri now leads to "
                        + "instance id-c",
                "'b' is the same bookie cluster (instance id-c) as registered cluster 'c'"), r.problems());
    }

    @Test
    void theActiveADeprecatedAndACollidingTargetAreRefused() throws Exception {
        BookieClusterRecord a = register("a", ClusterStatus.ACTIVE, null);
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 1);
        assertEquals(List.of("bookie cluster 'a' is already active"), check(a, false).problems());

        BookieClusterRecord old = register("old", ClusterStatus.DEPRECATED, null);
        bookies.add("old", HIERARCHICAL, "id-old", 3, 0, 0);
        assertEquals(List.of("bookie cluster 'old' is DEPRECATED"), check(old, false).problems());

        // a second name for a's metadata root
        BookieClusterRecord twin = new BookieClusterRecord(1, "twin", uri("a"), ClusterStatus.STANDBY, 1L);
        registry.write(registry.paths().cluster("twin"), twin, -1).join();
        List<String> problems = check(twin, false).problems();
        assertTrue(problems.contains("metadata root of 'twin' collides with registered cluster 'a'"), problems
                .toString());
    }

    @Test
    void anUnreadableSourceNeedsAWatermarkOrTheOperatorsExplicitConsent() throws Exception {
        register("a", ClusterStatus.ACTIVE, null);
        BookieClusterRecord b = register("b", ClusterStatus.STANDBY, null);
        bookies.add("b", HIERARCHICAL, "id-b", 3, 0, 0);

        PrecheckReport r = check(b, false);
        assertFalse(r.ok());
        assertFalse(r.sourceReachable());
        assertTrue(r.sourceError().contains("connection refused by zk:a:2181"), r.sourceError());
        assertTrue(r.problems().get(0).startsWith("'a' cannot be read and nothing records which ledger ids it "
                + "issued"), r.problems().toString());

        r = check(b, true);
        assertTrue(r.ok(), r.problems().toString());
        assertTrue(r.warnings().stream().anyMatch(w -> w.startsWith("allowUnknownSourceIds: 'a' cannot be read")),
                r.warnings().toString());

        registry.raiseWatermark("a", 6, -1, 1000, "broker start").get();
        r = check(b, false);
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(8, r.proposedHighOrderBits(), "two above the last bits seen: a may have moved on to the next");
        assertTrue(r.warnings().stream().anyMatch(w -> w.startsWith("ids 'a' issued are known up to high-order "
                + "bits 6 (seen broker start at")), r.warnings().toString());
        assertTrue(r.warnings().get(0).startsWith("source 'a' cannot be read (cannot open metadata service zk:a:2181: "
                + "connection refused by zk:a:2181)"), r.warnings()
                .toString());
    }

    @Test
    void aTargetWhoseMetadataCannotBeReadIsRefused() throws Exception {
        register("a", ClusterStatus.ACTIVE, null);
        BookieClusterRecord b = register("b", ClusterStatus.STANDBY, null);
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 1);
        PrecheckReport r = check(b, false);
        assertEquals(1, r.problems().size(), r.problems().toString());
        assertTrue(r.problems().get(0).startsWith("metadata service of 'b' cannot be read: "), r.problems().get(0));
        assertTrue(r.problems().get(0).contains("connection refused by zk:b:2181"), r.problems().get(0));
    }

    @Test
    void aBrokerStartingUpRecordsWhatItsClustersMetadataSays() throws Exception {
        register("a", ClusterStatus.ACTIVE, null);
        register("b", ClusterStatus.STANDBY, null);
        bookies.add("a", HIERARCHICAL, "id-a", 3, 0, 3);

        precheck.observe("a", "broker start").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(3, marks().get("a").maxHighOrderBits());
        assertEquals("broker start", marks().get("a").source());
        assertEquals("id-a", registry.getCluster("a").get().orElseThrow().instanceId());

        // an unregistered name and an unreadable cluster: nothing recorded, no failure
        precheck.observe("nope", "broker start").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        precheck.observe("b", "broker start").get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of("a"), List.copyOf(marks().keySet()));
        assertEquals(null, registry.getCluster("b").get().orElseThrow().instanceId());
    }

    @Test
    void theOperatorReadsTheMessageThatSaysWhatWentWrong() {
        assertEquals("disk full", SwitchPrecheck.rootMessage(new CompletionException(new RuntimeException(null,
                new IllegalStateException("disk full")))));
        assertEquals("no answer within the probe timeout", SwitchPrecheck.rootMessage(new ExecutionException(
                new TimeoutException())));
        assertEquals("no answer within the probe timeout", SwitchPrecheck.rootMessage(new RuntimeException(null,
                new TimeoutException("after 10 s"))));
        assertEquals("the session expired", SwitchPrecheck.rootMessage(new TimeoutException("after 10 s")
                .initCause(new IllegalStateException("the session expired"))));
        assertEquals("IllegalStateException", SwitchPrecheck.rootMessage(new IllegalStateException()));
        assertEquals("outer", SwitchPrecheck.rootMessage(new RuntimeException("outer",
                new IllegalStateException("inner"))));
    }

    @Test
    void urisThatCannotBeParsedAreTheSameClusterOnlyWhenEqual() {
        ClusterLocation a = ClusterLocation.parse(uri("a"));
        assertTrue(SwitchPrecheck.sameCluster(new BookieClusterRecord(1, "x", uri("a"), ClusterStatus.STANDBY, 1L),
                a));
        assertFalse(SwitchPrecheck.sameCluster(new BookieClusterRecord(1, "x", uri("b"), ClusterStatus.STANDBY, 1L),
                a));
        assertFalse(SwitchPrecheck.sameCluster(new BookieClusterRecord(1, "x", "not a uri", ClusterStatus.STANDBY,
                1L), a));
        ClusterLocation odd = new ClusterLocation("not a uri", "zk:x", "/ledgers", "x", "/ledgers");
        assertTrue(SwitchPrecheck.sameCluster(new BookieClusterRecord(1, "x", "not a uri", ClusterStatus.STANDBY,
                1L), odd));
    }

    @Test
    void theProposedRangeStartsAboveEveryIdKnownAnywhere() {
        Versioned<io.bcswitch.registry.SwitchDirective> none = Versioned.absent();
        assertEquals(1, SwitchPrecheck.proposedHighOrderBits(null, none, null, null, List.of()));
        ClusterFacts src = new ClusterFacts("h", true, 2, (7L << 32) | 1, 3, 0);
        assertEquals(8, SwitchPrecheck.proposedHighOrderBits(null, none, src, null, List.of()),
                "above the largest ledger id even when the generator says less");
        ClusterFacts tgt = new ClusterFacts("h", true, 9, -1, 3, 0);
        assertEquals(10, SwitchPrecheck.proposedHighOrderBits(null, none, src, tgt, List.of()));
        assertEquals(12, SwitchPrecheck.proposedHighOrderBits(null, none, src, tgt,
                List.of(new IdWatermark(1, "z", 11, -1, 1, "x"))));
    }
}
