package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Distribution;
import io.bcswitch.it.support.EarlierDistribution;
import io.bcswitch.it.support.ProcessClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.testkit.ProcessBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rolling upgrade of the plugin itself, as docs/operations.md has it, on a cluster of separate processes: brokers
 * running the archive of an earlier commit of this repository (main when the process-cluster work began) switch to
 * another bookie cluster; while that switch's migration copies, each broker in turn gets this build's archive and is
 * restarted, the one driving the migration last, so that an upgraded broker takes the run over and works on with
 * the state, the copy list and the relocations the earlier version wrote. Then one more switch on the new version.
 * Traffic throughout; exact accounting; verify clean.
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out (ProcessClusterTestBase)")
class ProcessUpgradeTest extends ProcessClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(ProcessUpgradeTest.class);
    /** main when the process-cluster work began: the version an operator upgrades from. */
    static final String EARLIER = "32965fa5cacb8e918d3a11305809fa7fb415de89";
    private static final int SCHEMA_TOPICS = 16;

    @BeforeAll
    static void start() throws Exception {
        Path earlier = EarlierDistribution.unpack(EARLIER, dist.resolve("earlier"));
        cluster = threeBookieClustersTwoBrokers()
                .plugin(earlier)
                // slow enough that both brokers are upgraded while the migration copies the compacted ledger
                .brokerConfig(ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "2000")
                .brokerConfig(ConfigKey.MIGRATION_CONCURRENCY.fullName(), "2")
                .start();
    }

    @Test
    void upgradedOneBrokerAtATimeDuringAMigrationThatTheNewVersionFinishes() throws Exception {
        Path current = Distribution.unpack(dist.resolve("current"));
        String ns = retainingNamespace("upgrade");
        List<String> topics = trafficTopics(ns, 4);
        try (PulsarClient client = cluster.newClient()) {
            List<String> schemaTopics = SchemaTopics.create(client, ns, SCHEMA_TOPICS);
            // a compacted ledger of some 150 KB: at 2,000 bytes a second its copy takes over a minute
            String compacted = "persistent://" + ns + "/compacted";
            Map<String, String> view = new TreeMap<>();
            try (Producer<String> p = client.newProducer(Schema.STRING).topic(compacted).create()) {
                for (int i = 0; i < 150; i++) {
                    String value = Character.toString('a' + i % 26).repeat(1_000) + i;
                    p.newMessage().key("k" + i).value(value).send();
                    view.put("k" + i, value);
                }
            }
            Compacted.compact(cluster.newAdmin(), compacted);
            Traffic traffic = Traffic.neverGivingUp(client, topics, "sub", 20);
            Rest rest0 = rest(cluster.broker(0));
            assertEquals(200, rest0.register("cluster-b", cluster.metadataServiceUri("cluster-b")).status());
            rest0.awaitEveryBrokerRecorded();
            Rest.Response sw = rest0.switchTo("cluster-b");
            assertEquals(200, sw.status(), sw.raw());
            JsonNode building = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                    .until(() -> rest0.status().get("migration"), m -> m != null && !m.isNull()
                            && m.get("phase").asText().equals("BUILD") && m.get("copied").asInt() >= 1);
            log.info("UPGRADE the earlier version's migration copies: {}", building);
            ProcessBroker driver = broker(building.get("owner").asText(), building);
            ProcessBroker first = cluster.broker(1 - driver.index());

            for (ProcessBroker b : List.of(first, driver)) {
                b.installation().installPlugin(current); // the earlier one's files go first
                log.info("UPGRADE broker {}: this build's plugin installed, restarting", b.index());
                b.restart();
                Rest via = rest(b);
                via.awaitEveryBrokerRecorded();
                JsonNode m = via.status().get("migration");
                log.info("UPGRADE broker {} restarted on this build: migration {}", b.index(), m);
                if (b == first) {
                    // the driver, still on the earlier version, copies on: mixed versions, one run
                    assertEquals("BUILD", m.get("phase").asText(), "still copying when the driver restarts: " + m);
                }
            }
            Rest rest = rest(driver);
            // the copying goes at full speed from now on (a setting the earlier version's brokers had too)
            Rest.Response fast = rest.post("/tuning", "{\"migrationBytesPerSecond\": 0}");
            assertEquals(200, fast.status(), fast.raw());
            JsonNode done = awaitMigrationDoneAfterACrash(cluster, rest);
            log.info("UPGRADE migration the earlier version started, finished by this one: {}", done);
            assertEquals("DONE", done.get("phase").asText(), done.toString());
            assertEquals(first.brokerId(), done.get("owner").asText(), "the broker upgraded first took the run over "
                    + "when the driver restarted: " + done);
            assertEquals(done.get("planned").asInt(), done.get("promoted").asInt(), done.toString());
            assertTrue(done.get("alreadyPresent").asInt() >= 1, "the earlier version's copies are recognised: "
                    + done);
            assertVerifyClean(rest, "after the upgrade");

            // the upgraded brokers make the next switch
            assertEquals(200, rest.register("cluster-c", cluster.metadataServiceUri("cluster-c")).status());
            sw = rest.switchTo("cluster-c");
            assertEquals(200, sw.status(), sw.raw());
            rest.awaitCutoverComplete();
            JsonNode next = awaitMigrationDoneAfterACrash(cluster, rest);
            log.info("UPGRADE the next switch's migration: {}", next);
            assertEquals("DONE", next.get("phase").asText(), next.toString());
            assertVerifyClean(rest, "after a switch on the upgraded brokers");

            traffic.stopAndAssertStoredOnce(client);
            assertTrue(traffic.totalSent() > 0);
            SchemaTopics.assertUsable(cluster.newAdmin(), client, schemaTopics, 7);
            assertEquals(view, Compacted.view(client, compacted), "the compacted view, read through the copied ledger");
        }
    }

    private static Rest rest(ProcessBroker b) {
        return new Rest(b.webServiceUrl());
    }
}
