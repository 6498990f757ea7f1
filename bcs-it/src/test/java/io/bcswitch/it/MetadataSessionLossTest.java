package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Traffic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.metadata.impl.ZKMetadataStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker whose metadata-store session expires re-syncs when it comes back. Two brokers; broker 1
 * owns a topic with a producer and a consumer. Broker 1 is cut off from ZooKeeper (its metadata link
 * paused) until its 8 s session has expired server-side, i.e. its ephemeral nodes (Pulsar's and the
 * plugin's {@code brokers/<id>} and {@code relocation-applied/<id>}) are gone; meanwhile cluster-a ->
 * cluster-b is switched through broker 0 and the migration that follows finishes. Pulsar 4.2.4 keeps a
 * broker running on session loss with {@code zookeeperSessionExpiredPolicy=reconnect} (its default; set
 * explicitly here) and opens a new session once the link is back. Within 60 s of that, broker 1 must
 * have applied the directive it missed: its topic writes its newest ledger on cluster-b, status lists
 * broker 1 with appliedEpoch 1 and done, its relocation-applied record is back, and status never
 * reports cutoverComplete while broker 1 is live (back in Pulsar's broker list) but not listed as done.
 * Nothing sent is lost.
 */
class MetadataSessionLossTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(MetadataSessionLossTest.class);
    private static final String ROOT = "/admin/bookie-clusters";

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .brokers(2)
                .pausableMetadataLinks()
                .brokerConfig(p -> {
                    p.setProperty("metadataStoreSessionTimeoutMillis", "8000");
                    p.setProperty("zookeeperSessionExpiredPolicy", "reconnect");
                })
                .start();
    }

    @Test
    void aBrokerWhoseSessionExpiredAppliesTheSwitchItMissed() throws Exception {
        String ns = cluster.createTenant("session");
        PulsarAdmin admin = cluster.newAdmin();
        PulsarClient client = cluster.newClient();
        Rest rest0 = new Rest(cluster.broker(0).webServiceUrl());
        String broker1 = cluster.broker(1).pulsar().getBrokerId();

        // a topic owned by broker 1 (and one owned by broker 0, when the first few topics give one)
        String onBroker1 = null;
        String onBroker0 = null;
        for (int i = 0; i < 24 && (onBroker1 == null || onBroker0 == null); i++) {
            String t = "persistent://" + ns + "/t" + i;
            admin.topics().createNonPartitionedTopic(t);
            String owner = admin.lookups().lookupTopic(t);
            if (owner.equals(cluster.broker(1).brokerServiceUrl()) && onBroker1 == null) {
                onBroker1 = t;
            } else if (owner.equals(cluster.broker(0).brokerServiceUrl()) && onBroker0 == null) {
                onBroker0 = t;
            }
        }
        assertNotNull(onBroker1, "setup: some topic is owned by broker 1");
        String t1 = onBroker1;
        List<String> topics = new ArrayList<>(List.of(t1));
        if (onBroker0 != null) {
            topics.add(onBroker0);
        }
        log.info("SESSION topics {}: {} is owned by broker 1 ({})", topics, t1, broker1);
        Traffic traffic = new Traffic(client, topics, "sub", 20);
        traffic.awaitFlowingWithCursorLedger(admin, t1, "sub", 20);
        assertEquals(200, rest0.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri())
                .status());
        await().atMost(Duration.ofSeconds(30)).until(() -> rest0.status().get("brokers").size() == 2);
        long session = zkSession(1);

        // broker 1 is cut off until its session has expired; the switch happens meanwhile
        cluster.broker(1).metadataLink().pause();
        Rest.Response sw = rest0.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() ->
                !Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/brokers").containsKey(broker1)
                && !Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied")
                        .containsKey(broker1));
        // the migration runs its course meanwhile (nothing bumps the relocation epoch after the resume)
        JsonNode migration = rest0.awaitMigrationFinished();
        log.info("SESSION broker 1's session expired (its ephemeral records are gone), migration finished: {}; "
                + "status now {}", migration, rest0.status());
        cluster.broker(1).metadataLink().resume();
        await().atMost(Duration.ofSeconds(60)).until(() -> zkSession(1) != session);
        log.info("SESSION broker 1 has a new metadata-store session");

        // within 60 s broker 1 catches up; status never calls the cutover complete without it
        String[] violation = new String[1];
        JsonNode[] last = new JsonNode[1];
        Long[] newest = new Long[1];
        try {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> {
                        boolean live = admin.brokers().getActiveBrokers().contains(broker1);
                        JsonNode s = rest0.status();
                        last[0] = s;
                        List<Long> ids = Placement.ledgers(admin, t1);
                        newest[0] = ids.get(ids.size() - 1);
                        boolean listed = Rest.brokerDoneAt(s, broker1, 1);
                        if (live && s.get("cutoverComplete").asBoolean() && !listed && violation[0] == null) {
                            violation[0] = "status reports cutoverComplete while live broker " + broker1
                                    + " is not listed as done at epoch 1 (its topic's newest ledger " + newest[0]
                                    + " is on " + Placement.owner(s.get("ranges"), newest[0]) + "): brokers="
                                    + s.get("brokers");
                            log.warn("SESSION {}", violation[0]);
                        }
                        return listed && s.get("cutoverComplete").asBoolean()
                                && "cluster-b".equals(Placement.owner(s.get("ranges"), newest[0]))
                                && Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied")
                                        .containsKey(broker1);
                    });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            log.warn("SESSION broker 1 did not catch up within 60 s: status {}", last[0]);
        }
        assertNotNull(newest[0], "status and the topic's ledgers could be read after the resume");
        JsonNode status = last[0];
        long newestLedger = newest[0];
        boolean relocationApplied = Registry.jsonChildren(cluster.zkConnectString(), ROOT + "/relocation-applied")
                .containsKey(broker1);

        traffic.stopProducing();
        try {
            await().atMost(Duration.ofSeconds(30)).until(traffic::allReceived);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            log.warn("SESSION not everything sent was received: {}", traffic.summary());
        }
        log.info("SESSION traffic: {}", traffic.summary());
        traffic.close();

        assertAll(
                () -> assertEquals("cluster-b", Placement.owner(status.get("ranges"), newestLedger),
                        "broker 1's topic " + t1 + " writes its newest ledger " + newestLedger + " on cluster-b"),
                () -> assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(newestLedger),
                        "ledger " + newestLedger + " of " + t1 + " is on cluster-b's bookies"),
                () -> assertTrue(Rest.brokerDoneAt(status, broker1, 1), "status lists broker 1 (" + broker1
                        + ") with appliedEpoch 1 and done: brokers=" + status.get("brokers")),
                () -> assertTrue(relocationApplied, "broker 1's relocation-applied record is re-created"),
                () -> assertNull(violation[0], "cutoverComplete only once every live broker is done"),
                () -> assertTrue(status.get("cutoverComplete").asBoolean(), "cutover complete: " + status),
                () -> traffic.assertExact(0));
    }

    /** The id of broker {@code i}'s ZooKeeper session (its metadata store). */
    private static long zkSession(int i) {
        var store = io.bcswitch.testkit.LineStores.underlying(cluster.broker(i).pulsar().getLocalMetadataStore());
        assertTrue(store instanceof ZKMetadataStore, "setup: a ZooKeeper metadata store: " + store.getClass());
        return ((ZKMetadataStore) store).getZkSessionId();
    }
}
