package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.testkit.ProcessCluster;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end-to-end tests on a {@link ProcessCluster}: one per class, killed with every process when the class ends.
 *
 * <p>They run in {@code mvn verify}; {@code -Dbcs.process=false} leaves them out (each class says so), for a quick
 * run of the in-process suites.
 */
public abstract class ProcessClusterTestBase {
    private static final Logger LOG = LoggerFactory.getLogger(ProcessClusterTestBase.class);
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

    /**
     * Waits until the latest switch's migration has finished and returns its state, DONE unless something is wrong.
     * After a broker was killed, a topic it owned keeps its cursor ledgers open until another broker loads it (a
     * client's reconnection does that), and a migration that ran before is DONE_WITH_FAILURES with those ledgers
     * SKIPPED as "still open"; docs/operations.md tells the operator to retry the migration once the topic is
     * loaded again, which is done here, up to 90 s. Any other issue is returned as it is.
     */
    protected static JsonNode awaitMigrationDoneAfterACrash(Rest rest) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        JsonNode m = rest.awaitMigrationFinished();
        while (m.get("phase").asText().equals("DONE_WITH_FAILURES") && onlyLeftOpenByACrash(m)
                && System.nanoTime() < deadline) {
            LOG.info("Migration skipped ledgers a killed broker left open, retried: {}", m.get("issues"));
            Rest.Response retry = rest.post("/migration/retry", "");
            if (retry.status() != 200) {
                throw new AssertionError("retry-migration: " + retry.status() + " " + retry.raw());
            }
            m = rest.awaitMigrationFinished();
        }
        return m;
    }

    private static boolean onlyLeftOpenByACrash(JsonNode migration) {
        for (JsonNode issue : migration.get("issues")) {
            if (!issue.get("result").asText().equals("SKIPPED") || !issue.get("detail").asText().contains("still open")) {
                return false;
            }
        }
        return migration.get("issues").size() > 0;
    }
}
