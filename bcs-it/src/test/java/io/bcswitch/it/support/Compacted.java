package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;

/**
 * What a {@code readCompacted} reader sees from the start of a string topic: key to latest value. For a topic
 * compacted up to its end, and written with several values per key, that map alone does not prove the compacted
 * ledger was read: the raw backlog (kept by a long retention) gives the same map. So a key read twice fails the
 * read: only the compacted ledger holds each key once.
 */
public final class Compacted {
    private Compacted() {
    }

    /**
     * Compacts {@code topic} and answers the id of the compacted ledger it wrote; fails when the compaction fails or
     * has not finished within 120 s (a dispatcher whose read failed waits 15 s, then 30 s, before it reads again).
     * Triggered again while the status says NOT_RUN: the topic was unloaded after the trigger (a cutover, or the move
     * of its compacted ledger, unloads it), and the topic loaded since has run none.
     */
    public static long compact(PulsarAdmin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        boolean triggered = false;
        LongRunningProcessStatus status = null;
        while (System.nanoTime() < deadline) {
            if (!triggered) {
                try {
                    admin.topics().triggerCompaction(topic);
                } catch (PulsarAdminException.ConflictException e) {
                    // one is running already: its outcome is the one awaited
                }
                triggered = true;
            }
            status = admin.topics().compactionStatus(topic);
            switch (status.status) {
                case SUCCESS -> {
                    var compacted = admin.topics().getInternalStats(topic).compactedLedger;
                    if (compacted == null || compacted.ledgerId < 0) {
                        throw new AssertionError("compaction of " + topic + " succeeded without a compacted ledger");
                    }
                    return compacted.ledgerId;
                }
                case ERROR -> throw new AssertionError("compaction of " + topic + " failed: " + status.lastError);
                case NOT_RUN -> triggered = false;
                default -> {
                }
            }
            Thread.sleep(200);
        }
        // say where it stands: the compaction cursor and the ledgers it reads
        throw new AssertionError("compaction of " + topic + " not done after 120 s (" + (status == null ? "no status"
                : status.status) + "); internal stats: " + new ObjectMapper().writeValueAsString(
                        admin.topics().getInternalStats(topic)));
    }

    public static Map<String, String> view(PulsarClient client, String topic) throws Exception {
        Map<String, String> view = new TreeMap<>();
        try (Reader<String> r = client.newReader(Schema.STRING).topic(topic).readCompacted(true)
                .startMessageId(MessageId.earliest).create()) {
            while (r.hasMessageAvailable()) {
                Message<String> m = r.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                if (view.put(m.getKey(), m.getValue()) != null) {
                    throw new IllegalStateException(topic + ": key " + m.getKey() + " read twice (at " + m.getMessageId()
                            + "): the reader got the raw backlog, not only the compacted ledger");
                }
            }
        }
        return view;
    }
}
