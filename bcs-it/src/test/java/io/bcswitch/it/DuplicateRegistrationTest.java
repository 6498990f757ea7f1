package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * One bookie cluster cannot be registered twice. cluster-b is registered as
 * {@code zk+hierarchical://127.0.0.1:<port>/bk/cluster-b/ledgers}; the same ZooKeeper server and ledgers
 * root is then registered again under other names, each time spelled differently ({@code localhost},
 * {@code 127.1}, the server listed twice). Every one of these requests must be refused with 409 naming
 * {@code 'cluster-b'} (it is the same bookie cluster: same instance id), and must leave the registry
 * under {@code /admin/bookie-clusters} byte-for-byte unchanged.
 */
class DuplicateRegistrationTest extends ClusterTestBase {
    private static final String ROOT = "/admin/bookie-clusters";

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().start();
    }

    @Test
    void theSameBookieClusterUnderAnotherSpellingIsRefused() throws Exception {
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String uri = cluster.bookieCluster("cluster-b").metadataServiceUri();
        int port = URI.create(uri).getPort();
        String root = URI.create(uri).getPath();
        assertTrue(port > 0 && root.equals("/bk/cluster-b/ledgers"), uri);
        Rest.Response reg = rest.register("cluster-b", uri);
        assertEquals(200, reg.status(), reg.raw());
        // the broker's own records are written (start-up announcement) before the registry is compared
        await().atMost(Duration.ofSeconds(30)).until(() -> rest.status().get("brokers").size() == 1
                && Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied").size() == 1);

        Map<String, String> spellings = new java.util.LinkedHashMap<>();
        spellings.put("cluster-b2", "zk+hierarchical://localhost:" + port + root);
        spellings.put("cluster-b3", "zk+hierarchical://127.1:" + port + root);
        spellings.put("cluster-b4", "zk+hierarchical://127.0.0.1:" + port + ";127.0.0.1:" + port + root);

        Registry.awaitStartupWrites(cluster.zkConnectString());
        List<Executable> checks = new ArrayList<>();
        for (Map.Entry<String, String> e : spellings.entrySet()) {
            Map<String, String> before = Registry.snapshot(cluster.zkConnectString(), ROOT);
            Rest.Response dup = rest.register(e.getKey(), e.getValue());
            Map<String, String> after = Registry.snapshot(cluster.zkConnectString(), ROOT);
            String what = "registering " + e.getValue() + " (cluster-b's ZooKeeper and ledgers root) as "
                    + e.getKey();
            checks.add(() -> assertEquals(409, dup.status(), what + " is refused: " + dup.raw()));
            checks.add(() -> assertTrue(dup.error() != null && dup.error().contains("'cluster-b'"),
                    what + ": the refusal names the cluster it is already registered as: " + dup.raw()));
            checks.add(() -> assertEquals(List.of(), changedPaths(before, after),
                    what + ": nothing under " + ROOT + " changes"));
        }
        assertAll(checks);
    }

    /** Paths added, removed or changed (data, version or child version) between two snapshots. */
    private static List<String> changedPaths(Map<String, String> before, Map<String, String> after) {
        java.util.TreeSet<String> paths = new java.util.TreeSet<>(before.keySet());
        paths.addAll(after.keySet());
        paths.removeIf(p -> java.util.Objects.equals(before.get(p), after.get(p)));
        return List.copyOf(paths);
    }
}
