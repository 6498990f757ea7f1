package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.support.ByteLoad;
import io.bcswitch.it.support.MessageAccount.Ack;
import io.bcswitch.it.support.ByteLoad.Load;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.LogCapture;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disaster switch of PIP-477: every bookie of the active cluster (A) dies while producers keep
 * sending; the operator registers, prechecks and switches to B while A is down. Publishing must resume
 * on B without restarting a broker or a client, nothing acknowledged may be lost or duplicated, new
 * topics and subscriptions must work, reads of data that lives only on A must fail (not return wrong
 * data) while A is down and return everything once A's bookies are back.
 *
 * <p>A topic with a schema whose schema ledger is on A: Pulsar reads the stored schema from its ledger
 * each time a client with a schema connects, and producers reconnect after a failed write. The broker
 * that served that schema before keeps its payload, so a producer with that schema must reconnect and
 * publish while A is down.
 */
class DisasterSwitchTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(DisasterSwitchTest.class);
    private static final int TOPICS = 3;
    private static final int RATE = 20; // messages per second per topic

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .start();
    }

    @Test
    void switchAwayFromDeadClusterResumesPublishingAndLosesNothing() throws Exception {
        long testStart = System.nanoTime();
        LogCapture brokerLog = LogCapture.install();
        try {
            run(brokerLog);
        } finally {
            brokerLog.remove();
            log.info("DISASTER total test time (without cluster start-up): {} ms", ByteLoad.ms(System.nanoTime() - testStart));
        }
    }

    private void run(LogCapture brokerLog) throws Exception {
        String ns = cluster.createTenant("disaster");
        PulsarAdmin admin = cluster.newAdmin();
        // keep acknowledged data, so that A's ledgers stay and "read from earliest" covers the switch
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());

        // 1. producers and consumers on cluster-a
        List<Load> loads = ByteLoad.start(client, ns, TOPICS, RATE);
        // a topic with a schema (STRING): its schema ledger is written to A, like its data
        String typed = "persistent://" + ns + "/typed";
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(typed).enableBatching(false).create()) {
            for (int s = 0; s < 5; s++) {
                p.send("typed:" + s);
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> loads.stream().allMatch(l -> l.account.acked.size() >= 30));
        await().atMost(Duration.ofSeconds(30)).until(() -> loads.stream().allMatch(l -> l.account.received.size() >= 20));
        Map<String, List<Long>> ledgersOnA = new LinkedHashMap<>();
        for (Load l : loads) {
            ledgersOnA.put(l.topic, Placement.ledgers(admin, l.topic));
        }
        Set<Long> onABefore = cluster.bookieCluster("cluster-a").ledgerIds();
        for (List<Long> ids : ledgersOnA.values()) {
            assertTrue(onABefore.containsAll(ids), "data ledgers before the disaster are on A: " + ids);
        }

        // 2. every bookie of cluster-a dies while the producers keep sending
        long stopped = System.nanoTime();
        cluster.bookieCluster("cluster-a").stopBookies();
        long ackedAtStop = loads.stream().mapToLong(l -> l.account.acked.size()).sum();
        log.info("DISASTER all bookies of cluster-a stopped in {} ms; {} sends acknowledged so far",
                ByteLoad.ms(System.nanoTime() - stopped), ackedAtStop);
        // sends stall: wait until each producer has at least a second's worth of unacknowledged sends
        await().atMost(Duration.ofSeconds(20)).until(() -> loads.stream().allMatch(l -> l.pending() >= RATE));
        long lastAckBeforeSwitch = loads.stream().mapToLong(l -> l.account.lastAckNanos()).max().orElse(0);
        log.info("DISASTER A down for {} ms: pending sends per topic {}, failed {}, last ack {} ms after stop began",
                ByteLoad.ms(System.nanoTime() - stopped), loads.stream().map(Load::pending).toList(),
                loads.stream().map(l -> l.account.failed.size()).toList(), ByteLoad.ms(lastAckBeforeSwitch - stopped));

        // cluster-b is registered now, with A down: registration needs only B's metadata
        Rest.Response reg = rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        assertEquals(200, reg.status(), reg.raw());
        long t0 = System.nanoTime();
        Rest.Response pre = rest.get("/precheck/cluster-b");
        long precheckMs = ByteLoad.ms(System.nanoTime() - t0);
        assertEquals(200, pre.status(), pre.raw());
        assertTrue(pre.json().get("ok").asBoolean(), pre.raw());
        assertEquals("cluster-a", pre.json().get("source").asText(), pre.raw());
        log.info("DISASTER precheck with A down answered in {} ms: {}", precheckMs, pre.raw());
        // A's metadata service still answers: the precheck reads that no bookie of A is writable
        assertTrue(pre.json().get("sourceFacts").hasNonNull("writableBookies"), pre.raw());
        assertEquals(0, pre.json().get("sourceFacts").get("writableBookies").asInt(), pre.raw());

        t0 = System.nanoTime();
        Rest.Response sw = rest.switchTo("cluster-b");
        long switched = System.nanoTime();
        assertEquals(200, sw.status(), sw.raw());
        long firstIdOfB = sw.json().get("directive").get("firstLedgerId").asLong();
        log.info("DISASTER switch with A down answered in {} ms ({} ms after the bookies stopped): {}",
                ByteLoad.ms(switched - t0), ByteLoad.ms(switched - stopped), sw.raw());

        // 3. publishing resumes on B, without restarting a broker or a client
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .until(() -> loads.stream().allMatch(l -> l.firstAckAfter(switched) != null));
        long maxResume = 0;
        for (Load l : loads) {
            Ack first = l.firstAckAfter(switched);
            long resumeMs = ByteLoad.ms(first.nanos() - switched);
            maxResume = Math.max(maxResume, resumeMs);
            log.info("DISASTER {}: first publish acknowledged {} ms after the switch returned (seq {}, ledger {})",
                    l.topic, resumeMs, first.seq(), first.ledgerId());
            assertTrue(first.ledgerId() >= firstIdOfB, l.topic + ": first publish after the switch went to ledger "
                    + first.ledgerId() + ", not in B's range starting at " + firstIdOfB);
        }
        long outage = loads.stream().mapToLong(l -> l.firstAckAfter(switched).nanos() - stopped).max().orElse(0);
        log.info("DISASTER switch -> first publish on B: max {} ms over {} topics; bookies stopped -> first publish "
                + "on B: max {} ms (operator's register + precheck + switch included)", maxResume, TOPICS, ByteLoad.ms(outage));
        // the load keeps running on B for a while
        Map<Load, Integer> ackedAfterResume = new LinkedHashMap<>();
        loads.forEach(l -> ackedAfterResume.put(l, l.account.acked.size()));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> loads.stream().allMatch(l -> l.account.acked.size() >= ackedAfterResume.get(l) + 2 * RATE));

        // 5. while A is down: a brand-new topic, and a new subscription (at latest) on an existing topic
        String fresh = "persistent://" + ns + "/fresh";
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(fresh).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
             Producer<String> p = client.newProducer(Schema.STRING).topic(fresh).producerName("fresh")
                     .enableBatching(false).sendTimeout(30, TimeUnit.SECONDS).create()) {
            for (int s = 0; s < 20; s++) {
                p.send("fresh:" + s);
            }
            for (int s = 0; s < 20; s++) {
                Message<String> m = c.receive(10, TimeUnit.SECONDS);
                assertTrue(m != null && m.getValue().equals("fresh:" + s), "new topic, message " + s + ": " + m);
                c.acknowledge(m);
            }
        }
        List<Long> freshLedgers = Placement.ledgers(admin, fresh);
        assertFalse(freshLedgers.isEmpty());
        assertTrue(freshLedgers.stream().allMatch(id -> id >= firstIdOfB), "new topic ledgers in B's range: "
                + freshLedgers);
        Load first = loads.get(0);
        try (Consumer<byte[]> late = client.newConsumer(Schema.BYTES).topic(first.topic).subscriptionName("late")
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Latest).subscribe()) {
            long acked = first.account.acked.isEmpty() ? -1 : first.account.acked.lastKey();
            long previous = -1;
            for (int i = 0; i < 10; i++) {
                Message<byte[]> m = late.receive(10, TimeUnit.SECONDS);
                assertTrue(m != null, "new subscription at latest on " + first.topic + ": message " + i);
                long seq = ByteLoad.seq(ByteLoad.text(m.getValue()));
                assertTrue(seq > previous, "new subscription: in order");
                assertTrue(seq >= acked - 2 * RATE, "new subscription starts near the end, got " + seq);
                previous = seq;
                late.acknowledge(m);
            }
        }
        log.info("DISASTER new topic and new subscription work with A down (new topic ledgers {})", freshLedgers);
        // a producer with a schema on a topic whose schema ledger is on A: the broker read that schema before
        // A died and answers from its copy
        brokerLog.clear();
        try (PulsarClient shortTimeout = PulsarClient.builder().serviceUrl(cluster.broker(0).brokerServiceUrl())
                .operationTimeout(10, TimeUnit.SECONDS).build();
             Producer<String> p = shortTimeout.newProducer(Schema.STRING).topic(typed).enableBatching(false)
                     .sendTimeout(30, TimeUnit.SECONDS).create()) {
            MessageId id = p.send("typed:while-down");
            log.info("DISASTER producer with a schema on a pre-disaster topic connected and sent with A down: {}", id);
        }
        List<String> fromCopy = brokerLog.matching(List.of(LogCapture.SCHEMA_FALLBACK));
        log.info("DISASTER schema reads answered from the broker's copy: {}", fromCopy);
        assertFalse(fromCopy.isEmpty(), "the typed producer's schema came from the broker's copy");

        // stop the load, wait for every send to complete, and check what the consumers got
        ByteLoad.Outcome outcome = ByteLoad.stopAndVerify(loads, log, "DISASTER");
        long failedTotal = outcome.failedSends();
        // what may fail is bounded: only sends issued while A was down and before publishing resumed on B
        for (Load l : loads) {
            long resumedAt = l.firstAckAfter(switched).seq();
            assertEquals(Map.of(), l.account.failed.tailMap(resumedAt), l.topic + ": a send issued after publishing resumed "
                    + "on B (seq " + resumedAt + ") failed");
        }
        Map<String, List<Long>> contents = outcome.received();

        // 4. new data ledgers are on B; A's data cannot be read while A is down
        JsonNode status = rest.status();
        log.info("DISASTER status: {}", status);
        assertEquals("cluster-b", status.get("activeCluster").asText());
        Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
        // A's metadata service still answers. A ledger of A's id range may be newer than the list taken before the
        // disaster: while A's bookies were being stopped one by one, a topic whose write failed rolled over to a new
        // ledger on the bookies still up (Pulsar 5.0 does so at once).
        Set<Long> onANow = cluster.bookieCluster("cluster-a").ledgerIds();
        for (Load l : loads) {
            List<Long> ids = Placement.ledgers(admin, l.topic);
            long newest = ids.get(ids.size() - 1);
            assertTrue(newest >= firstIdOfB && onB.contains(newest), l.topic + ": newest ledger " + newest
                    + " must be on B; B has " + onB);
            for (long id : ids) {
                assertTrue(id >= firstIdOfB ? onB.contains(id) : onANow.contains(id), l.topic + ": ledger " + id);
            }
            log.info("DISASTER {}: ledgers {} (B's range starts at {})", l.topic, ids, firstIdOfB);
        }
        brokerLog.clear();
        List<Reader<byte[]>> readers = new ArrayList<>();
        List<CompletableFuture<Message<byte[]>>> reads = new ArrayList<>();
        for (Load l : loads) {
            Reader<byte[]> r = client.newReader(Schema.BYTES).topic(l.topic).startMessageId(MessageId.earliest)
                    .create();
            readers.add(r);
            reads.add(r.readNextAsync());
        }
        long readDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (int i = 0; i < TOPICS; i++) {
            Message<byte[]> m = null;
            String error = null;
            try {
                m = reads.get(i).get(Math.max(1, readDeadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                error = "no message within 5 s";
            } catch (java.util.concurrent.ExecutionException e) {
                error = e.getCause().toString();
            }
            assertNull(m, loads.get(i).topic + ": read from earliest returned "
                    + (m == null ? null : ByteLoad.text(m.getValue())) + " although A's bookies are down");
            log.info("DISASTER {}: reader from earliest with A down: {}", loads.get(i).topic, error);
        }
        // the broker's read errors name the position (ledger:entry) of A's first ledger of each topic; the
        // range table says which bookie cluster that ledger is on
        for (Load l : loads) {
            long oldest = ledgersOnA.get(l.topic).get(0);
            assertEquals("cluster-a", Placement.owner(status.get("ranges"), oldest));
            // 4.x: "Error reading entries at 2:0 ..."; 5.0: "Error reading entries - Retrying to read" with the
            // position in the readPosition attribute
            java.util.regex.Pattern atOldest = java.util.regex.Pattern.compile(
                    "Error reading entries.*(\\bat |readPosition=)" + oldest + ":");
            List<String> lines = brokerLog.matching(List.of("Error reading entries")).stream()
                    .filter(x -> atOldest.matcher(x).find()).toList();
            assertFalse(lines.isEmpty(), l.topic + ": no broker read error names ledger " + oldest);
            log.info("DISASTER {}: broker read error for ledger {} (range-table owner cluster-a): {}", l.topic,
                    oldest, lines.get(0));
            // and the plugin's own line names the cluster as well as the ledger
            List<String> named = brokerLog.matching(List.of("bookie-cluster=cluster-a ledger=" + oldest + " read"));
            assertFalse(named.isEmpty(), l.topic + ": no read error names cluster-a and ledger " + oldest);
            log.info("DISASTER {}: {}", l.topic, named.get(0));
        }
        for (Reader<byte[]> r : readers) {
            r.closeAsync();
        }

        // the migration cannot read A's metadata ledgers: it ends with them FAILED, and leaves nothing half-copied
        // on B (a copy that differs from its source would be an inconsistency the auditor names)
        JsonNode migration = rest.awaitMigrationFinished();
        log.info("DISASTER migration with A's bookies down: {}", migration);
        assertEquals("DONE_WITH_FAILURES", migration.get("phase").asText(), migration.toString());
        JsonNode verify = rest.get("/verify").json();
        assertTrue(verify.get("ok").asBoolean(), "verify with A's bookies down: " + verify);

        // A comes back: everything is readable from earliest, nothing lost
        t0 = System.nanoTime();
        cluster.bookieCluster("cluster-a").startBookies();
        log.info("DISASTER cluster-a bookies back in {} ms", ByteLoad.ms(System.nanoTime() - t0));
        t0 = System.nanoTime();
        for (Load l : loads) {
            List<Long> expected = contents.get(l.topic);
            List<Long> all = ByteLoad.readAll(client, l.topic);
            assertEquals(expected, all, l.topic + ": read from earliest after A is back");
            assertTrue(all.containsAll(l.account.acked.keySet()), l.topic + ": every acknowledged message is readable");
        }
        log.info("DISASTER everything read from earliest after A came back in {} ms", ByteLoad.ms(System.nanoTime() - t0));
        // with A back, everything verify looks at can be read again: nothing wrong and nothing left unchecked, entries
        // of every copy included
        JsonNode back = rest.get("/verify?deep=true").json();
        log.info("DISASTER deep verify with A back: {}", back);
        assertTrue(back.get("ok").asBoolean(), back.toString());
        assertEquals(0, back.get("unchecked").size(), back.toString());
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(typed).create()) {
            p.send("typed:after");
        }
        log.info("DISASTER SUMMARY: switch -> first publish on B max {} ms, {} send failures, {} messages "
                + "acknowledged and received exactly once", maxResume, failedTotal,
                loads.stream().mapToLong(l -> l.account.acked.size()).sum());
        loads.forEach(Load::close);
    }
}
