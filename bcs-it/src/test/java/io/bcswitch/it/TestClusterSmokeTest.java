package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.testkit.Ports;
import io.bcswitch.testkit.TestBookieCluster;
import io.bcswitch.testkit.TestCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerEntry;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The fixture itself: stock broker (plugin off), two bookie clusters, one broker. */
class TestClusterSmokeTest {

    private static final Logger LOG = LoggerFactory.getLogger(TestClusterSmokeTest.class);
    private static final int MESSAGES = 100;

    private static TestCluster cluster;
    private static Set<Thread> threadsBefore;

    @BeforeAll
    static void startCluster() throws Exception {
        threadsBefore = nonDaemonThreads();
        long start = System.nanoTime();
        cluster = TestCluster.builder()
                .bookieCluster("cluster-a", 2)
                .bookieCluster("cluster-b", 2)
                .brokers(1)
                .plugin(false)
                .start();
        LOG.info("Fixture start took {} ms", elapsedMs(start));
    }

    @AfterAll
    static void closeCluster() {
        if (cluster == null) {
            return;
        }
        long start = System.nanoTime();
        cluster.close();
        LOG.info("Fixture close took {} ms", elapsedMs(start));
        // Netty event loops finish their quiet period after close() returns: give them a moment.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            Set<Thread> leaked = nonDaemonThreads();
            leaked.removeAll(threadsBefore);
            assertTrue(leaked.isEmpty(), () -> "non-daemon threads left after close: " + leaked.stream()
                    .map(Thread::getName).sorted().collect(Collectors.toList()));
        });
        assertFalse(cluster.workDir().toFile().exists(), "temp directory not deleted: " + cluster.workDir());
    }

    @Test
    void produceConsumeRestartAndBounceBookies() throws Exception {
        String namespace = cluster.createTenant("smoke");
        String topic = "persistent://" + namespace + "/topic-1";
        PulsarAdmin admin = cluster.newAdmin();
        // Keep everything so that the topic can be re-read from the start after the restarts.
        admin.namespaces().setRetention(namespace, new RetentionPolicies(-1, -1));

        try (PulsarClient client = cluster.newClient();
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create();
             Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic)
                     .subscriptionName("sub")
                     .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                     .subscribe()) {
            for (int i = 0; i < MESSAGES; i++) {
                producer.send("msg-" + i);
            }
            for (int i = 0; i < MESSAGES; i++) {
                Message<String> msg = consumer.receive(30, TimeUnit.SECONDS);
                assertNotNull(msg, "message " + i + " not received");
                assertEquals("msg-" + i, msg.getValue());
                consumer.acknowledge(msg);
            }
        }

        List<Long> topicLedgers = admin.topics().getInternalStats(topic).ledgers.stream()
                .map(l -> l.ledgerId).collect(Collectors.toList());
        assertFalse(topicLedgers.isEmpty(), "topic has no ledgers");
        Set<Long> onA = cluster.bookieCluster("cluster-a").ledgerIds();
        Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
        LOG.info("Topic ledgers {}; cluster-a has {}, cluster-b has {}", topicLedgers, onA, onB);
        assertTrue(onA.containsAll(topicLedgers), "topic ledgers " + topicLedgers + " not all on cluster-a " + onA);
        for (Long id : topicLedgers) {
            assertFalse(onB.contains(id), "ledger " + id + " unexpectedly on cluster-b " + onB);
        }

        long restartStart = System.nanoTime();
        cluster.broker(0).restart();
        LOG.info("Broker restart took {} ms", elapsedMs(restartStart));
        assertEquals(expectedMessages(), readAll(topic, MESSAGES));

        // a stopped bookie comes back on its port (its address is its identity): while it is down, no outgoing
        // connection of any process may be given that port, so none of the fixture's listeners is in the kernel's
        // range for outgoing connections
        List<String> listeners = new ArrayList<>(List.of(cluster.zkConnectString(),
                cluster.broker(0).brokerServiceUrl(), cluster.broker(0).webServiceUrl()));
        for (String name : List.of("cluster-a", "cluster-b")) {
            cluster.bookieCluster(name).bookies().forEach(b -> listeners.add("bookie:" + b.port()));
        }
        for (String listener : listeners) {
            int port = Integer.parseInt(listener.substring(listener.lastIndexOf(':') + 1));
            assertTrue(port < Ports.ephemeralLow(), listener + " is in the range the kernel gives outgoing "
                    + "connections (from " + Ports.ephemeralLow() + ")");
        }

        long bounceStart = System.nanoTime();
        TestBookieCluster clusterA = cluster.bookieCluster("cluster-a");
        clusterA.stopBookies();
        clusterA.startBookies();
        LOG.info("Bookie stop/start of cluster-a took {} ms", elapsedMs(bounceStart));

        try (PulsarClient client = cluster.newClient();
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic)
                     .sendTimeout(10, TimeUnit.SECONDS)
                     .create()) {
            long publishStart = System.nanoTime();
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> {
                try {
                    producer.send("after-bounce");
                    return true;
                } catch (Exception e) {
                    LOG.info("Publish after bookie bounce not yet possible: {}", e.toString());
                    return false;
                }
            });
            LOG.info("First publish after bookie bounce took {} ms", elapsedMs(publishStart));
        }
        List<String> all = readAll(topic, MESSAGES + 1);
        assertEquals(expectedMessages(), all.subList(0, MESSAGES));
        assertEquals("after-bounce", all.get(MESSAGES));
    }

    @Test
    void bookKeeperClientUsesHierarchicalUriOfEachCluster() throws Exception {
        TestBookieCluster clusterB = cluster.bookieCluster("cluster-b");
        assertEquals("zk+hierarchical://" + cluster.zkConnectString() + "/bk/cluster-b/ledgers",
                clusterB.metadataServiceUri());
        assertEquals(2, clusterB.bookieCount());

        byte[] password = "pw".getBytes(StandardCharsets.UTF_8);
        long ledgerId;
        try (BookKeeper bk = BookKeeper.forConfig(clusterB.clientConfiguration()).build()) {
            LedgerHandle lh = bk.createLedger(2, 2, 2, BookKeeper.DigestType.CRC32C, password);
            ledgerId = lh.getId();
            lh.addEntry("hello".getBytes(StandardCharsets.UTF_8));
            lh.close();
            try (LedgerHandle read = bk.openLedger(ledgerId, BookKeeper.DigestType.CRC32C, password)) {
                LedgerEntry entry = read.readEntries(0, 0).nextElement();
                assertEquals("hello", new String(entry.getEntry(), StandardCharsets.UTF_8));
            }
            assertTrue(clusterB.ledgerIds().contains(ledgerId), "ledger not listed on cluster-b");
            assertFalse(cluster.bookieCluster("cluster-a").ledgerIds().contains(ledgerId),
                    "cluster-b ledger listed on cluster-a");
            bk.deleteLedger(ledgerId);
        }
        assertFalse(clusterB.ledgerIds().contains(ledgerId), "deleted ledger still listed");

        try (ZooKeeper zk = connect(cluster.zkConnectString())) {
            String layout = new String(zk.getData(clusterB.ledgersRoot() + "/LAYOUT", false, null),
                    StandardCharsets.UTF_8);
            assertTrue(layout.contains("org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory"),
                    "unexpected layout: " + layout);
            assertEquals(2, zk.getChildren(clusterB.ledgersRoot() + "/available", false).stream()
                    .filter(c -> !c.equals("readonly")).count());
        }
    }

    private static List<String> readAll(String topic, int count) throws Exception {
        List<String> values = new ArrayList<>();
        try (PulsarClient client = cluster.newClient();
             Reader<String> reader = client.newReader(Schema.STRING).topic(topic)
                     .startMessageId(MessageId.earliest).create()) {
            while (values.size() < count) {
                Message<String> msg = reader.readNext(30, TimeUnit.SECONDS);
                assertNotNull(msg, "only " + values.size() + " of " + count + " messages read back");
                values.add(msg.getValue());
            }
        }
        return values;
    }

    private static List<String> expectedMessages() {
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            expected.add("msg-" + i);
        }
        return expected;
    }

    private static ZooKeeper connect(String connectString) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connectString, 30_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        assertTrue(connected.await(30, TimeUnit.SECONDS), "ZooKeeper connect timed out");
        return zk;
    }

    /** Live non-daemon threads, except Awaitility's own poller. */
    private static Set<Thread> nonDaemonThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !t.isDaemon() && !t.getName().startsWith("awaitility"))
                .collect(Collectors.toSet());
    }

    private static long elapsedMs(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
