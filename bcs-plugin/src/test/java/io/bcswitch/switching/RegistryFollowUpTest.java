package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.ScriptedPort;
import io.bcswitch.registry.SwitchDirective;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The writes after a committed switch: the range appended once, statuses following the newest directive. */
class RegistryFollowUpTest {
    private static final long B = 1L << 32;
    private static final long C = 2L << 32;

    private final InMemoryMetadataPort port = new InMemoryMetadataPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));

    @AfterEach
    void tearDown() {
        port.close();
    }

    private void cluster(String name, ClusterStatus status) {
        registry.write(registry.paths().cluster(name), new BookieClusterRecord(1, name, "zk:" + name, status, 5L), -1)
                .join();
    }

    private Map<String, ClusterStatus> statuses() {
        Map<String, ClusterStatus> m = new TreeMap<>();
        registry.listClusters().join().forEach(c -> m.put(c.name(), c.status()));
        return m;
    }

    private Map<String, Long> versions() throws Exception {
        Map<String, Long> m = new TreeMap<>();
        for (String name : statuses().keySet()) {
            m.put(name, port.get(registry.paths().cluster(name)).get().orElseThrow().version());
        }
        m.put("ranges", port.get(registry.paths().ranges()).get().orElseThrow().version());
        return m;
    }

    @Test
    void theRangeIsAppendedOnceAndStatusesFollowTheNewestDirective() throws Exception {
        cluster("a", ClusterStatus.ACTIVE);
        cluster("b", ClusterStatus.STANDBY);
        cluster("c", ClusterStatus.STANDBY);
        cluster("old", ClusterStatus.DEPRECATED);
        SwitchDirective toB = new SwitchDirective(1, "b", "a", 1, 6, B);
        // no range table yet (written by a version that had none): it starts from the directive's origin
        RegistryFollowUp.afterSwitch(registry, toB).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(RangeTable.bootstrap("a", 6).with(new IdRange("b", B, 1, 6)), registry.readRanges().get()
                .orElseThrow());
        assertEquals(Map.of("a", ClusterStatus.STANDBY, "b", ClusterStatus.ACTIVE, "c", ClusterStatus.STANDBY,
                "old", ClusterStatus.DEPRECATED), statuses());

        // done already: nothing is written again
        Map<String, Long> before = versions();
        RegistryFollowUp.afterSwitch(registry, toB).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(before, versions());

        // a broker late with b's follow-up while c is the newest directive: b's range is kept, c stays ACTIVE
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "c", "b", 2, 8, C), -1).join();
        RegistryFollowUp.afterSwitch(registry, toB).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(Map.of("a", ClusterStatus.STANDBY, "b", ClusterStatus.STANDBY, "c", ClusterStatus.ACTIVE,
                "old", ClusterStatus.DEPRECATED), statuses());
        assertEquals(before.get("ranges"), versions().get("ranges"), "b's range was there: no rewrite");
    }

    @Test
    void aFollowUpLateBehindASwitchToTheClusterItDemotesLeavesThatSwitchsTargetActive() throws Exception {
        ScriptedPort late = new ScriptedPort();
        RegistryStore lateRegistry = new RegistryStore(late, new RegistryPaths("/bcs"));
        RegistryStore now = new RegistryStore(late.memory(), new RegistryPaths("/bcs"));
        for (String c : java.util.List.of("a", "b", "c")) {
            now.write(now.paths().cluster(c), new BookieClusterRecord(1, c, "zk:" + c,
                    c.equals("a") ? ClusterStatus.ACTIVE : ClusterStatus.STANDBY, 5L), -1).join();
        }
        SwitchDirective toB = new SwitchDirective(1, "b", "a", 1, 6, B);
        now.write(now.paths().switchTarget(), toB, -1).join();
        // a broker's follow-up of switch 1 has read the directive and is about to read the cluster records
        late.hold(p -> p.startsWith(lateRegistry.paths().cluster("")));
        CompletableFuture<Void> following = RegistryFollowUp.afterSwitch(lateRegistry, toB);
        late.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        // meanwhile switch 2 to c is committed and followed up
        SwitchDirective toC = new SwitchDirective(1, "c", "b", 2, 8, C);
        now.write(now.paths().switchTarget(), toC, 0).join();
        RegistryFollowUp.afterSwitch(now, toC).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        late.release();
        following.get(TestWaits.SECONDS, TimeUnit.SECONDS);

        Map<String, ClusterStatus> m = new TreeMap<>();
        now.listClusters().join().forEach(c -> m.put(c.name(), c.status()));
        assertEquals(Map.of("a", ClusterStatus.STANDBY, "b", ClusterStatus.STANDBY, "c", ClusterStatus.ACTIVE), m);
        late.close();
    }

    @Test
    void aFollowUpBehindSwitchesThatKeepComingGivesUpAfterItsRounds() throws Exception {
        for (String c : java.util.List.of("a", "b")) {
            cluster(c, ClusterStatus.STANDBY);
        }
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 6, B), -1).join();
        java.util.concurrent.atomic.AtomicInteger rounds = new java.util.concurrent.atomic.AtomicInteger();
        // a new switch is committed while each round writes the statuses
        RegistryStore busy = new RegistryStore(new io.bcswitch.registry.ForwardingPort(port) {
            @Override
            public CompletableFuture<java.util.List<String>> children(String path) {
                if (!path.equals(registry.paths().clusters())) {
                    return super.children(path);
                }
                int n = rounds.incrementAndGet();
                return registry.update(registry.paths().switchTarget(), SwitchDirective.class, cur -> java.util
                        .Optional.of(new SwitchDirective(1, n % 2 == 0 ? "b" : "a", "x", 1 + n, 6, (1L + n) << 32)))
                        .thenCompose(d -> super.children(path));
            }
        }, new RegistryPaths("/bcs"));
        RegistryFollowUp.afterSwitch(busy, new SwitchDirective(1, "b", "a", 1, 6, B))
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(5, rounds.get());
    }
}
