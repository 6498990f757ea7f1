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
import java.util.List;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Crashes and pauses the way production has them, on a cluster of separate processes installed from the
 * distribution archive: the broker driving a migration killed with SIGKILL in the middle of BUILD (no close hook
 * runs; its metadata session ends only when ZooKeeper expires it), and the driver of the next migration stopped
 * with SIGSTOP past its metadata session (a GC pause) while another broker takes the run over, then woken with
 * SIGCONT; then ZooKeeper killed for 10 s and started again, and one more switch; a broker killed in the middle of
 * its cutover; every bookie of a switch's target killed during the cutover and started again 10 s later. Traffic runs
 * throughout; every acknowledged message must be stored once and received, and verify must find nothing wrong after
 * each step.
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out (ProcessClusterTestBase)")
class ProcessCrashTest extends ProcessClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(ProcessCrashTest.class);
    private static final int SCHEMA_TOPICS = 16;
    /** The brokers' metadata session: a SIGSTOP longer than this makes the paused broker a zombie. */
    private static final int SESSION_MS = 8_000;

    @BeforeAll
    static void start() throws Exception {
        cluster = threeBookieClustersTwoBrokers()
                .plugin(Distribution.unpack(dist))
                .brokerConfig("metadataStoreSessionTimeoutMillis", Integer.toString(SESSION_MS))
                // slow enough to crash the driver in the middle of BUILD
                .brokerConfig(ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "1500")
                .brokerConfig(ConfigKey.MIGRATION_CONCURRENCY.fullName(), "2")
                .start();
    }

    @Test
    void aKilledDriverAndAPausedOneLoseNothingAndOverwriteNothing() throws Exception {
        String ns = retainingNamespace("crash");
        List<String> topics = trafficTopics(ns, 4);
        Rest rest0 = new Rest(cluster.broker(0).webServiceUrl());
        Rest rest1 = new Rest(cluster.broker(1).webServiceUrl());
        try (PulsarClient client = cluster.newClient()) {
            List<String> schemaTopics = SchemaTopics.create(client, ns, SCHEMA_TOPICS);
            Traffic traffic = Traffic.neverGivingUp(client, topics, "sub", 20);
            assertEquals(200, rest0.register("cluster-b", cluster.metadataServiceUri("cluster-b")).status());
            rest0.awaitEveryBrokerRecorded();

            // 1. SIGKILL of the broker that drives the migration, in the middle of BUILD
            Rest.Response sw = rest0.switchTo("cluster-b");
            assertEquals(200, sw.status(), sw.raw());
            ProcessBroker driver = awaitDriverInBuild(rest0);
            ProcessBroker other = cluster.broker(1 - driver.index());
            Rest otherRest = driver.index() == 0 ? rest1 : rest0;
            log.info("CRASH SIGKILL of {} during BUILD: {}", driver, otherRest.status().get("migration"));
            driver.kill();
            JsonNode done = otherRest.awaitMigrationFinished();
            log.info("CRASH migration after the kill: {}", done);
            assertEquals("DONE", done.get("phase").asText(), done.toString());
            assertEquals(other.brokerId(), done.get("owner").asText(), "the surviving broker finished it: " + done);
            driver.start();
            otherRest.awaitEveryBrokerRecorded();
            assertVerifyClean(otherRest, "after the killed driver came back");

            // 2. SIGSTOP of the next migration's driver past its metadata session, SIGCONT once another took over
            // (to a third cluster: a switch back to cluster-a would find every original there and copy nothing)
            assertEquals(200, otherRest.register("cluster-c", cluster.metadataServiceUri("cluster-c")).status());
            sw = otherRest.switchTo("cluster-c");
            assertEquals(200, sw.status(), sw.raw());
            ProcessBroker paused = awaitDriverInBuild(otherRest);
            ProcessBroker taker = cluster.broker(1 - paused.index());
            Rest takerRest = new Rest(taker.webServiceUrl());
            log.info("ZOMBIE SIGSTOP of {} during BUILD: {}", paused, takerRest.status().get("migration"));
            paused.pause();
            JsonNode takenOver;
            try {
                takenOver = takerRest.awaitMigrationFinished();
            } finally {
                paused.resume();
            }
            log.info("ZOMBIE migration finished by {} while the driver was stopped: {}", taker, takenOver);
            assertEquals("DONE", takenOver.get("phase").asText(), takenOver.toString());
            assertEquals(taker.brokerId(), takenOver.get("owner").asText(), takenOver.toString());
            // the woken broker may write what it had in hand: nothing of it may replace the new owner's records
            Thread.sleep(SESSION_MS);
            JsonNode after = takerRest.status().get("migration");
            assertEquals(takenOver.get("owner").asText(), after.get("owner").asText(), after.toString());
            assertEquals("DONE", after.get("phase").asText(), after.toString());
            takerRest.awaitEveryBrokerRecorded();
            assertVerifyClean(takerRest, "after the paused driver woke up");

            // 3. ZooKeeper SIGKILLed and back after 10 s (longer than the brokers' session): the brokers and
            // bookies reconnect, traffic goes on, and the next switch runs to its end
            log.info("CRASH SIGKILL of ZooKeeper for 10 s");
            cluster.zooKeeper().kill();
            Thread.sleep(10_000);
            cluster.restartZooKeeper();
            // a bookie whose old registration outlives its wait for it exits (code 4) and its supervisor starts it
            // again, as the process cluster's does; until then writes to its cluster wait (producers never give up)
            takerRest.awaitEveryBrokerRecorded();
            sw = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> takerRest.switchTo("cluster-a"), r -> r.status() == 200);
            takerRest.awaitCutoverComplete();
            JsonNode afterZk = takerRest.awaitMigrationFinished();
            log.info("CRASH migration of the switch after ZooKeeper came back: {}; bookies restarted by their "
                    + "supervisor: {}", afterZk, cluster.supervisorRestarts());
            assertEquals("DONE", afterZk.get("phase").asText(), afterZk.toString());
            assertVerifyClean(takerRest, "after ZooKeeper was killed and came back");

            // 4. SIGKILL of a broker in the middle of its cutover: its topics' open ledgers on cluster-a are
            // recovered by the broker that takes them over (routed to cluster-a by their ids) and their next
            // ledgers are created on cluster-b; the killed broker comes back on cluster-b. The cutover is paced
            // (2 topics a second per broker) so that it is caught half-way; copies go at full speed.
            Rest.Response paced = takerRest.post("/tuning",
                    "{\"cutoverTopicsPerSecond\": 2, \"migrationBytesPerSecond\": 0}");
            assertEquals(200, paced.status(), paced.raw());
            assertEquals(200, takerRest.switchTo("cluster-b").status());
            ProcessBroker cut = awaitBrokerInCutover(takerRest);
            Rest survivorRest = new Rest(cluster.broker(1 - cut.index()).webServiceUrl());
            log.info("CRASH SIGKILL of {} in the middle of its cutover: {}", cut, survivorRest.status().get("brokers"));
            cut.kill();
            survivorRest.awaitCutoverComplete();
            cut.start();
            survivorRest.awaitEveryBrokerRecorded();
            survivorRest.awaitCutoverComplete();
            JsonNode afterCut = awaitMigrationDoneAfterACrash(cluster, survivorRest);
            log.info("CRASH migration of the switch whose cutover lost a broker: {}", afterCut);
            assertEquals("DONE", afterCut.get("phase").asText(), afterCut.toString());
            assertVerifyClean(survivorRest, "after a broker was killed in the middle of its cutover");

            // 5. SIGKILL of every bookie of the target just after the switch, back 10 s later: the cutover's new
            // ledgers cannot be created meanwhile (writes wait, producers never give up), then everything resumes
            Rest.Response sw5 = survivorRest.switchTo("cluster-c");
            assertEquals(200, sw5.status(), sw5.raw());
            for (var bookie : cluster.bookies("cluster-c")) {
                bookie.kill();
            }
            log.info("CRASH SIGKILL of cluster-c's bookies during the cutover to it: {}",
                    survivorRest.status().get("brokers"));
            Thread.sleep(10_000);
            for (var bookie : cluster.bookies("cluster-c")) {
                bookie.restart();
            }
            survivorRest.awaitCutoverComplete();
            JsonNode afterBookies = survivorRest.awaitMigrationFinished();
            log.info("CRASH migration of the switch whose target's bookies were killed: {}", afterBookies);
            assertEquals("DONE", afterBookies.get("phase").asText(), afterBookies.toString());
            Rest.Response unpaced = survivorRest.post("/tuning",
                    "{\"cutoverTopicsPerSecond\": null, \"migrationBytesPerSecond\": null}");
            assertEquals(200, unpaced.status(), unpaced.raw());
            assertVerifyClean(survivorRest, "after the target's bookies were killed during the cutover");

            traffic.stopAndAssertStoredOnce(client);
            assertTrue(traffic.totalSent() > 0);
            SchemaTopics.assertUsable(cluster.newAdmin(), client, schemaTopics, 7);
        }
    }

    /** Waits until the latest migration copies in BUILD; returns the broker that drives it. */
    private static ProcessBroker awaitDriverInBuild(Rest rest) {
        JsonNode m = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> rest.status().get("migration"),
                        s -> s != null && !s.isNull() && s.get("phase").asText().equals("BUILD")
                                && s.get("copied").asInt() >= 2);
        return broker(m.get("owner").asText(), m);
    }

    /** Waits until a broker has moved some but not all of its topics in the latest switch's cutover; returns it. */
    private static ProcessBroker awaitBrokerInCutover(Rest rest) {
        long epoch = rest.status().get("epoch").asLong();
        JsonNode record = await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    for (JsonNode b : rest.status().get("brokers")) {
                        if (b.get("appliedEpoch").asLong() == epoch && b.get("finishedAt").asLong() == 0
                                && b.get("topicsMoved").asInt() >= 1
                                && b.get("topicsMoved").asInt() < b.get("topicsTotal").asInt()) {
                            return b;
                        }
                    }
                    return null;
                }, b -> b != null);
        return broker(record.get("broker").asText(), record);
    }
}
