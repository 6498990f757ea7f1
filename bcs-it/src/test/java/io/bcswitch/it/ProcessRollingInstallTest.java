package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.Distribution;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.ProcessClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Traffic;
import io.bcswitch.testkit.ProcessCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The install as an operator does it, on a cluster of separate processes: three stock brokers serve data of every
 * kind (data, cursors, schemas, a compacted topic) under traffic; the plugin is installed on one broker at a time
 * from the distribution archive (jar and NARs copied, the snippet appended to broker.conf, the broker restarted)
 * while the others keep serving without it. A switch is refused while any broker runs without the plugin, and
 * accepted once all run it; nothing is lost on the way.
 */
@EnabledIfSystemProperty(named = "bcs.process", matches = "true",
        disabledReason = "process-cluster tests run with -Dbcs.process=true (ProcessClusterTestBase)")
class ProcessRollingInstallTest extends ProcessClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(ProcessRollingInstallTest.class);

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
                if (i == 0) {
                    // the first broker with the plugin registers the cluster it runs on; the new one is registered
                    assertEquals(200, rest.register("cluster-b", cluster.metadataServiceUri("cluster-b")).status());
                }
                if (i < cluster.brokerCount() - 1) {
                    Rest.Response refused = rest.switchTo("cluster-b");
                    log.info("INSTALL switch with {} broker(s) still stock: {}", cluster.brokerCount() - 1 - i,
                            refused.raw());
                    assertEquals(409, refused.status(), refused.raw());
                    assertTrue(refused.raw().contains("would not follow the switch"), refused.raw());
                }
            }
            Rest rest = new Rest(cluster.broker(0).webServiceUrl());
            rest.awaitEveryBrokerRecorded();
            Rest.Response sw = rest.switchTo("cluster-b");
            assertEquals(200, sw.status(), sw.raw());
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
