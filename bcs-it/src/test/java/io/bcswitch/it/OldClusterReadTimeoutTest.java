package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.LogCapture;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestBookie;
import io.bcswitch.testkit.TestBookieCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PIP-477's {@code oldLedgerReadTimeoutMs} and the start-up notices, configured in broker.conf as an operator
 * would: after a switch, a read of a ledger on the old cluster whose bookies hang (registered, connected, not
 * answering) fails after that bound, with a warning naming the cluster and ledger, while BookKeeper's own timeout
 * (set far longer here) would keep it waiting; once the bookies answer again the reader gets everything. The
 * broker also says at start which keys it accepted and ignores (a PIP key that does not apply, a misspelt key).
 */
class OldClusterReadTimeoutTest extends ClusterTestBase {
    private static final long READ_TIMEOUT_MS = 1_000;
    private static final String MISSPELT_KEY = io.bcswitch.config.SwitchConfig.PREFIX + "oldLedgerReadTimoutMs";
    private static LogCapture brokerLog;
    private static List<String> startUpNotices;

    @BeforeAll
    static void start() throws Exception {
        // installed before the broker starts: its start-up notices are what is checked
        brokerLog = LogCapture.install();
        cluster = twoBookieClusters().brokerConfig(p -> {
            p.setProperty(ConfigKey.OLD_LEDGER_READ_TIMEOUT_MS.fullName(), Long.toString(READ_TIMEOUT_MS));
            p.setProperty(ConfigKey.SKIP_IDGEN_PRECHECK.fullName(), "true");
            p.setProperty(MISSPELT_KEY, "1");
            // BookKeeper's own read timeout far beyond the test: only the plugin's bound can end a hung read
            p.setProperty("bookkeeperClientTimeoutInSeconds", "600");
            // the dispatcher retries a failed read soon, so the reader resumes once the bookies answer
            p.setProperty("dispatcherReadFailureBackoffInitialTimeInMs", "200");
            p.setProperty("dispatcherReadFailureBackoffMaxTimeInMs", "1000");
        }).start();
        startUpNotices = brokerLog.matching(List.of("broker.conf: "));
    }

    @AfterAll
    static void removeCapture() {
        if (brokerLog != null) {
            brokerLog.remove();
        }
    }

    @Test
    void startUpNamesIgnoredKeys() {
        List<String> notices = startUpNotices;
        assertTrue(notices.stream().anyMatch(l -> l.contains(ConfigKey.SKIP_IDGEN_PRECHECK.fullName()
                + " is set but does nothing")), "the PIP key that does not apply is named: " + notices);
        assertTrue(notices.stream().anyMatch(l -> l.contains(MISSPELT_KEY + " is not a key of this plugin")),
                "the misspelt key is named: " + notices);
        assertFalse(notices.stream().anyMatch(l -> l.contains(ConfigKey.OLD_LEDGER_READ_TIMEOUT_MS.fullName())),
                "a key the plugin reads is not reported: " + notices);
    }

    @Test
    void readsOfAHungOldClusterFailAfterTheBoundAndResumeWhenItAnswers() throws Exception {
        String ns = cluster.createTenant("readtimeout");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String topic = "persistent://" + ns + "/t";
        List<String> sent = new ArrayList<>();
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create()) {
            for (int i = 0; i < 20; i++) {
                String v = "a-" + i;
                p.send(v);
                sent.add(v);
            }
            rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
            rest.awaitCutoverComplete();
            for (int i = 0; i < 20; i++) {
                String v = "b-" + i;
                p.send(v);
                sent.add(v);
            }
        }
        rest.awaitMigrationFinished();
        JsonNode ranges = rest.status().get("ranges");
        List<Long> onA = Placement.ledgers(admin, topic).stream()
                .filter(id -> "cluster-a".equals(Placement.owner(ranges, id))).toList();
        assertFalse(onA.isEmpty(), "the topic's first ledgers are on cluster-a");
        // a fresh load of the topic: nothing of cluster-a's ledgers is in the broker's entry cache
        admin.topics().unload(topic);

        TestBookieCluster a = cluster.bookieCluster("cluster-a");
        brokerLog.clear();
        a.bookies().forEach(TestBookie::suspend);
        List<String> received = new ArrayList<>();
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            String bounded = "read took longer than " + READ_TIMEOUT_MS + " ms";
            await("a bounded read of a cluster-a ledger").atMost(Duration.ofSeconds(60)).until(() ->
                    brokerLog.matching(List.of(bounded)).stream().anyMatch(l -> l.contains("bookie-cluster=cluster-a")
                            && onA.stream().anyMatch(id -> l.contains("ledger=" + id + " "))));
            assertNull(reader.readNext(1, TimeUnit.SECONDS), "nothing is readable while cluster-a hangs");
            a.bookies().forEach(TestBookie::resume);
            // read to the end of the topic, not to an expected count
            while (reader.hasMessageAvailable()) {
                Message<String> m = reader.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                received.add(m.getValue());
            }
        } finally {
            a.bookies().forEach(TestBookie::resume);
        }
        assertEquals(sent, received, "every message, once, in order, after cluster-a answers again");
    }
}
