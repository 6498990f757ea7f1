package io.bcswitch.it.support;

import io.bcswitch.testkit.TestCluster;
import org.junit.jupiter.api.AfterAll;

/** End-to-end test classes start one {@link TestCluster} in {@code @BeforeAll}; it is closed here. */
public abstract class ClusterTestBase {
    protected static TestCluster cluster;

    /** The usual test bed: cluster-a (the broker's) and cluster-b, two bookies each, one broker. */
    protected static TestCluster.Builder twoBookieClusters() {
        return TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .brokers(1);
    }

    @AfterAll
    static void closeCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }
}
