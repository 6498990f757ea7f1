package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.precheck.InMemoryBookieClusters;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.IdSpace;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ledger ids at the end of the 63-bit space: what bookie clusters hold there (a probe ledger left behind, another
 * application's ledger, an id generator far up) and what was recorded of them earlier never breaks the arithmetic,
 * never answers with a server error, and never blocks switches between other clusters. Clusters a (active), b, c,
 * each with its bookie metadata in memory.
 */
class IdSpaceEdgesTest {
    /** The last id a precheck probe may be left behind at. */
    private static final long TOP = Long.MAX_VALUE - 5;
    /** An id of the last high-order bits a range could use: a cluster holding it leaves no room above it. */
    private static final long NO_ROOM = ((long) IdSpace.MAX_RANGE_BITS << 32) | 7;

    private final InMemoryMetadataPort port = new InMemoryMetadataPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
    private final InMemoryBookieClusters bookies = new InMemoryBookieClusters();
    private final Map<String, InMemoryMetadataPort> clusterStores = new TreeMap<>();
    private SwitchService service;

    @BeforeEach
    void setUp() {
        clusterStores.putAll(bookies.registerAll(registry, "a", "b", "c"));
        service = new SwitchService(registry, bookies.access(), 2, Clock.systemUTC(),
                () -> CompletableFuture.completedFuture(List.of()), ClusterProbe.NONE, 0, e -> { });
    }

    @AfterEach
    void tearDown() {
        bookies.close();
        port.close();
    }

    /** Puts ledger {@code id}'s metadata node where BookKeeper's hierarchical layouts keep it. */
    private void ledger(String cluster, long id) {
        String digits = String.format("%019d", id);
        String path = "/ledgers/" + digits.substring(0, 3) + "/" + digits.substring(3, 7) + "/"
                + digits.substring(7, 11) + "/" + digits.substring(11, 15) + "/L" + digits.substring(15);
        InMemoryBookieClusters.put(clusterStores.get(cluster), path, "metadata");
    }

    private PrecheckReport precheck(String target) throws Exception {
        return service.precheck(target).get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
    }

    private SwitchResult switchTo(String target) throws Exception {
        return service.switchTo(target).get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
    }

    private RegistryException refusal(String target) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> service.switchTo(target).get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RegistryException, "a refusal, not a server error: " + e.getCause());
        return (RegistryException) e.getCause();
    }

    /** Every node of the registry, with its version and value. */
    private Map<String, String> snapshot() {
        Map<String, String> out = new TreeMap<>();
        List<String> todo = new ArrayList<>(List.of("/bcs"));
        while (!todo.isEmpty()) {
            String p = todo.remove(todo.size() - 1);
            out.put(p, port.get(p).join().map(n -> n.version() + ":" + new String(n.value(), StandardCharsets.UTF_8))
                    .orElse("<no node>"));
            port.children(p).join().forEach(c -> todo.add(p + "/" + c));
        }
        return out;
    }

    @Test
    void aProbeLedgerLeftAtTheTopOfTheIdSpaceIsNotCountedAndIsNamed() throws Exception {
        ledger("c", TOP);
        PrecheckReport r = precheck("c");
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(2, r.proposedHighOrderBits(), "above a's generator only: the probe band is nobody's range");
        assertEquals(2L << 32, r.proposedFirstLedgerId());
        assertTrue(r.warnings().stream().anyMatch(w -> w.contains("'c' holds ledger " + TOP)
                && w.contains("reserved for precheck probes")), r.warnings().toString());

        SwitchResult s = switchTo("c");
        assertEquals(2L << 32, s.directive().firstLedgerId());
        assertEquals(3L << 32, switchTo("b").directive().firstLedgerId(), "and the next switch goes on from there");
    }

    @Test
    void aTargetWhoseIdsLeaveNoRoomIsRefusedByNameAndBlocksNoOtherSwitch() throws Exception {
        ledger("c", NO_ROOM);
        PrecheckReport r = precheck("c");
        assertFalse(r.ok());
        assertEquals(List.of("'c' holds ledger " + NO_ROOM + " (high-order bits " + IdSpace.MAX_RANGE_BITS + "): no "
                + "ledger-id range is left above it for a switch to 'c'"), r.problems());
        assertTrue(r.proposedFirstLedgerId() >= 0, "never an overflowed id: " + r.proposedFirstLedgerId());

        Map<String, String> before = snapshot();
        RegistryException refused = refusal("c");
        assertEquals(RegistryException.Kind.CONFLICT, refused.kind());
        assertTrue(refused.getMessage().contains("no ledger-id range is left above it"), refused.getMessage());
        assertEquals(before, snapshot(), "a refused switch changes nothing");

        // what the refused target holds counts for no other switch, however often it was prechecked
        assertEquals(2L << 32, switchTo("b").directive().firstLedgerId());
        assertEquals(3L << 32, switchTo("a").directive().firstLedgerId());
    }

    @Test
    void whatWasRecordedOfAClusterThatLeavesNoRoomBlocksNoSwitch() throws Exception {
        // recorded by an earlier version of the plugin: a probe id as c's largest ledger, and a cluster since
        // unregistered whose generator was seen at the top
        registry.raiseWatermark("c", 0, TOP, 1, "precheck").join();
        registry.raiseWatermark("gone", IdSpace.MAX_RANGE_BITS, NO_ROOM, 1, "precheck").join();
        assertEquals(2L << 32, switchTo("c").directive().firstLedgerId());
        assertEquals(3L << 32, switchTo("b").directive().firstLedgerId());
    }

    @Test
    void theActiveClusterHoldingAForeignLedgerNearTheTopCanStillBeSwitchedAway() throws Exception {
        // another application wrote into the active cluster with an id of its choice: a disaster switch away from
        // it must stay possible
        ledger("a", NO_ROOM);
        PrecheckReport r = precheck("b");
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(2, r.proposedHighOrderBits());
        assertTrue(r.warnings().stream().anyMatch(w -> w.contains("'a' holds ledger " + NO_ROOM)
                && w.contains("not counted")), r.warnings().toString());
        assertEquals(2L << 32, switchTo("b").directive().firstLedgerId());
    }

    @Test
    void aGeneratorAtTheTopLeavesNoRoomAndSaysWhose() throws Exception {
        InMemoryBookieClusters.put(clusterStores.get("c"), "/ledgers/idgen-long/HOB-"
                + String.format("%010d", IdSpace.MAX_RANGE_BITS), "");
        PrecheckReport r = precheck("c");
        assertFalse(r.ok());
        assertEquals(List.of("the id generator of 'c' is at high-order bits " + IdSpace.MAX_RANGE_BITS + ": no "
                + "ledger-id range is left above it for a switch to 'c'"), r.problems());
        assertEquals(RegistryException.Kind.CONFLICT, refusal("c").kind());
        assertEquals(2L << 32, switchTo("b").directive().firstLedgerId());
    }

    @Test
    void theLastRangeThereIsCanBeHandedOutAndThenNoMore() throws Exception {
        ledger("b", ((long) (IdSpace.MAX_RANGE_BITS - 1) << 32) | 3);
        SwitchResult last = switchTo("b");
        assertEquals((long) IdSpace.MAX_RANGE_BITS << 32, last.directive().firstLedgerId());
        // every id below the probe band is now somebody's: no switch can be given a range
        RegistryException r = refusal("c");
        assertEquals(RegistryException.Kind.CONFLICT, r.kind());
        assertTrue(r.getMessage().contains("no ledger-id range is left"), r.getMessage());
    }

    @Test
    void idArithmeticRefusesWhatDoesNotFit() {
        assertEquals((long) IdSpace.MAX_RANGE_BITS << 32, IdSpace.firstLedgerId(IdSpace.MAX_RANGE_BITS));
        assertThrows(IllegalArgumentException.class, () -> IdSpace.firstLedgerId(IdSpace.MAX_RANGE_BITS + 1L));
        assertThrows(IllegalArgumentException.class, () -> IdSpace.firstLedgerId(-1));
        assertTrue(IdSpace.isProbeId(Long.MAX_VALUE));
        assertTrue(IdSpace.isProbeId(IdSpace.PROBE_FIRST_ID));
        assertFalse(IdSpace.isProbeId(IdSpace.PROBE_FIRST_ID - 1));
        assertEquals(-1, MetadataPort.ABSENT);
    }
}
