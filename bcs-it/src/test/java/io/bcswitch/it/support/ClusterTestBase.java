package io.bcswitch.it.support;

import io.bcswitch.testkit.TestCluster;
import org.junit.jupiter.api.AfterAll;

/** End-to-end test classes start one {@link TestCluster} in {@code @BeforeAll}; it is closed here. */
public abstract class ClusterTestBase {
    protected static TestCluster cluster;

    @AfterAll
    static void closeCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }
}
