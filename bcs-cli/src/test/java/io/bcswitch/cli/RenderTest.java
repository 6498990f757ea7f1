package io.bcswitch.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.client.BookieCluster;
import io.bcswitch.client.BrokerProgress;
import io.bcswitch.client.ClusterFacts;
import io.bcswitch.client.IdRange;
import io.bcswitch.client.Precheck;
import io.bcswitch.client.Status;
import io.bcswitch.client.SwitchDirective;
import io.bcswitch.client.VerifyReport;
import io.bcswitch.client.VerifyReport.Violation;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RenderTest {
    @Test
    void tableColumnsAreAlignedToTheWidestCell() {
        String t = new Table("A", "LONG HEADER", "C").row("xxxxx", "y", null).toString();
        List<String> lines = t.lines().toList();
        assertEquals("A      LONG HEADER  C", lines.get(0));
        assertEquals("xxxxx  y            -", lines.get(1));
    }

    @Test
    void rollbackNamesTheSwitchBackOrSaysALaterSwitchReplacedIt() {
        var back = new io.bcswitch.client.SwitchOutcome(new SwitchDirective("cluster-a", "cluster-b", 2, 0, 42L), null);
        assertEquals("Rolled back switch epoch 1: new ledgers are created on 'cluster-a' again (epoch 2, first ledger "
                + "id 42); 3 promotion(s) flipped back, 4 copy/copies on 'cluster-b' deleted once every broker has "
                + "applied that.\n", Render.rollback(new io.bcswitch.client.RollbackResult(1, back, 3, 4)));
        String replaced = Render.rollback(new io.bcswitch.client.RollbackResult(1, null, 3, 4));
        assertTrue(replaced.startsWith("Rolled back switch epoch 1: a later switch had already replaced the switch "
                + "back (see status"), replaced);
        var kept = new io.bcswitch.client.Migration.Issue(7, "SCHEMA", "cluster-b", "NOT_REVERSED",
                "stays home on cluster-b: it was read from bookie-cluster x before the switch, and bookie-cluster x "
                        + "is no longer registered");
        String withKept = Render.rollback(new io.bcswitch.client.RollbackResult(1, back, 2, 3, List.of(kept)));
        assertTrue(withKept.endsWith("1 ledger(s) could not be routed back and stay home where they are:\n"
                + "  ledger 7 on 'cluster-b': stays home on cluster-b: it was read from bookie-cluster x before the "
                + "switch, and bookie-cluster x is no longer registered\n"), withKept);
        assertTrue(withKept.startsWith("Rolled back switch epoch 1: new ledgers are created on 'cluster-a' again"),
                withKept);
    }

    @Test
    void statusShowsTheRolledBackMigrationAfterItsSwitchBack() {
        var rolledBack = new io.bcswitch.client.Migration(1, "cluster-b", "ROLLED_BACK", "broker-1:8080", 0, 1000,
                1000, 2, 2, 0, 2, 0, 0, 0, 100, List.of(new io.bcswitch.client.Migration.Issue(7, "SCHEMA",
                "cluster-b", "NOT_REVERSED", "stays home on cluster-b: it was read from bookie-cluster x before")));
        Status s = new Status("cluster-a", 2, null, List.of(), List.of(), List.of(), true, List.of(), null, 0,
                List.of(), List.of(), null, "DUAL_READ", rolledBack);
        String out = Render.status(s);
        assertTrue(out.contains("Rolled back: Migration of switch epoch 1 to 'cluster-b': ROLLED_BACK"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("\\s+7\\s+SCHEMA\\s+cluster-b\\s+NOT_REVERSED\\s+stays home.*")),
                out);
        assertFalse(Render.status(new Status("cluster-a", 2, null, List.of(), List.of(), List.of(), true, List.of(),
                null, 0, List.of(), List.of(), null, "DUAL_READ")).contains("Rolled back"));
    }

    @Test
    void progressBar() {
        assertEquals("[----------]", Table.progressBar(0, 10, 10));
        assertEquals("[#####-----]", Table.progressBar(5, 10, 10));
        assertEquals("[##########]", Table.progressBar(12, 10, 10));
        assertEquals("[##########]", Table.progressBar(0, 0, 10), "nothing to move is done");
    }

    @Test
    void statusShowsPendingBrokersAndPerBrokerProgress() {
        Status s = new Status("cluster-b", 2, new SwitchDirective("cluster-b", "cluster-a", 2, 0, 8589934592L),
                List.of(new IdRange("cluster-a", 0, 0, 0), new IdRange("cluster-b", 8589934592L, 2, 0)),
                List.of(new BookieCluster("cluster-a", "zk+hierarchical://a:2181/ledgers", "STANDBY", 0)),
                List.of(new BrokerProgress("broker-1:8080", 2, "cluster-b", 10, 4, 0, 1, 0),
                        new BrokerProgress("broker-2:8080", 1, "cluster-a", 0, 0, 0, 1, 2)),
                false, List.of("broker-1:8080", "broker-2:8080"),
                new io.bcswitch.client.Migration(2, "cluster-b", "BUILD", "broker-1:8080", 0, 1000, 0, 10, 4, 1, 0, 0,
                        0, 0, 2048, List.of()), 3, List.of("broker-2:8080"));
        String out = Render.status(s);
        assertTrue(out.contains("Relocation epoch 3 not yet applied by: broker-2:8080 (PROMOTE waits for them"), out);
        assertTrue(out.contains("Cutover:               in progress (waiting for broker-1:8080, broker-2:8080)"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches(".*\\[########------------] running\\s+4/10.*")), out);
        assertTrue(out.contains("not applied"), out);
        assertTrue(out.contains("Migration of switch epoch 2 to 'cluster-b': BUILD (on broker-1:8080)"), out);
        assertTrue(out.contains("0/10 promoted; 4 copied, 1 already present"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("\\s+2\\s+cluster-b\\s+8589934592.*")), out);
    }

    @Test
    void precheckListsProblemsAndWarnings() {
        Precheck p = new Precheck("cluster-c", false, List.of("too few bookies"), List.of("source unreachable"),
                "cluster-a", false, "timeout", null, new ClusterFacts("x", true, 0, -1, 1, 0), 2, 4294967296L);
        String out = Render.precheck(p);
        assertTrue(out.startsWith("Precheck for switching to 'cluster-c': NOT OK\n  problem: too few bookies\n"
                + "  warning: source unreachable\n"), out);
        assertTrue(out.contains("no (timeout)"), out);
    }

    @Test
    void statusShowsBrokersWithoutThePluginActivationErrorsAndOpenHandles() {
        Status s = new Status("cluster-b", 2, null, List.of(new IdRange("cluster-a", 0, 0, 0)), List.of(),
                List.of(new BrokerProgress("broker-1:8080", 2, "cluster-b", 10, 4, 0, 1, 0, "cannot reach cluster-b", 3,
                                Map.of("cluster-a", 2, "cluster-0", 1), Map.of("cluster-a", List.of(7L, 9L))),
                        new BrokerProgress("broker-2:8080", 2, "cluster-b", 0, 0, 0, 1, 2)),
                false, List.of("broker-1:8080"), null, 0, List.of(), List.of("broker-3:8080", "broker-4:8080"));
        String out = Render.status(s);
        assertTrue(out.contains("Brokers without the plugin: broker-3:8080, broker-4:8080 (they run without it or "
                + "are starting; a switch is refused while there are any)\n"), out);
        List<String> lines = out.lines().toList();
        int row = lines.indexOf(lines.stream().filter(l -> l.startsWith("  broker-1:8080")).findFirst().orElseThrow());
        assertEquals("      activation failed (3 attempt(s), retrying): cannot reach cluster-b", lines.get(row + 1));
        assertEquals("      handles open: cluster-0=1, cluster-a=2", lines.get(row + 2));
        assertTrue(lines.get(row + 3).startsWith("  broker-2:8080"), out);
        // a broker with nothing to report gets no extra line, and the table stays aligned
        assertEquals(lines.get(row - 1).indexOf("CUTOVER"), lines.get(row + 3).indexOf("[####"), out);
        // nothing said when every broker runs the plugin (or an older broker does not report it)
        Status older = new Status("cluster-b", 2, null, List.of(), List.of(), List.of(), true, List.of(), null, 0,
                List.of());
        assertFalse(Render.status(older).contains("without the plugin"));
    }

    @Test
    void tuningShowsWhatIsUsedWhatBrokerConfSaysAndWhatWasChanged() {
        var t = new io.bcswitch.client.Tuning(new io.bcswitch.client.Tuning.Values(5_000_000, 4, 150),
                new io.bcswitch.client.Tuning.Values(1_048_576, 4, 150),
                new io.bcswitch.client.Tuning.Stored(5_000_000L, null, null, 7));
        String out = Render.tuning(t);
        assertTrue(out.contains("  migrationBytesPerSecond  5000000        broker.conf 1048576        changed to 5000000\n"),
                out);
        assertTrue(out.contains("  cutoverTopicsPerSecond   150            broker.conf 150            (not changed)\n"),
                out);
        Status s = new Status("cluster-b", 2, null, List.of(), List.of(), List.of(), true, List.of(), null, 0,
                List.of(), List.of(), t.stored());
        assertTrue(Render.status(s).contains("Pacing changed at run time (over broker.conf): "
                + "migrationBytesPerSecond=5000000 (get-tuning)\n"), Render.status(s));
        Status none = new Status("cluster-b", 2, null, List.of(), List.of(), List.of(), true, List.of(), null, 0,
                List.of(), List.of(), new io.bcswitch.client.Tuning.Stored(null, null, null, 7));
        assertFalse(Render.status(none).contains("Pacing"), "nothing changed: nothing said");
    }

    @Test
    void migrationShowsRollbackInProgressAndPendingDeletions() {
        var rolling = new io.bcswitch.client.Migration(2, "cluster-b", "ROLLING_BACK", "broker-1:8080", 0, 1000, 0, 10,
                10, 0, 10, 0, 0, 0, 2048, List.of(), 10, "cluster-a", "precheck of 'cluster-a' failed", 0, 0);
        String out = Render.migration(rolling);
        assertTrue(out.contains("  Rollback to cluster-a in progress: precheck of 'cluster-a' failed (retried; "
                + "'rollback' again resumes it)\n"), out);
        assertFalse(out.contains("still to delete"), out);
        var rolledBack = new io.bcswitch.client.Migration(2, "cluster-b", "ROLLED_BACK", null, 0, 1000, 1000, 10, 10,
                0, 10, 0, 0, 0, 2048, List.of(), 10, "cluster-a", null, 4, 1);
        out = Render.migration(rolledBack);
        assertTrue(out.contains("  Copies still to delete from 'cluster-b': 4 (deleted once every live broker routes "
                + "without them)\n"), out);
        assertTrue(out.contains("; 1 not promoted"), out);
        assertFalse(out.contains("Rollback to"), out);
    }

    @Test
    void drainShowsOpenHandlesAndCleanupShowsNotes() {
        var d = new io.bcswitch.client.DrainReport("cluster-a", false, "STANDBY", true, 0, 0, List.of(), 0, List.of(),
                null, "nothing pins it", Map.of("broker-2:8080", 1, "broker-1:8080", 2));
        assertTrue(Render.drain(d).contains("Open handles on cluster-a: broker-1:8080=2, broker-2:8080=1 (released "
                + "when their topics unload)\n"), Render.drain(d));
        var none = new io.bcswitch.client.DrainReport("cluster-a", false, "STANDBY", true, 0, 0, List.of(), 0,
                List.of(), null, "nothing pins it");
        assertFalse(Render.drain(none).contains("Open handles"));
        var r = new io.bcswitch.client.CleanupResult(true, "cluster-a", List.of(), 0, 1, List.of(), false,
                List.of("ledger 7 is open on broker-1:8080"));
        assertTrue(Render.cleanup(r).contains("  kept for now: ledger 7 is open on broker-1:8080\n"), Render.cleanup(r));
    }

    @Test
    void getShowsTheInstanceId() {
        assertTrue(Render.cluster(new BookieCluster("cluster-b", "zk://b/ledgers", "STANDBY", 0, "4d2b-inst"))
                .contains("instanceId:           4d2b-inst\n"));
        assertTrue(Render.cluster(new BookieCluster("cluster-b", "zk://b/ledgers", "STANDBY", 0))
                .contains("instanceId:           -\n"));
    }

    @Test
    void verifyOk() {
        VerifyReport v = new VerifyReport(true, 1, true, 12, List.of("cluster-a", "cluster-b"), 3, List.of(),
                List.of(), new VerifyReport.Removal(true, "cluster-b", "zk://b/ledgers", List.of("all 12 referenced "
                + "ledgers are on cluster-b")));
        assertEquals("OK: no violation (12 referenced ledgers on 2 clusters, 3 relocations checked, deep)\n"
                + "Safe to remove the plugin: yes, because all 12 referenced ledgers are on cluster-b\n",
                Render.verify(v));
        VerifyReport older = new VerifyReport(true, 1, true, 12, List.of("cluster-a"), 3, List.of(), List.of(), null);
        assertEquals("OK: no violation (12 referenced ledgers on 1 clusters, 3 relocations checked, deep)\n",
                Render.verify(older), "a broker before the removal verdict: no line about it");
        VerifyReport noticed = new VerifyReport(true, 1, false, 12, List.of("cluster-a"), 3, List.of(), List.of(),
                null, List.of(new VerifyReport.Notice("NOT_REVERSED", 7L, "cluster-b", "the rollback of switch epoch 1 "
                + "could not route it back")));
        assertEquals("OK: no violation (12 referenced ledgers on 1 clusters, 3 relocations checked)\n"
                + "Notice: NOT_REVERSED ledger=7 cluster=cluster-b: the rollback of switch epoch 1 could not route it "
                + "back\n", Render.verify(noticed));
    }

    @Test
    void verifyListsViolationsThenWhatWasNotChecked() {
        VerifyReport v = new VerifyReport(false, 1, false, 12, List.of("cluster-a", "cluster-b"), 3, List.of(
                new Violation("REFERENCED_MISSING", 4294967297L, "cluster-b", "tenant/ns/persistent/t",
                        "DATA ledger is not on cluster-b, where routing sends its reads"),
                new Violation("BROKER_NOT_FOLLOWING", null, "broker-2:8080", null,
                        "live broker does not follow switch epoch 2")),
                List.of("id generator of the active cluster 'cluster-b': timeout"), null);
        assertEquals("VIOLATIONS: 2 (12 referenced ledgers on 2 clusters, 3 relocations checked)\n"
                + "  REFERENCED_MISSING ledger=4294967297 cluster=cluster-b [tenant/ns/persistent/t]: DATA ledger is "
                + "not on cluster-b, where routing sends its reads\n"
                + "  BROKER_NOT_FOLLOWING ledger=- cluster=broker-2:8080: live broker does not follow switch epoch 2\n"
                + "Not checked: id generator of the active cluster 'cluster-b': timeout\n", Render.verify(v));
    }
}
