package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ByteLoad;
import io.bcswitch.it.support.MessageAccount.Ack;
import io.bcswitch.it.support.ByteLoad.Load;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestBookieCluster;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disaster switch when the old bookie cluster (A) is gone entirely: its bookies AND its metadata
 * service (A has a ZooKeeper server of its own; the broker metadata and cluster-b live in the shared
 * one). cluster-b is registered before the disaster. With A fully down the precheck must answer within
 * the probe timeout (source unreachable, target ok), the switch must succeed, schema-less publishing
 * must resume on B without restarting a broker or a client, and a new topic must work. Once A's
 * ZooKeeper and bookies are back, every acknowledged message reads back from earliest exactly once,
 * in order.
 *
 * <p>Producers are schema-less (bytes): a schema stored on A cannot be read while A is down (known
 * limitation, see docs/operations.md).
 */
class DeadMetadataSwitchTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(DeadMetadataSwitchTest.class);
    private static final int TOPICS = 3;
    private static final int RATE = 20; // messages per second per topic
    /**
     * Bounds the wait for A's dead metadata service, and also the probe ledger each precheck writes on B through a
     * new client: at 3 s that probe missed its bound on a loaded 2-core machine and the precheck said no.
     */
    private static final int PROBE_TIMEOUT_SECONDS = 6;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder()
                .bookieClusterWithOwnZooKeeper("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .brokerBookieCluster("cluster-a")
                .brokers(1)
                .brokerConfig(p -> p.setProperty(io.bcswitch.config.ConfigKey.PROBE_TIMEOUT_SECONDS.fullName(),
                        Integer.toString(PROBE_TIMEOUT_SECONDS)))
                .start();
    }

    @Test
    void switchAwayFromClusterWithDeadMetadataServiceLosesNothing() throws Exception {
        long testStart = System.nanoTime();
        try {
            run();
        } finally {
            log.info("DEADMETA total test time (without cluster start-up): {} ms", ByteLoad.ms(System.nanoTime() - testStart));
        }
    }

    private void run() throws Exception {
        TestBookieCluster a = cluster.bookieCluster("cluster-a");
        TestBookieCluster b = cluster.bookieCluster("cluster-b");
        assertTrue(a.hasOwnMetadataService());
        assertFalse(b.hasOwnMetadataService());
        assertThrows(IllegalStateException.class, b::stopMetadataService);
        assertFalse(a.metadataServiceUri().contains(cluster.zkConnectString()), a.metadataServiceUri());
        assertTrue(b.metadataServiceUri().contains(cluster.zkConnectString()), b.metadataServiceUri());
        log.info("DEADMETA cluster-a at {}, cluster-b at {}", a.metadataServiceUri(), b.metadataServiceUri());

        String ns = cluster.createTenant("deadmeta");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());

        // 1. load on cluster-a
        List<Load> loads = ByteLoad.start(client, ns, TOPICS, RATE);
        await().atMost(Duration.ofSeconds(30)).until(() -> loads.stream().allMatch(l -> l.account.acked.size() >= 30));
        await().atMost(Duration.ofSeconds(30)).until(() -> loads.stream().allMatch(l -> l.account.received.size() >= 20));
        for (Load l : loads) {
            List<Long> ids = Placement.ledgers(admin, l.topic);
            assertTrue(a.ledgerIds().containsAll(ids), l.topic + ": ledgers before the disaster on A: " + ids);
        }

        // 2. cluster-b is registered while everything is healthy
        Rest.Response reg = rest.register("cluster-b", b.metadataServiceUri());
        assertEquals(200, reg.status(), reg.raw());

        // 3. the disaster: A's bookies and A's metadata service die, producers keep sending
        long stopped = System.nanoTime();
        a.stopBookies();
        a.stopMetadataService();
        assertFalse(a.isMetadataServiceRunning());
        log.info("DEADMETA cluster-a bookies and ZooKeeper stopped in {} ms; {} sends acknowledged so far",
                ByteLoad.ms(System.nanoTime() - stopped), loads.stream().mapToLong(l -> l.account.acked.size()).sum());
        await().atMost(Duration.ofSeconds(20)).until(() -> loads.stream().allMatch(l -> l.pending() >= RATE));
        log.info("DEADMETA A down for {} ms: pending sends per topic {}, failed {}",
                ByteLoad.ms(System.nanoTime() - stopped), loads.stream().map(Load::pending).toList(),
                loads.stream().map(l -> l.account.failed.size()).toList());

        // 4. precheck: bounded by the probe timeout, target ok, source unreachable
        long t0 = System.nanoTime();
        Rest.Response pre = rest.get("/precheck/cluster-b");
        long precheckMs = ByteLoad.ms(System.nanoTime() - t0);
        log.info("DEADMETA precheck with A's metadata down answered in {} ms (probe timeout {} s): {}", precheckMs,
                PROBE_TIMEOUT_SECONDS, pre.raw());
        assertEquals(200, pre.status(), pre.raw());
        assertTrue(pre.json().get("ok").asBoolean(), pre.raw());
        assertEquals("cluster-a", pre.json().get("source").asText(), pre.raw());
        assertFalse(pre.json().get("sourceReachable").asBoolean(), pre.raw());
        assertTrue(precheckMs < (2L * PROBE_TIMEOUT_SECONDS + 2) * 1000, "precheck took " + precheckMs + " ms");

        // 5. switch
        t0 = System.nanoTime();
        Rest.Response sw = rest.switchTo("cluster-b");
        long switched = System.nanoTime();
        log.info("DEADMETA switch with A fully down answered in {} ms ({} ms after A stopped): {}",
                ByteLoad.ms(switched - t0), ByteLoad.ms(switched - stopped), sw.raw());
        assertEquals(200, sw.status(), sw.raw());
        long firstIdOfB = sw.json().get("directive").get("firstLedgerId").asLong();

        // 6. publishing resumes on B without restarting a broker or a client
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .until(() -> loads.stream().allMatch(l -> l.firstAckAfter(switched) != null));
        long maxResume = 0;
        for (Load l : loads) {
            Ack first = l.firstAckAfter(switched);
            long resumeMs = ByteLoad.ms(first.nanos() - switched);
            maxResume = Math.max(maxResume, resumeMs);
            log.info("DEADMETA {}: first publish acknowledged {} ms after the switch returned (seq {}, ledger {})",
                    l.topic, resumeMs, first.seq(), first.ledgerId());
            assertTrue(first.ledgerId() >= firstIdOfB, l.topic + ": first ack after the switch in ledger "
                    + first.ledgerId() + ", not in B's range from " + firstIdOfB);
        }
        log.info("DEADMETA switch -> first publish on B: max {} ms over {} topics", maxResume, TOPICS);
        Map<Load, Integer> ackedAfterResume = new LinkedHashMap<>();
        loads.forEach(l -> ackedAfterResume.put(l, l.account.acked.size()));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> loads.stream().allMatch(l -> l.account.acked.size() >= ackedAfterResume.get(l) + RATE));

        // 7. a brand-new topic works while A is down
        t0 = System.nanoTime();
        String fresh = "persistent://" + ns + "/fresh";
        try (Consumer<byte[]> c = client.newConsumer(Schema.BYTES).topic(fresh).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
             Producer<byte[]> p = client.newProducer(Schema.BYTES).topic(fresh).enableBatching(false)
                     .sendTimeout(30, TimeUnit.SECONDS).create()) {
            for (int s = 0; s < 20; s++) {
                p.send(ByteLoad.bytes("fresh:" + s));
            }
            for (int s = 0; s < 20; s++) {
                Message<byte[]> m = c.receive(10, TimeUnit.SECONDS);
                assertTrue(m != null && ByteLoad.text(m.getValue()).equals("fresh:" + s), "new topic, message " + s);
                c.acknowledge(m);
            }
        }
        List<Long> freshLedgers = Placement.ledgers(admin, fresh);
        assertFalse(freshLedgers.isEmpty());
        assertTrue(freshLedgers.stream().allMatch(id -> id >= firstIdOfB), "new topic ledgers: " + freshLedgers);
        log.info("DEADMETA new topic works with A down ({} ms, ledgers {})", ByteLoad.ms(System.nanoTime() - t0),
                freshLedgers);

        // 8. stop the load; every send completes; consumers got every ack exactly once, in order
        ByteLoad.Outcome outcome = ByteLoad.stopAndVerify(loads, log, "DEADMETA");
        long failedTotal = outcome.failedSends();
        // A's metadata being dead is no reason for a send to fail: the switch moves every topic off A without one
        assertEquals(0, failedTotal, "send failures");
        Map<String, List<Long>> contents = outcome.received();
        JsonNode status = rest.status();
        log.info("DEADMETA status: {}", status);
        assertEquals("cluster-b", status.get("activeCluster").asText());

        // 9. A comes back (metadata first, then bookies): everything reads back from earliest
        t0 = System.nanoTime();
        a.startMetadataService();
        a.startBookies();
        log.info("DEADMETA cluster-a ZooKeeper and bookies back in {} ms", ByteLoad.ms(System.nanoTime() - t0));
        t0 = System.nanoTime();
        for (Load l : loads) {
            List<Long> expected = contents.get(l.topic);
            List<Long> all = ByteLoad.readAll(client, l.topic);
            assertEquals(expected, all, l.topic + ": read from earliest after A is back");
            assertTrue(all.containsAll(l.account.acked.keySet()), l.topic + ": every acknowledged message readable");
            List<Long> ids = Placement.ledgers(admin, l.topic);
            log.info("DEADMETA {}: {} messages read back; ledgers {} (B's range from {})", l.topic, all.size(), ids,
                    firstIdOfB);
        }
        log.info("DEADMETA everything read from earliest after A came back in {} ms", ByteLoad.ms(System.nanoTime() - t0));
        log.info("DEADMETA SUMMARY: precheck {} ms, switch -> first publish on B max {} ms, {} send failures, {} "
                        + "messages acknowledged and received exactly once", precheckMs, maxResume, failedTotal,
                loads.stream().mapToLong(l -> l.account.acked.size()).sum());
        loads.forEach(Load::close);
    }

}
