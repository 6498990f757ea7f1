package io.bcswitch.it.support;

import io.bcswitch.testkit.ProcessCluster;
import java.nio.file.Path;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The end-to-end tests on a {@link ProcessCluster}: one per class, killed with every process when the class ends.
 *
 * <p>They run in {@code mvn verify}; {@code -Dbcs.process=false} leaves them out (each class says so), for a quick
 * run of the in-process suites.
 */
public abstract class ProcessClusterTestBase {
    protected static ProcessCluster cluster;
    /** Where a test unpacks the distribution archive (JUnit deletes it). */
    @TempDir
    protected static Path dist;

    @AfterAll
    static void closeCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }

    /**
     * Tenant {@code tenant} with namespace {@code <tenant>/ns} that keeps every message, so that each topic can be
     * read again from its first message at the end ({@link Traffic#stopAndAssertStoredOnce}).
     */
    protected static String retainingNamespace(String tenant) throws PulsarAdminException, PulsarClientException {
        String ns = cluster.createTenant(tenant);
        cluster.newAdmin().namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        return ns;
    }
}
