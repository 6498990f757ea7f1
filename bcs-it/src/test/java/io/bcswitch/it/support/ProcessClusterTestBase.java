package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.testkit.ProcessBroker;
import io.bcswitch.testkit.ProcessCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
     * Three bookie clusters of two bookies (cluster-a, the one the brokers start on, cluster-b, cluster-c) and two
     * brokers with deduplication on, which stores each producer's message once however often it retries after a
     * crash; the test adds the plugin and its settings.
     */
    protected static ProcessCluster.Builder threeBookieClustersTwoBrokers() {
        return ProcessCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .bookieCluster("cluster-c", 2)
                .brokers(2)
                .brokerConfig("brokerDeduplicationEnabled", "true");
    }

    /** {@code persistent://<ns>/traffic-<i>} for i below {@code n}. */
    protected static List<String> trafficTopics(String ns, int n) {
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            topics.add("persistent://" + ns + "/traffic-" + i);
        }
        return topics;
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
     * loaded again, which is done here, up to 90 s. A copy in flight when its broker died can leave an id the
     * target's bookies refuse (FAILED, "refuse writes under ledger id"): the documented remedy, a rolling restart of
     * the target's bookies and a retry, is done once. Any other issue is returned as it is.
     */
    public static JsonNode awaitMigrationDoneAfterACrash(ProcessCluster cluster, Rest rest) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        JsonNode m = rest.awaitMigrationFinished();
        boolean bookiesRestarted = false;
        while (m.get("phase").asText().equals("DONE_WITH_FAILURES") && System.nanoTime() < deadline) {
            if (onlyLeftOpenByACrash(m)) {
                LOG.info("Migration skipped ledgers a killed broker left open, retried: {}", m.get("issues"));
            } else if (onlyIdsRefusedByTheTarget(m) && !bookiesRestarted) {
                // a copy in flight when its broker died was deleted, and the target's bookies (garbage-collecting
                // within seconds here) refuse its id since: docs/operations.md's remedy, a rolling restart of the
                // target's bookies, then retry-migration
                LOG.info("Migration copies refused by the target's bookies: rolling restart of {}'s bookies, then "
                        + "retried: {}", m.get("target").asText(), m.get("issues"));
                try {
                    cluster.rollingRestartBookies(m.get("target").asText());
                } catch (Exception e) {
                    throw new AssertionError("rolling restart of " + m.get("target").asText() + "'s bookies: " + e, e);
                }
                bookiesRestarted = true;
            } else {
                break;
            }
            Rest.Response retry = rest.post("/migration/retry", "");
            if (retry.status() != 200) {
                throw new AssertionError("retry-migration: " + retry.status() + " " + retry.raw());
            }
            m = rest.awaitMigrationFinished();
        }
        return m;
    }

    private static boolean onlyIdsRefusedByTheTarget(JsonNode migration) {
        for (JsonNode issue : migration.get("issues")) {
            if (!issue.get("result").asText().equals("FAILED")
                    || !issue.get("detail").asText().contains("refuse writes under ledger id")) {
                return false;
            }
        }
        return migration.get("issues").size() > 0;
    }

    private static boolean onlyLeftOpenByACrash(JsonNode migration) {
        for (JsonNode issue : migration.get("issues")) {
            if (!issue.get("result").asText().equals("SKIPPED") || !issue.get("detail").asText().contains("still open")) {
                return false;
            }
        }
        return migration.get("issues").size() > 0;
    }

    /** The broker of the cluster whose broker id is {@code brokerId}; {@code why} is said when there is none. */
    protected static ProcessBroker broker(String brokerId, Object why) {
        for (int i = 0; i < cluster.brokerCount(); i++) {
            if (cluster.broker(i).brokerId().equals(brokerId)) {
                return cluster.broker(i);
            }
        }
        throw new AssertionError(brokerId + " is none of the brokers: " + why);
    }

    /** What verify names while a broker catches up (a restarted one before its record or its relocation epoch). */
    private static final java.util.Set<String> CATCHING_UP = java.util.Set.of("BROKER_NOT_FOLLOWING",
            "BROKER_ROUTES_OLD_RELOCATIONS");

    /**
     * verify through {@code rest} finds nothing wrong, checked everything, and saw referenced ledgers, on a settled
     * cluster: every broker recorded, the cutover complete, every broker routing with the current relocation epoch.
     * A broker killed and started again within its metadata session is recorded by its old session's node until
     * that session expires, and then by its own once its periodic check writes it again: while the only violations
     * are of brokers catching up, verify is asked again, for 90 s at most (a session, then a periodic check: 30 s
     * each by default).
     */
    protected static void assertVerifyClean(Rest rest, String when) {
        rest.awaitEveryBrokerRecorded();
        rest.awaitCutoverComplete();
        rest.awaitRelocationsApplied();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        JsonNode v = rest.get("/verify").json();
        while (!v.get("ok").asBoolean() && onlyCatchingUp(v) && System.nanoTime() < deadline) {
            LOG.info("verify {}: a broker catches up, asked again: {}", when, v.get("violations"));
            try {
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            v = rest.get("/verify").json();
        }
        if (!v.get("ok").asBoolean()) {
            throw new AssertionError("verify " + when + ": " + v);
        }
        if (v.get("unchecked").size() != 0) {
            throw new AssertionError("verify " + when + " did not check everything: " + v);
        }
        if (v.get("referencedLedgers").asInt() == 0) {
            throw new AssertionError("verify " + when + " saw no referenced ledger: " + v);
        }
    }

    private static boolean onlyCatchingUp(JsonNode verify) {
        for (JsonNode violation : verify.get("violations")) {
            if (!CATCHING_UP.contains(violation.get("check").asText())) {
                return false;
            }
        }
        return verify.get("violations").size() > 0;
    }
}
