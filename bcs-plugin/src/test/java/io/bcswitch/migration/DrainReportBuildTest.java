package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.migration.DrainReports.Row;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the drain report concludes from the ledgers the brokers reference on a cluster: the totals, each data ledger's
 * removal time, and when the cluster can be switched off (only when every ledger there is closed data whose
 * retention is known and finite).
 */
class DrainReportBuildTest {
    private static final long MINUTE = 60_000L;
    private static final RetentionLookup.Retention HOUR = new RetentionLookup.Retention(60, "namespace");

    private static Row closedData(long id, long bytes, long closedAt, RetentionLookup.Retention retention) {
        return new Row(new LedgerReference(id, LedgerKind.DATA, "t/ns/topic-" + id, bytes, closedAt), null, retention);
    }

    private static DrainReport report(boolean active, List<Row> rows) {
        return DrainReports.build("a", "STANDBY", active, rows, Map.of());
    }

    @Test
    void closedDataWithFiniteRetentionGivesTheTimeTheLastOneIsRemoved() {
        DrainReport r = report(false, List.of(
                closedData(9, 100, 1_000, new RetentionLookup.Retention(120, "broker default")),
                closedData(4, 50, 5_000, HOUR),
                closedData(6, 7, 2_000, new RetentionLookup.Retention(0, "namespace"))));
        assertFalse(r.empty());
        assertEquals(3, r.ledgers());
        assertEquals(157, r.bytes());
        assertEquals(0, r.openLedgers());
        assertEquals(List.of(new DrainReport.KindTotal("DATA", 3, 157)), r.byKind());
        assertEquals(List.of(4L, 6L, 9L), r.dataLedgers().stream().map(DrainReport.DataLedger::ledgerId).toList(),
                "by ledger id");
        DrainReport.DataLedger first = r.dataLedgers().get(0);
        assertEquals(5_000 + 60 * MINUTE, first.removableAfter());
        assertEquals("60 min (namespace)", first.retention());
        assertEquals(50, first.bytes());
        assertEquals("t/ns/topic-4", first.managedLedger());
        assertEquals(2_000L, r.dataLedgers().get(1).removableAfter(), "no retention: removable once consumed");
        assertEquals("0 min (namespace)", r.dataLedgers().get(1).retention(), "no retention is not infinite");
        assertEquals(1_000 + 120 * MINUTE, r.switchOffAfter(), "the latest removal of all");
        assertTrue(r.note().startsWith("retention removes the last data ledger by then"), r.note());
    }

    @Test
    void anOpenLedgerOrARetentionThatNeverEndsOrIsUnknownLeavesNoSwitchOffTime() {
        Row open = new Row(new LedgerReference(3, LedgerKind.DATA, "t/ns/open", 10L, null),
                Optional.of(new LedgerCopier.LedgerFacts(false, 10, 0, "managed-ledger")), HOUR);
        DrainReport withOpen = report(false, List.of(closedData(1, 5, 1_000, HOUR), open));
        assertEquals(1, withOpen.openLedgers());
        assertNull(withOpen.switchOffAfter());
        assertNull(withOpen.dataLedgers().get(1).removableAfter());
        assertTrue(withOpen.note().startsWith("some data ledgers have infinite or unknown retention, or are open"),
                withOpen.note());

        DrainReport infinite = report(false, List.of(closedData(1, 5, 1_000,
                new RetentionLookup.Retention(-1, "namespace"))));
        assertNull(infinite.switchOffAfter());
        assertNull(infinite.dataLedgers().get(0).removableAfter());
        assertEquals("infinite (namespace)", infinite.dataLedgers().get(0).retention());

        DrainReport unknown = report(false, List.of(closedData(1, 5, 1_000, null)));
        assertNull(unknown.switchOffAfter());
        assertEquals("unknown", unknown.dataLedgers().get(0).retention());
    }

    @Test
    void metadataOnTheClusterFillsWhatTheReferenceDoesNotSay() {
        // neither size nor close time in the reference: the ledger's own metadata says closed, 42 bytes
        Row fromFacts = new Row(new LedgerReference(8, LedgerKind.DATA, "t/ns/x", null, null),
                Optional.of(new LedgerCopier.LedgerFacts(true, 42, 3, "managed-ledger")), HOUR);
        DrainReport r = report(false, List.of(fromFacts));
        assertEquals(42, r.bytes());
        assertEquals(0, r.openLedgers(), "closed, as its metadata says");
        assertNull(r.switchOffAfter(), "but when it closed is not known: no removal time");
        // a reference that says closed is believed when the cluster was not asked; one that does not is open
        DrainReport notAsked = report(false, List.of(
                new Row(new LedgerReference(8, LedgerKind.DATA, "t/ns/x", null, null), null, HOUR)));
        assertEquals(1, notAsked.openLedgers());
        assertEquals(0, notAsked.bytes());
    }

    @Test
    void ledgersThatAreNotDataKeepTheClusterUntilTheMigrationMovesThem() {
        Row schema = new Row(new LedgerReference(2, LedgerKind.SCHEMA, "t/ns/x", 30L, 500L),
                Optional.of(new LedgerCopier.LedgerFacts(true, 30, 1, "schema")), null);
        DrainReport r = report(false, List.of(closedData(1, 5, 1_000, HOUR), schema));
        assertNull(r.switchOffAfter());
        assertEquals(1, r.dataLedgers().size(), "only data ledgers are listed");
        assertEquals(List.of(new DrainReport.KindTotal("DATA", 1, 5), new DrainReport.KindTotal("SCHEMA", 1, 30)),
                r.byKind());
        assertTrue(r.note().startsWith("cursor, schema or compacted-topic ledgers are still home here"), r.note());
    }

    @Test
    void aPropertyValueThatIsNoLedgerOnTheClusterIsNotCounted() {
        Row notALedger = new Row(new LedgerReference(77, LedgerKind.OTHER, "t/ns/x/property"), Optional.empty(), null);
        Row notAsked = new Row(new LedgerReference(78, LedgerKind.OTHER, "t/ns/x/property"), null, null);
        DrainReport r = report(false, List.of(notALedger, notAsked));
        assertEquals(1, r.ledgers(), "one the cluster did not answer for still counts");
        assertEquals(List.of(new DrainReport.KindTotal("OTHER", 1, 0)), r.byKind());
    }

    @Test
    void nothingReferencedMeansCleanupThenSwitchOffUnlessItIsActiveOrHandlesAreOpen() {
        DrainReport standby = report(false, List.of());
        assertTrue(standby.empty());
        assertNull(standby.switchOffAfter());
        assertEquals("nothing the brokers reference is on a; run cleanup, then it can be switched off", standby.note());
        assertEquals("nothing the brokers reference is on a, but it is the active cluster", report(true, List.of())
                .note());
        DrainReport held = DrainReports.build("a", "STANDBY", false, List.of(), Map.of("broker-1", 2));
        assertTrue(held.note().contains("broker(s) [broker-1] still hold ledger handles there"), held.note());
        assertEquals(Map.of("broker-1", 2), held.openHandles());
        DrainReport withData = DrainReports.build("a", "STANDBY", false, List.of(closedData(1, 5, 1_000, HOUR)),
                Map.of("broker-1", 2));
        assertTrue(withData.note().startsWith("retention removes"), "handles matter only once nothing is referenced");
    }
}
