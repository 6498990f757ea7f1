package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.MessageAccount;
import io.bcswitch.it.support.Traffic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Acceptance 1: switch A -> B while 10 topics produce and consume; nothing lost, ledgers where they belong. */
class SwitchUnderLoadTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .start();
    }

    @Test
    void switchMidStreamLosesNothingAndMovesNewLedgersToB() throws Exception {
        String ns = cluster.createTenant("load");
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            topics.add("persistent://" + ns + "/t" + i);
        }
        PulsarClient client = cluster.newClient();
        PulsarAdmin admin = cluster.newAdmin();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        // keep acknowledged data, so that A's ledgers stay and "read from earliest" covers the switch
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));

        Traffic traffic = new Traffic(client, topics, "sub", 50);
        await().atMost(Duration.ofSeconds(30)).until(() -> traffic.counts().stream().allMatch(c -> c.acked.size() > 20));

        Rest.Response reg = rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        assertEquals(200, reg.status(), reg.raw());
        Rest.Response sw = rest.switchTo("cluster-b");
        assertEquals(200, sw.status(), sw.raw());
        long firstIdOfB = sw.json().get("directive").get("firstLedgerId").asLong();
        assertTrue(firstIdOfB > 0);

        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> rest.status().get("cutoverComplete").asBoolean());
        JsonNode status = rest.status();
        assertEquals("cluster-b", status.get("activeCluster").asText());
        assertEquals(1, status.get("epoch").asLong());
        JsonNode broker = status.get("brokers").get(0);
        // the 10 topics plus any system topic the broker keeps open (e.g. namespace events)
        assertTrue(broker.get("topicsTotal").asInt() >= 10, status.toString());
        assertEquals(broker.get("topicsTotal").asInt(), broker.get("topicsMoved").asInt(), status.toString());
        assertEquals(0, broker.get("topicsFailed").asInt(), status.toString());

        // keep producing on B for a while, then stop and drain
        traffic.sendMoreThenStopAndAssertExact(200);

        // the subscriptions' position ledgers were rolled over too: each now writes to a ledger on B
        for (String topic : topics) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                long cursorLedger = admin.topics().getInternalStats(topic).cursors.get("sub").cursorLedger;
                assertTrue(cursorLedger >= firstIdOfB, topic + ": cursor ledger " + cursorLedger + " not in B's range");
                assertTrue(cluster.bookieCluster("cluster-b").ledgerIds().contains(cursorLedger));
            });
        }

        Set<Long> onA = cluster.bookieCluster("cluster-a").ledgerIds();
        Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
        for (String topic : topics) {
            List<LedgerInfo> ledgers = admin.topics().getInternalStats(topic).ledgers;
            assertFalse(ledgers.isEmpty());
            long newest = ledgers.get(ledgers.size() - 1).ledgerId;
            assertTrue(newest >= firstIdOfB, topic + ": newest ledger " + newest + " not in B's range");
            assertTrue(onB.contains(newest) && !onA.contains(newest), topic + ": newest ledger " + newest
                    + " must exist on B only");
            long previous = -1;
            for (LedgerInfo l : ledgers) {
                assertTrue(l.ledgerId > previous, topic + ": ledger ids must increase");
                previous = l.ledgerId;
                if (l.ledgerId < firstIdOfB) {
                    assertTrue(onA.contains(l.ledgerId) && !onB.contains(l.ledgerId),
                            topic + ": pre-switch ledger " + l.ledgerId + " must exist on A only");
                } else {
                    assertTrue(onB.contains(l.ledgerId) && !onA.contains(l.ledgerId),
                            topic + ": post-switch ledger " + l.ledgerId + " must exist on B only");
                }
            }
            assertTrue(ledgers.get(0).ledgerId < firstIdOfB, topic + ": expected data written before the switch");
            MessageAccount c = traffic.counts().get(topics.indexOf(topic));
            MessageAccount.assertSequence(Traffic.readAll(client, topic), c.acked.size(),
                    topic + ": read from earliest");
        }
    }
}
