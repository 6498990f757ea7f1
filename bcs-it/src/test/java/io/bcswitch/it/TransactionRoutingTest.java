package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.common.naming.SystemTopicNames;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.TenantInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Transactions across a switch: one opened before and committed after it, one aborted across it;
 * the transaction coordinator log and the pending-ack store (managed ledgers) follow the routing.
 */
class TransactionRoutingTest extends ClusterTestBase {

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .brokerConfig(p -> {
                    p.setProperty("transactionCoordinatorEnabled", "true");
                    p.setProperty("transactionPendingAckStoreProviderClassName",
                            "org.apache.pulsar.broker.transaction.pendingack.impl.MLPendingAckStoreProvider");
                })
                .start();
        PulsarAdmin admin = cluster.newAdmin();
        admin.tenants().createTenant("pulsar", TenantInfo.builder().allowedClusters(Set.of("test")).build());
        admin.namespaces().createNamespace("pulsar/system");
        // the admin API refuses system-topic names; brokers' own set-up writes this metadata directly
        cluster.broker(0).pulsar().getPulsarResources().getNamespaceResources().getPartitionedTopicResources()
                .createPartitionedTopic(SystemTopicNames.TRANSACTION_COORDINATOR_ASSIGN,
                        new org.apache.pulsar.common.partition.PartitionedTopicMetadata(1));
    }

    @Test
    void transactionsSpanningASwitchCommitAndAbortCorrectly() throws Exception {
        String ns = cluster.createTenant("txn");
        String topic = "persistent://" + ns + "/orders";
        PulsarAdmin admin = cluster.newAdmin();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        try (PulsarClient client = PulsarClient.builder().serviceUrl(cluster.broker(0).brokerServiceUrl())
                .enableTransaction(true).build()) {
            Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("sub")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
            Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                    .sendTimeout(0, TimeUnit.SECONDS).create();
            producer.send("plain-0");
            Message<String> first = consumer.receive(30, TimeUnit.SECONDS);
            assertEquals("plain-0", first.getValue());

            Transaction committed = client.newTransaction().withTransactionTimeout(5, TimeUnit.MINUTES).build().get();
            Transaction aborted = client.newTransaction().withTransactionTimeout(5, TimeUnit.MINUTES).build().get();
            producer.newMessage(committed).value("commit-before").send();
            producer.newMessage(aborted).value("abort-before").send();
            // the first message is acknowledged inside the transaction that will abort: it must come back
            consumer.acknowledgeAsync(first.getMessageId(), aborted).get();

            rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());

            producer.newMessage(committed).value("commit-after").send();
            producer.newMessage(aborted).value("abort-after").send();
            committed.commit().get();
            aborted.abort().get();
            producer.send("plain-1");

            // uncommitted and aborted messages are never delivered; the aborted ack is undone
            Set<String> received = new HashSet<>();
            Message<String> m;
            while ((m = consumer.receive(5, TimeUnit.SECONDS)) != null) {
                received.add(m.getValue());
                consumer.acknowledge(m);
            }
            assertEquals(Set.of("plain-0", "commit-before", "commit-after", "plain-1"), received);
            assertNull(consumer.receive(1, TimeUnit.SECONDS));
            producer.close();
            consumer.close();
        }

        // the coordinator's log and the topic's pending-ack store are managed ledgers (not topics): they
        // follow the routing; their ledger lists are read from the managed-ledger metadata
        JsonNode status = rest.status();
        var factory = cluster.broker(0).pulsar().getDefaultManagedLedgerFactory();
        String tcLog = "pulsar/system/persistent/__transaction_log_0";
        String pendingAck = TopicName.get(topic).getPersistenceNamingEncoding() + "-sub__transaction_pending_ack";
        for (String ml : List.of(tcLog, pendingAck)) {
            List<Long> ids = new ArrayList<>();
            for (var l : factory.getManagedLedgerInfo(ml).ledgers) {
                ids.add(l.ledgerId);
            }
            ids.sort(null); // the stored list is not kept in id order
            assertTrue(!ids.isEmpty(), ml + " has ledgers");
            assertEquals("cluster-b", Placement.owner(status.get("ranges"), ids.get(ids.size() - 1)),
                    ml + ": newest ledger on the active cluster " + ids);
            for (long id : ids) {
                String owner = Placement.owner(status.get("ranges"), id);
                assertTrue(cluster.bookieCluster(owner).ledgerIds().contains(id), ml + ": ledger " + id + " on "
                        + owner);
            }
        }
        Placement.assertPlacement(cluster, admin, status, List.of(topic));
    }
}
