package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.SwitchDirective;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a drain report of a cluster lists, from the registry and the references: only ledgers whose home is that
 * cluster, one row per ledger, the bookie cluster asked only about ledgers the references say nothing of, and the
 * handles brokers hold open there.
 */
class DrainReportsTest {
    private static final long B_FIRST = 1L << 32;

    private RegistryBed bed;
    private volatile List<LedgerReference> references = List.of();
    private final AtomicInteger factsAsked = new AtomicInteger();
    private DrainReports drain;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        FakeClusters.Delegating counting = new FakeClusters.Delegating(bed.clusters) {
            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                factsAsked.incrementAndGet();
                return super.facts(id, cluster);
            }
        };
        drain = new DrainReports(bed.registry, () -> CompletableFuture.completedFuture(references), counting,
                ml -> CompletableFuture.completedFuture(new RetentionLookup.Retention(0, "test")));
        for (String c : List.of("a", "b")) {
            bed.registry.write(bed.registry.paths().cluster(c), new BookieClusterRecord(1, c, "zk:" + c,
                    c.equals("a") ? ClusterStatus.STANDBY : ClusterStatus.ACTIVE, 5L), -1).get();
        }
        bed.registry.update(bed.registry.paths().ranges(), RangeTable.class, cur -> Optional.of(
                RangeTable.bootstrap("a", 0).with(new IdRange("b", B_FIRST, 1, 0)))).get();
        bed.registry.write(bed.registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 1, B_FIRST), -1)
                .get();
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    @Test
    void aClustersReportListsTheLedgersHomeThereOnceEachAndTheHandlesOpenThere() throws Exception {
        bed.clusters.put("a", 2, "open data", "managed-ledger");
        bed.clusters.put("a", 4, "schema", "schema");
        bed.clusters.put("b", 3, "moved", "schema");
        bed.registry.updateRelocations(List.of(3L), (id, cur) -> Optional.of(
                new Relocation(Relocation.FORMAT_VERSION, 3, "b", "a", "SCHEMA", 1, 0))).get();
        references = List.of(
                new LedgerReference(1, LedgerKind.DATA, "t/ns/persistent/x", 100L, 5L), // closed: size known
                new LedgerReference(1, LedgerKind.CURSOR, "t/ns/persistent/x"),
                new LedgerReference(2, LedgerKind.DATA, "t/ns/persistent/x"), // open: asked
                new LedgerReference(3, LedgerKind.SCHEMA, "t/ns/x"), // home on b now
                new LedgerReference(4, LedgerKind.SCHEMA, "t/ns/x"),
                new LedgerReference(B_FIRST + 1, LedgerKind.DATA, "t/ns/persistent/y", 10L, 5L));
        bed.broker("broker-1", 1, "b", 0, Map.of("a", List.of(2L)));

        DrainReport a = drain.report("a").get();
        assertEquals("a", a.cluster());
        assertFalse(a.active());
        assertEquals("STANDBY", a.status());
        assertFalse(a.empty());
        assertEquals(3, a.ledgers(), String.valueOf(a));
        assertEquals(List.of(1L, 2L), a.dataLedgers().stream().map(DrainReport.DataLedger::ledgerId).sorted()
                .toList(), String.valueOf(a));
        assertEquals(2, factsAsked.get(), "the closed data ledger's size comes from its managed ledger");
        assertEquals("0 min (test)", a.dataLedgers().stream().filter(d -> d.ledgerId() == 1).findFirst()
                .orElseThrow().retention(), "a data ledger's retention is its topic's");
        assertEquals(Map.of("broker-1", 1), a.openHandles());

        DrainReport b = drain.report("b").get();
        assertTrue(b.active());
        assertEquals(2, b.ledgers(), String.valueOf(b));
        assertEquals(Map.of(), b.openHandles());
        assertEquals(a, drain.latest().get("a").report(), "the last report of each cluster is kept for metrics");
        assertEquals(b, drain.latest().get("b").report());
    }

    @Test
    void aClusterThatIsNotRegisteredOrNotANameIsRefused() throws Exception {
        ExecutionException unknown = assertThrows(ExecutionException.class, () -> drain.report("zz").get());
        assertTrue(unknown.getCause().getMessage().contains("'zz' is not registered"), unknown.getMessage());
        ExecutionException invalid = assertThrows(ExecutionException.class, () -> drain.report("no/such").get());
        assertTrue(invalid.getCause().getMessage().contains("must match"), invalid.getMessage());
        assertEquals(Map.of(), drain.latest());
    }
}
