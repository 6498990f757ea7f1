package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.it.support.Distribution;
import io.bcswitch.it.support.ProcessClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.testkit.ProcessBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker doing a migration's later work killed with SIGKILL, on a cluster of separate processes installed from
 * the distribution archive: the driver in PROMOTE (copies half made home), the broker carrying out an operator's
 * rollback once its intent is recorded, and the broker running a cleanup once it has claimed the originals it
 * deletes. No close hook runs; the killed broker's metadata session ends only when ZooKeeper expires it. The other
 * broker must finish what was started (or refuse what can no longer be done), traffic runs throughout, every
 * acknowledged message is stored once and received, and verify finds nothing wrong after each step.
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out (ProcessClusterTestBase)")
class ProcessDriverCrashTest extends ProcessClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(ProcessDriverCrashTest.class);
    private static final int SCHEMA_TOPICS = 16;
    private static final int SESSION_MS = 8_000;

    @BeforeAll
    static void start() throws Exception {
        cluster = threeBookieClustersTwoBrokers()
                .plugin(Distribution.unpack(dist))
                .brokerConfig("metadataStoreSessionTimeoutMillis", Integer.toString(SESSION_MS))
                // one ledger per announced promotion: PROMOTE lasts long enough to be caught half-way
                .brokerConfig(ConfigKey.MIGRATION_PROMOTE_BATCH_SIZE.fullName(), "1")
                .start();
    }

    @Test
    void aDriverKilledInPromoteInARollbackOrInACleanupLeavesTheOtherBrokerToFinishIt() throws Exception {
        String ns = retainingNamespace("drivers");
        List<String> topics = trafficTopics(ns, 4);
        try (PulsarClient client = cluster.newClient()) {
            List<String> schemaTopics = SchemaTopics.create(client, ns, SCHEMA_TOPICS);
            Traffic traffic = Traffic.neverGivingUp(client, topics, "sub", 20);
            Rest rest0 = rest(cluster.broker(0));
            assertEquals(200, rest0.register("cluster-b", cluster.metadataServiceUri("cluster-b")).status());
            rest0.awaitEveryBrokerRecorded();

            // 1. SIGKILL of the driver in the middle of PROMOTE: some copies are home, the rest not yet
            Rest.Response sw = rest0.switchTo("cluster-b");
            assertEquals(200, sw.status(), sw.raw());
            JsonNode promoting = awaitMigration(rest0, true, m -> m.get("phase").asText().equals("PROMOTE")
                    && m.get("promoted").asInt() >= 1);
            ProcessBroker driver = broker(promoting.get("owner").asText(), promoting);
            ProcessBroker other = cluster.broker(1 - driver.index());
            driver.kill();
            log.info("DRIVER SIGKILL of {} in PROMOTE: {}; now {}", driver, promoting,
                    rest(other).status().get("migration"));
            JsonNode done = awaitMigrationDoneAfterACrash(cluster, rest(other));
            log.info("DRIVER migration after the kill in PROMOTE: {}", done);
            assertEquals("DONE", done.get("phase").asText(), done.toString());
            assertEquals(other.brokerId(), done.get("owner").asText(), "the surviving broker finished it: " + done);
            assertEquals(done.get("planned").asInt(), done.get("promoted").asInt(),
                    "every planned ledger is home on cluster-b: " + done);
            assertEquals(0, done.get("notPromoted").asInt(), done.toString());
            // BUILD had ended before the kill: the copies are recognised, none is made again
            assertEquals(0, done.get("copied").asInt(), "nothing copied twice: " + done);
            driver.start();
            rest(other).awaitEveryBrokerRecorded();
            assertVerifyClean(rest(other), "after the driver was killed in PROMOTE");

            // 2. SIGKILL of the broker carrying out a rollback, as soon as its intent is recorded: the other broker
            // resumes it (the intent is what says it must be finished), flips the promotions back and switches back
            ProcessBroker roller = cluster.broker(0);
            ProcessBroker resumer = cluster.broker(1);
            CompletableFuture<Rest.Response> asked = CompletableFuture.supplyAsync(
                    () -> rest(roller).post("/rollback", ""));
            JsonNode rolling = awaitMigration(rest(resumer), false, m -> m.get("phase").asText().startsWith("ROLL"));
            roller.kill();
            JsonNode atKill = rest(resumer).status().get("migration");
            log.info("DRIVER SIGKILL of {} carrying out a rollback: seen {}; at the kill {}; its answer {}", roller,
                    rolling.get("phase").asText(), atKill, asked.handle((r, e) -> r != null ? r.raw() : String
                            .valueOf(e)).getNow("none (killed before it answered)"));
            // once the switch back is made, status shows the rolled-back migration beside the switch back's
            long rolledEpoch = rolling.get("switchEpoch").asLong();
            JsonNode rolledBack = await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> {
                        JsonNode st = rest(resumer).status();
                        for (String block : List.of("migration", "rolledBack")) {
                            JsonNode m = st.path(block);
                            if (m.path("switchEpoch").asLong() == rolledEpoch
                                    && m.path("phase").asText().equals("ROLLED_BACK")) {
                                return m;
                            }
                        }
                        return null;
                    }, m -> m != null);
            log.info("DRIVER rollback finished by the other broker: {}", rolledBack);
            assertEquals("cluster-a", rest(resumer).status().get("activeCluster").asText());
            roller.start();
            rest(resumer).awaitEveryBrokerRecorded();
            rest(resumer).awaitCutoverComplete();
            // the switch back's own migration (to cluster-a) may still promote: verify reads a settled cluster
            JsonNode back = rest(resumer).awaitMigrationFinished();
            log.info("DRIVER the switch back's migration: {}", back);
            assertVerifyClean(rest(resumer), "after the rollback's broker was killed");

            // 3. a switch again (to a third cluster: cluster-b's bookies refuse for days the ids of the copies the
            // rollback deleted there, docs/operations.md), then SIGKILL of the broker running a cleanup of cluster-a
            // (forced: inside the rollback window) once it has claimed the originals it deletes: a rollback, which
            // would read them back, is refused from then on, and the cleanup asked again of the other broker
            // finishes the work
            assertEquals(200, rest(resumer).register("cluster-c", cluster.metadataServiceUri("cluster-c")).status());
            sw = rest(resumer).switchTo("cluster-c");
            assertEquals(200, sw.status(), sw.raw());
            rest(resumer).awaitCutoverComplete();
            JsonNode again = awaitMigrationDoneAfterACrash(cluster, rest(resumer));
            assertEquals("DONE", again.get("phase").asText(), again.toString());
            ProcessBroker cleaner = cluster.broker(1);
            ProcessBroker finisher = cluster.broker(0);
            CompletableFuture<Rest.Response> cleaning = CompletableFuture.supplyAsync(() -> rest(cleaner).post(
                    "/cleanup", "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"force\":true}"));
            JsonNode claimed = awaitMigration(rest(finisher), true, m -> m.get("originalsDeleted").asInt() > 0);
            cleaner.kill();
            log.info("DRIVER SIGKILL of {} running a cleanup: originals claimed {}; its answer {}", cleaner,
                    claimed.get("originalsDeleted"), cleaning.handle((r, e) -> r != null ? r.raw()
                            : String.valueOf(e)).getNow("none (killed before it answered)"));
            Rest.Response refused = rest(finisher).post("/rollback", "");
            assertEquals(409, refused.status(), "a rollback after originals were claimed for deletion: "
                    + refused.raw());
            cleaner.start();
            rest(finisher).awaitEveryBrokerRecorded();
            rest(finisher).awaitCutoverComplete();
            // asked again (as often as a ledger a broker still reads keeps it for a moment: a schema read handle
            // counts as held for 30 s after it was opened, and the notes say so) until nothing deletable is left;
            // refused while the restarted broker's cutover runs (it starts on the active cluster; its record may
            // say so only once its old session's record is gone), which it says
            List<String> answers = new ArrayList<>();
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(5)).until(() -> {
                Rest.Response cleanupAgain = rest(finisher).post("/cleanup",
                        "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"force\":true}");
                answers.add(cleanupAgain.raw());
                if (cleanupAgain.status() == 409 && cleanupAgain.raw().contains("cutover of switch epoch")) {
                    return false;
                }
                assertEquals(200, cleanupAgain.status(), cleanupAgain.raw());
                return rest(finisher).get("/cleanup-targets/cluster-a").json().isEmpty();
            });
            log.info("DRIVER cleanup asked again of {}: {}", finisher, answers);
            assertVerifyClean(rest(finisher), "after the cleanup's broker was killed and the cleanup asked again");

            traffic.stopAndAssertStoredOnce(client);
            assertTrue(traffic.totalSent() > 0);
            SchemaTopics.assertUsable(cluster.newAdmin(), client, schemaTopics, 7);
        }
    }

    private static Rest rest(ProcessBroker b) {
        return new Rest(b.webServiceUrl());
    }

    /**
     * Polls the migration on record (through {@code rest}; with {@code latestSwitch}, only the latest switch's, not
     * an earlier one's: a rollback's switch back makes a newer epoch without a migration) until {@code until} holds.
     */
    private static JsonNode awaitMigration(Rest rest, boolean latestSwitch, Predicate<JsonNode> until) {
        return await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    JsonNode st = rest.status();
                    JsonNode m = st.get("migration");
                    return m != null && !m.isNull() && (!latestSwitch
                            || m.get("switchEpoch").asLong() == st.get("epoch").asLong()) ? m : null;
                }, m -> m != null && until.test(m));
    }
}
