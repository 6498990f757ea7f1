package io.bcswitch.switching;

import io.bcswitch.registry.ClusterNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import org.junit.jupiter.api.Test;

class ClusterNamesTest {

    @Test
    void acceptableNames() {
        for (String ok : new String[] {"a", "east", "East-1", "bk_west.2", "...", "-", "x".repeat(64),
                "precheck2", "Status"}) {
            assertNull(ClusterNames.problem(ok), ok);
        }
    }

    @Test
    void problems() {
        assertEquals("cluster name is empty", ClusterNames.problem(null));
        assertEquals("cluster name is empty", ClusterNames.problem(""));
        for (String bad : new String[] {".", "..", "a b", "a/b", "x".repeat(65), "é", "tab\t"}) {
            String p = ClusterNames.problem(bad);
            assertNotNull(p, bad);
            assertTrue(p.contains("must match"), p);
        }
        for (String reserved : ClusterNames.RESERVED) {
            String p = ClusterNames.problem(reserved);
            assertNotNull(p, reserved);
            assertTrue(p.contains("reserved") && p.contains(reserved), p);
        }
        assertTrue(ClusterNames.RESERVED.containsAll(java.util.Set.of("precheck", "switch", "status")));
    }

    @Test
    void problemMessagesAreSafeToPrint() {
        String p = ClusterNames.problem("bad\u0000name\u00e9\n");
        assertTrue(p.contains("bad\\u0000name\\u00e9\\u000a"), p);
        String longName = "y".repeat(200);
        String q = ClusterNames.problem(longName);
        assertTrue(q.contains("y".repeat(80) + "..."), q);
        assertFalse(q.contains("y".repeat(81)), q);
        String exactly80 = ClusterNames.problem("z".repeat(80));
        assertTrue(exactly80.contains("'" + "z".repeat(80) + "'"), "80 characters are shown whole: " + exactly80);
        // printable ASCII is shown as it is, from the space to the tilde; DEL and controls are escaped
        String edges = ClusterNames.problem("a b~\u007f\u001f");
        assertTrue(edges.contains("'a b~\\u007f\\u001f'"), edges);
    }

    @Test
    void derive() {
        assertEquals("zk1-2181-ledgers", ClusterNames.derive("zk+hierarchical://zk1:2181/ledgers"));
        assertEquals("zk1-2181-zk2-2181-ledgers", ClusterNames.derive("zk://zk1:2181;zk2:2181/ledgers"));
        assertEquals("localhost-2181-ledgers", ClusterNames.derive("metadata-store:zk:localhost:2181/ledgers"));
        assertEquals("zk1-2181-pulsar-ledgers", ClusterNames.derive("metadata-store:zk:zk1:2181/pulsar/ledgers"));
        assertEquals("bookies", ClusterNames.derive(""));
        assertEquals("bookies", ClusterNames.derive("zk://"));
        assertEquals("bookies", ClusterNames.derive("zk://./"));
        assertEquals("bookies", ClusterNames.derive(":::"));
        assertEquals("status-cluster", ClusterNames.derive("metadata-store:zk:status"));
        assertEquals("switch-cluster", ClusterNames.derive("zk://switch/"));
        String longUri = "zk://" + "h".repeat(100) + ":2181/ledgers";
        String d = ClusterNames.derive(longUri);
        assertEquals(64, d.length());
        assertTrue(d.endsWith("-2181-ledgers"), d);
    }

    @Test
    void derivedNamesAreAlwaysAcceptable() {
        String[] uris = {"zk+hierarchical://zk1:2181/ledgers", "metadata-store:zk:localhost:2181/ledgers",
                "zk://a:1,b:2,c:3/x/y/z", "", "zk://", "::://", "metadata-store:zk:precheck",
                "zk://" + "q".repeat(300) + ":1/ledgers", "zk://[::1]:2181/ledgers", "zk://h:1/é/ü",
                "zk://h:1/..", "zk://h:1/.", "zk://-/-"};
        for (String uri : uris) {
            String name = ClusterNames.derive(uri);
            assertNull(ClusterNames.problem(name), uri + " -> " + name);
        }
    }

    // ---- SwitchService.proposedHighOrderBits ----

    private static final Versioned<SwitchDirective> NO_DIRECTIVE = Versioned.absent();

    private static ClusterFacts facts(long maxHob, long maxLedgerId) {
        return new ClusterFacts("org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory", true, maxHob,
                maxLedgerId, 3, 0);
    }

    private static Versioned<SwitchDirective> directive(long firstLedgerId) {
        return new Versioned<>(new SwitchDirective(1, "b", "a", 1, 0L, firstLedgerId), 0L);
    }

    @Test
    void proposedHighOrderBitsStartsAtOne() {
        assertEquals(1L, SwitchService.proposedHighOrderBits(null, NO_DIRECTIVE, null, null, java.util.List.of()));
        assertEquals(1L, SwitchService.proposedHighOrderBits(RangeTable.bootstrap("a", 0), NO_DIRECTIVE,
                facts(0, -1), facts(0, -1), java.util.List.of()));
        // short ids (below 2^31) do not reach the first long range
        assertEquals(1L, SwitchService.proposedHighOrderBits(null, NO_DIRECTIVE, facts(0, Integer.MAX_VALUE - 1L),
                null, java.util.List.of()));
    }

    @Test
    void proposedHighOrderBitsIsAboveEverySource() {
        RangeTable ranges = RangeTable.bootstrap("a", 0).with(new IdRange("b", 3L << 32, 1, 0));
        assertEquals(4L, SwitchService.proposedHighOrderBits(ranges, NO_DIRECTIVE, null, null, java.util.List.of()));
        assertEquals(6L, SwitchService.proposedHighOrderBits(ranges, directive(5L << 32), null, null, java.util.List.of()));
        assertEquals(8L, SwitchService.proposedHighOrderBits(ranges, directive(5L << 32), facts(7, -1), null, java.util.List.of()));
        assertEquals(10L, SwitchService.proposedHighOrderBits(ranges, directive(5L << 32), facts(7, -1),
                facts(9, -1), java.util.List.of()));
        // an existing ledger id beyond every recorded high-order value
        assertEquals(12L, SwitchService.proposedHighOrderBits(ranges, directive(5L << 32), facts(7, -1),
                facts(9, (11L << 32) | 5), java.util.List.of()));
        assertEquals(12L, SwitchService.proposedHighOrderBits(null, NO_DIRECTIVE, facts(0, (11L << 32) | 5),
                facts(0, -1), java.util.List.of()));
        // the largest of them wins regardless of where it comes from
        assertEquals(21L, SwitchService.proposedHighOrderBits(ranges, directive(20L << 32), facts(2, -1),
                facts(1, 1L << 32), java.util.List.of()));
        // the result is strictly above every existing id's high-order bits
        long maxId = (6L << 32) | 0xFFFFFFFFL;
        long hob = SwitchService.proposedHighOrderBits(ranges, NO_DIRECTIVE, facts(0, maxId), null, java.util.List.of());
        assertTrue((hob << 32) > maxId);
    }
}
