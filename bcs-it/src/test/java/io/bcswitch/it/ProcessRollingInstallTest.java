package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Distribution;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.ProcessClusterTestBase;
import io.bcswitch.it.support.PulsarAdminCli;
import io.bcswitch.it.support.PulsarAdminCli.Result;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.testkit.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The install as an operator does it, on a cluster of separate processes: three stock brokers serve data of every
 * kind (data, cursors, schemas, a compacted topic) under traffic; the plugin is installed on one broker at a time
 * from the distribution archive (jar and NARs copied, the snippet appended to broker.conf, the broker restarted)
 * while the others keep serving without it. The operator's commands go through pulsar-admin with the CLI extension
 * from the same archive. A switch is refused while any broker runs without the plugin, naming a broker that does,
 * and the refusal changes nothing under the plugin's metadata root; once all run it, the switch is accepted;
 * nothing is lost on the way. Then the removal, one broker at a time, as docs/operations.md has it (see
 * {@link #removeOneBrokerAtATime}).
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out (ProcessClusterTestBase)")
class ProcessRollingInstallTest extends ProcessClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(ProcessRollingInstallTest.class);
    private static final String ROOT = "/admin/bookie-clusters";

    @BeforeAll
    static void start() throws Exception {
        cluster = ProcessCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .brokers(3)
                .brokerConfig("brokerDeduplicationEnabled", "true")
                // deduplication's cursor holds a topic's last ledger until its next snapshot (up to 4 min by default):
                // the removal waits for the old cluster's last data ledgers to go
                .brokerConfig("brokerDeduplicationSnapshotFrequencyInSeconds", "5")
                .brokerConfig("brokerDeduplicationSnapshotIntervalSeconds", "10")
                .start();
    }

    @Test
    void brokersInstalledOneAtATimeKeepServingSwitchOnceAllRunItAndLoseItOneAtATime() throws Exception {
        Path plugin = Distribution.unpack(dist);
        String ns = retainingNamespace("install");
        PulsarAdmin admin = cluster.newAdmin();
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            topics.add("persistent://" + ns + "/traffic-" + i);
        }
        String compacted = "persistent://" + ns + "/compacted";
        try (PulsarClient client = cluster.newClient()) {
            List<String> schemaTopics = SchemaTopics.create(client, ns, 6);
            try (Producer<String> p = client.newProducer(Schema.STRING).topic(compacted).create()) {
                for (int i = 0; i < 20; i++) {
                    p.newMessage().key("k" + (i % 5)).value("v" + i).send();
                }
            }
            Compacted.compact(admin, compacted);
            Traffic traffic = Traffic.neverGivingUp(client, topics, "sub", 20);

            for (int i = 0; i < cluster.brokerCount(); i++) {
                var b = cluster.broker(i);
                b.installation().installPlugin(plugin);
                log.info("INSTALL broker {}: plugin installed, restarting", i);
                b.restart();
                Rest rest = new Rest(b.webServiceUrl());
                // the operator's tool: pulsar-admin with the CLI extension from the same archive
                try (PulsarAdminCli cli = new PulsarAdminCli(b.webServiceUrl(), (String) null)) {
                    if (i == 0) {
                        // the first broker with the plugin registers the cluster it runs on; the new one is
                        // registered
                        Result reg = cli.run("bookie-clusters", "register", "cluster-b", "--metadata-service-uri",
                                cluster.metadataServiceUri("cluster-b"));
                        assertEquals(0, reg.exit(), reg.all());
                    }
                    if (i < cluster.brokerCount() - 1) {
                        int withPlugin = i + 1;
                        await().atMost(Duration.ofSeconds(60)).until(() -> rest.status().get("brokers").size()
                                == withPlugin);
                        Registry.awaitStartupWrites(cluster.zkConnectString());
                        Map<String, String> before = Registry.snapshot(cluster.zkConnectString(), ROOT);
                        Result refused = cli.run("bookie-clusters", "switch", "cluster-b", "--yes");
                        Map<String, String> after = Registry.snapshot(cluster.zkConnectString(), ROOT);
                        log.info("INSTALL switch with {} broker(s) still stock: {}", cluster.brokerCount() - withPlugin,
                                refused.all());
                        assertEquals(1, refused.exit(), refused.all());
                        assertTrue(refused.all().contains("would not follow the switch"), refused.all());
                        String stock = cluster.broker(cluster.brokerCount() - 1).brokerId();
                        assertTrue(refused.all().contains(stock), "the refusal names " + stock + ": " + refused.all());
                        assertEquals(before, after, "a refused switch changes nothing under " + ROOT);
                    }
                }
            }
            Rest rest = new Rest(cluster.broker(0).webServiceUrl());
            rest.awaitEveryBrokerRecorded();
            try (PulsarAdminCli cli = new PulsarAdminCli(cluster.broker(0).webServiceUrl(), (String) null)) {
                Result sw = cli.run("bookie-clusters", "switch", "cluster-b", "--yes");
                assertEquals(0, sw.exit(), sw.all());
            }
            rest.awaitCutoverComplete();
            JsonNode done = rest.awaitMigrationFinished();
            log.info("INSTALL migration after the switch: {}", done);
            assertEquals("DONE", done.get("phase").asText(), done.toString());
            JsonNode v = rest.get("/verify").json();
            assertTrue(v.get("ok").asBoolean(), "verify: " + v);
            assertEquals(0, v.get("unchecked").size(), "verify checked everything: " + v);

            traffic.stopAndAssertStoredOnce(client);
            SchemaTopics.assertUsable(admin, client, schemaTopics, 9);
            assertEquals(20, MessageAccount.readValuesToEnd(client, compacted).size(), "the compacted topic's log");

            removeOneBrokerAtATime(admin, client, rest, ns, schemaTopics, compacted);
        }
    }

    /**
     * The removal as docs/operations.md ("Removing the plugin") has it, under traffic: the old cluster's data goes
     * the way retention takes it (here the namespace's retention drops to 0 and its consumed topics are trimmed);
     * cleanup, close-client, unregister; verify says it is safe and names the URI; then each broker in turn loses
     * the plugin's files and keys, points bookkeeperMetadataServiceUri at that URI and restarts, while the others,
     * with the plugin or without, serve. At the end cluster-a's bookies are stopped: the schemas and the compacted
     * view the migration moved are read by stock brokers from cluster-b.
     */
    private static void removeOneBrokerAtATime(PulsarAdmin admin, PulsarClient client, Rest rest, String oldNs,
                                               List<String> schemaTopics, String compacted) throws Exception {
        Map<String, String> view = Compacted.view(client, compacted);
        String ns = retainingNamespace("removal");
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            topics.add("persistent://" + ns + "/traffic-" + i);
        }
        Traffic traffic = Traffic.neverGivingUp(client, topics, "sub", 20);
        admin.namespaces().setRetention(oldNs, new RetentionPolicies(0, 0));
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(2)).ignoreExceptions()
                .untilAsserted(() -> {
                    for (String t : admin.topics().getList(oldNs)) {
                        admin.topics().trimTopic(t);
                    }
                    JsonNode d = rest.get("/drain/cluster-a").json();
                    assertTrue(d.get("empty").asBoolean(), "drain report of cluster-a: " + d);
                });
        try (PulsarAdminCli cli = new PulsarAdminCli(cluster.broker(0).webServiceUrl(), (String) null)) {
            Result cleanup = cli.run("bookie-clusters", "cleanup", "--src-cluster", "cluster-a", "--dry-run",
                    "false", "--force");
            assertEquals(0, cleanup.exit(), cleanup.all());
            assertTrue(cleanup.stdout().startsWith("Deleted ") && !cleanup.stdout().startsWith("Deleted 0 "),
                    "the originals of the moved ledgers are deleted: " + cleanup.stdout());
            // refused while a broker may still read through a handle on cluster-a (held for 30 s after its open)
            Result closed = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(2))
                    .until(() -> cli.run("bookie-clusters", "close-client", "cluster-a"), r -> r.exit() == 0);
            log.info("REMOVAL cleanup: {}; close-client: {}", cleanup.stdout(), closed.stdout());
            Result unregistered = cli.run("bookie-clusters", "unregister", "cluster-a");
            assertEquals(0, unregistered.exit(), unregistered.all());
            Result verify = cli.run("bookie-clusters", "verify");
            log.info("REMOVAL verify before the removal: {}", verify.stdout());
            assertEquals(0, verify.exit(), verify.all());
            assertTrue(verify.stdout().contains("Safe to remove the plugin: yes"), verify.stdout());
        }
        JsonNode removal = rest.get("/verify").json().get("removal");
        assertTrue(removal.get("safe").asBoolean(), removal.toString());
        String uri = removal.get("metadataServiceUri").asText();
        assertEquals(cluster.metadataServiceUri("cluster-b"), uri, removal.toString());

        for (int i = 0; i < cluster.brokerCount(); i++) {
            var b = cluster.broker(i);
            b.installation().removePlugin(); // the jar, the NARs and, with them, the snippet's keys
            b.setStockSetting("bookkeeperMetadataServiceUri", uri);
            log.info("REMOVAL broker {}: plugin removed, restarting on {}", i, uri);
            b.restart();
        }
        for (var bookie : cluster.bookies("cluster-a")) {
            bookie.stop();
        }
        log.info("REMOVAL every broker stock, cluster-a's bookies stopped");
        traffic.stopAndAssertStoredOnce(client);
        SchemaTopics.assertUsable(admin, client, schemaTopics, 11);
        assertEquals(view, Compacted.view(client, compacted), "the compacted view, from the moved compacted ledger");
    }
}
