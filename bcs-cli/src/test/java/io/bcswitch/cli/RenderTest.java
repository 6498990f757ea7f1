package io.bcswitch.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.client.BookieCluster;
import io.bcswitch.client.BrokerProgress;
import io.bcswitch.client.ClusterFacts;
import io.bcswitch.client.IdRange;
import io.bcswitch.client.Precheck;
import io.bcswitch.client.Status;
import io.bcswitch.client.SwitchDirective;
import java.util.List;
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
}
