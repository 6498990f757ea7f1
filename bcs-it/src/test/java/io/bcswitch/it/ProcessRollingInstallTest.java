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
 * nothing is lost on the way.
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
                .start();
    }

    @Test
    void brokersInstalledOneAtATimeKeepServingAndSwitchOnceAllRunIt() throws Exception {
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
        }
    }
}
