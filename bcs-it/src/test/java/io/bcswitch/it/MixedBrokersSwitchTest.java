package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A switch is refused while a live broker runs without the plugin: broker 1 is restarted without it
 * (it would keep creating ledgers on cluster-a whatever the directive says); a switch to cluster-b
 * through broker 0 must answer 409 naming broker 1 and change nothing under {@code /admin/bookie-clusters}.
 * Once broker 1 is restarted with the plugin and status lists both brokers, the same switch succeeds.
 */
class MixedBrokersSwitchTest extends ClusterTestBase {
    private static final String ROOT = "/admin/bookie-clusters";

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().brokers(2).start();
    }

    @Test
    void switchIsRefusedWhileABrokerRunsWithoutThePlugin() throws Exception {
        Rest rest0 = new Rest(cluster.broker(0).webServiceUrl());
        PulsarAdmin admin = cluster.newAdmin();
        Rest.Response reg = rest0.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        assertEquals(200, reg.status(), reg.raw());
        await().atMost(Duration.ofSeconds(30)).until(() -> rest0.status().get("brokers").size() == 2);

        cluster.broker(1).restart(false);
        String broker1 = cluster.broker(1).pulsar().getBrokerId();
        assertTrue(cluster.broker(1).pulsar().getManagedLedgerStorage().getClass().getName()
                .startsWith("org.apache.pulsar"), "broker 1 runs the stock managed-ledger storage");
        // broker 1 is live (Pulsar lists it) and its plugin records are gone
        await().atMost(Duration.ofSeconds(30)).until(() -> admin.brokers().getActiveBrokers().contains(broker1)
                && Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/brokers").size() == 1
                && Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied").size() == 1);

        Registry.awaitStartupWrites(cluster.zkConnectString());
        Map<String, String> before = Registry.snapshot(cluster.zkConnectString(), ROOT);
        Rest.Response refused = rest0.switchTo("cluster-b");
        Map<String, String> after = Registry.snapshot(cluster.zkConnectString(), ROOT);
        assertAll(
                () -> assertEquals(409, refused.status(), "switch while broker " + broker1
                        + " runs without the plugin: " + refused.raw()),
                () -> assertTrue(refused.error() != null && refused.error().contains(broker1),
                        "the refusal names broker " + broker1 + ": " + refused.raw()),
                () -> assertEquals(List.of(), changedPaths(before, after),
                        "a refused switch changes nothing under " + ROOT));

        cluster.broker(1).restart(true);
        await().atMost(Duration.ofSeconds(30)).until(() -> rest0.status().get("brokers").size() == 2);
        Rest.Response sw = rest0.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());
        rest0.awaitCutoverComplete();
        assertEquals("cluster-b", rest0.status().get("activeCluster").asText());
    }

    /** Paths added, removed or changed (data, version or child version) between two snapshots. */
    private static List<String> changedPaths(Map<String, String> before, Map<String, String> after) {
        java.util.TreeSet<String> paths = new java.util.TreeSet<>(before.keySet());
        paths.addAll(after.keySet());
        paths.removeIf(p -> java.util.Objects.equals(before.get(p), after.get(p)));
        return List.copyOf(paths);
    }
}
