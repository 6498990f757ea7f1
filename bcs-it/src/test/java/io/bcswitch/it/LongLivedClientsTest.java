package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.LifeChecks;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Sequences;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fifty switches back and forth on one broker under traffic: the BookKeeper clients each switch replaces are closed
 * once nothing is open through them, so the threads, the BookKeeper client threads and the metadata sessions the
 * broker holds, and the ZooKeeper watches, after the fiftieth switch are those it held after the tenth (they grew by a client per pool and switch
 * for good before), and every message arrives, in order.
 */
class LongLivedClientsTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(LongLivedClientsTest.class);
    private static final int SWITCHES = 50;
    private static final int MEASURED_AFTER = 10;
    /** Threads and sessions may differ a little between two moments (Pulsar's and BookKeeper's own pools). */
    private static final int THREAD_SLACK = 30;
    private static final int CLIENT_THREAD_SLACK = 8;
    private static final int SESSION_SLACK = 2;
    /** ZooKeeper watches: each leaked client or store would add its own (a few per switch, 40 switches measured). */
    private static final int WATCH_SLACK = 40;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().bookieCluster("cluster-a", 1).bookieCluster("cluster-b", 1).brokers(1).start();
    }

    @Test
    void fiftySwitchesLeaveTheBrokerWithTheResourcesOfTen() throws Exception {
        String ns = cluster.createTenant("lived");
        PulsarClient client = cluster.newClient();
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            topics.add("persistent://" + ns + "/t" + i);
        }
        List<Consumer<String>> consumers = new ArrayList<>();
        for (String t : topics) {
            consumers.add(client.newConsumer(Schema.STRING).topic(t).subscriptionName("s")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe());
        }
        List<Producer<String>> producers = Sequences.producers(client, topics);
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        assertEquals(200, rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri())
                .status());
        LifeChecks life = new LifeChecks(cluster);
        LifeChecks.Gauges measured = null;
        long seq = 0;
        for (int i = 1; i <= SWITCHES; i++) {
            seq = Sequences.produce(producers, seq, 5);
            Rest.Response sw = rest.switchTo(i % 2 == 1 ? "cluster-b" : "cluster-a");
            assertEquals(200, sw.status(), "switch " + i + ": " + sw.raw());
            rest.awaitCutoverComplete();
            if (i == MEASURED_AFTER) {
                measured = settledGauges(life);
                log.info("after {} switches: {}; threads {}", i, measured, LifeChecks.threadNames());
            }
        }
        seq = Sequences.produce(producers, seq, 5);
        LifeChecks.Gauges last = settledGauges(life);
        log.info("after {} switches: {}; threads {}", SWITCHES, last, LifeChecks.threadNames());
        for (int i = 0; i < topics.size(); i++) {
            // the topic itself holds exactly what was sent, from its start; its subscription received each once, in
            // order
            MessageAccount.assertSequence(MessageAccount.readToEnd(client, topics.get(i)), seq, topics.get(i));
            List<Long> got = MessageAccount.drain(consumers.get(i), 15).stream().map(MessageAccount::seq).toList();
            if (got.size() != seq) {
                try (var admin = cluster.newAdmin()) {
                    log.info("{} subscription s: {}; internal: {}", topics.get(i), new com.fasterxml.jackson
                            .databind.ObjectMapper().writeValueAsString(admin.topics().getStats(topics.get(i))
                            .getSubscriptions().get("s")), new com.fasterxml.jackson.databind.ObjectMapper()
                            .writeValueAsString(admin.topics().getInternalStats(topics.get(i)).cursors.get("s")));
                }
            }
            MessageAccount.assertSequence(got, seq, topics.get(i) + " received");
        }
        assertTrue(last.threads() <= measured.threads() + THREAD_SLACK, last + " against " + measured);
        assertTrue(last.clientThreads() <= measured.clientThreads() + CLIENT_THREAD_SLACK, last + " against "
                + measured);
        assertTrue(last.sessions() <= measured.sessions() + SESSION_SLACK, last + " against " + measured);
        assertTrue(last.watches() <= measured.watches() + WATCH_SLACK, last + " against " + measured);

        for (Producer<String> p : producers) {
            p.close();
        }
    }

    /**
     * The gauges once the clients replaced within the last grace (30 s) had the time to be closed (the broker closes
     * them every few seconds): read after that, when two readings 2 s apart agree, at most 60 s later.
     */
    private static LifeChecks.Gauges settledGauges(LifeChecks life) {
        LifeChecks.Gauges[] now = {life.read()};
        Awaitility.await().pollDelay(Duration.ofSeconds(36)).pollInterval(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(96)).until(() -> {
                    LifeChecks.Gauges g = life.read();
                    boolean stable = g.clientThreads() == now[0].clientThreads() && g.sessions() == now[0].sessions();
                    now[0] = g;
                    return stable;
                });
        return now[0];
    }
}
