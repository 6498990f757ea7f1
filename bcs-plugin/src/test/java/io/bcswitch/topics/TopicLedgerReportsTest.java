package io.bcswitch.topics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.routing.Ownership;
import io.bcswitch.topics.TopicLedgerReports.LedgerReport;
import io.bcswitch.topics.TopicLedgerReports.TopicReport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TopicLedgerReportsTest {
    private static final long B_FIRST = 1L << 32;
    private static final String KEY = TopicLedgers.BOOKIE_CLUSTER_PROPERTY;

    private static Ownership aOnly() {
        return new Ownership(RangeTable.bootstrap("cluster-a", 0), "cluster-a", 0);
    }

    private static Ownership aThenB() {
        return new Ownership(aOnly().ranges().with(new IdRange("cluster-b", B_FIRST, 1, 0)), "cluster-b", 1);
    }

    @Test
    void eachLedgerGetsTheRangeTableOwnerAndItsProperty() {
        List<TopicLedgers.Ledger> ledgers = List.of(
                new TopicLedgers.Ledger(3, 10L, 1000L, Map.of(KEY, "cluster-a", "other", "x")),
                new TopicLedgers.Ledger(7, 5L, 500L, Map.of()),
                new TopicLedgers.Ledger(B_FIRST + 1, null, null, Map.of(KEY, "cluster-b")));
        TopicReport r = TopicLedgerReports.build("persistent://t/ns/x", ledgers, aThenB());
        assertEquals("persistent://t/ns/x", r.topic());
        assertEquals(List.of(
                new LedgerReport(3, "cluster-a", 1000L, 10L, "cluster-a"),
                new LedgerReport(7, "cluster-a", 500L, 5L, null),
                new LedgerReport(B_FIRST + 1, "cluster-b", null, null, "cluster-b")), r.ledgers());
    }

    @Test
    void idOutsideEveryRangeHasNoOwner() {
        Ownership none = new Ownership(new RangeTable(RangeTable.FORMAT_VERSION,
                List.of(new IdRange("cluster-b", B_FIRST, 1, 0))), "cluster-b", 1);
        TopicReport r = TopicLedgerReports.build("t", List.of(new TopicLedgers.Ledger(5, 1L, 1L, null)), none);
        assertNull(r.ledgers().get(0).cluster());
        assertNull(r.ledgers().get(0).bookieClusterNameProperty());
    }

    @Test
    void idInTheNewestKnownRangeRefreshesTheViewFirst() throws Exception {
        // this broker still knows only cluster-a's range; the ledger is in a range another broker created
        AtomicInteger refreshes = new AtomicInteger();
        TopicLedgers port = (t, n, l) -> CompletableFuture.completedFuture(List.of(
                new TopicLedgers.Ledger(2, 1L, 1L, Map.of()),
                new TopicLedgers.Ledger(B_FIRST + 4, 0L, 0L, Map.of(KEY, "cluster-b"))));
        TopicLedgerReports reports = new TopicLedgerReports(port, TopicLedgerReportsTest::aOnly, () -> {
            refreshes.incrementAndGet();
            return CompletableFuture.completedFuture(aThenB());
        });
        TopicReport r = reports.report("t", "ns", "x").get();
        assertEquals(1, refreshes.get());
        assertEquals("persistent://t/ns/x", r.topic());
        assertEquals("cluster-a", r.ledgers().get(0).cluster());
        assertEquals("cluster-b", r.ledgers().get(1).cluster());
    }

    @Test
    void failedRefreshFallsBackToTheKnownView() throws Exception {
        TopicLedgers port = (t, n, l) -> CompletableFuture.completedFuture(List.of(
                new TopicLedgers.Ledger(B_FIRST + 4, 0L, 0L, Map.of())));
        TopicLedgerReports reports = new TopicLedgerReports(port, TopicLedgerReportsTest::aThenB,
                () -> CompletableFuture.failedFuture(new IllegalStateException("metadata store down")));
        assertEquals("cluster-b", reports.report("t", "ns", "x").get().ledgers().get(0).cluster());
    }

    @Test
    void olderIdsNeedNoRefresh() throws Exception {
        TopicLedgers port = (t, n, l) -> CompletableFuture.completedFuture(List.of(
                new TopicLedgers.Ledger(9, 1L, 1L, Map.of())));
        TopicLedgerReports reports = new TopicLedgerReports(port, TopicLedgerReportsTest::aThenB,
                () -> {
                    throw new AssertionError("no refresh expected");
                });
        assertEquals("cluster-a", reports.report("t", "ns", "x").get().ledgers().get(0).cluster());
    }

    @Test
    void emptyTopicHasNoLedgers() throws Exception {
        TopicLedgerReports reports = new TopicLedgerReports((t, n, l) -> CompletableFuture.completedFuture(List.of()),
                TopicLedgerReportsTest::aOnly, () -> CompletableFuture.completedFuture(aOnly()));
        assertEquals(List.of(), reports.report("t", "ns", "x").get().ledgers());
    }
}
