package io.bcswitch.it.support;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;

/**
 * The exact account of one producer's messages on one topic as one subscription sees them: every send attempted,
 * acknowledged by the broker or failed (with why), and every delivery in arrival order, duplicates kept. A message is
 * {@code <anything>:<seq>}, seq counting up from 0 per producer.
 *
 * <p>{@link #problems} is the one verdict the end-to-end tests share: every acknowledged message received exactly
 * once, in the producer's order, nothing received that was never sent, and no more failed sends than the scenario
 * allows. Thread-safe: the producer's callbacks and the consumer's listener record concurrently.
 */
public final class MessageAccount {

    /** A publish the broker acknowledged: sequence number, when ({@link System#nanoTime}), and into which ledger. */
    public record Ack(long seq, long nanos, long ledgerId) {
    }

    public final String topic;
    public final AtomicLong attempted = new AtomicLong();
    public final ConcurrentSkipListMap<Long, Ack> acked = new ConcurrentSkipListMap<>();
    public final ConcurrentSkipListMap<Long, String> failed = new ConcurrentSkipListMap<>();
    /** Deliveries in arrival order, duplicates included. */
    public final List<Long> received = Collections.synchronizedList(new ArrayList<>());
    /** The partition of each delivery in {@link #received} (same index; "" for a topic without partitions). */
    private final List<String> receivedFrom = new ArrayList<>();
    private final Set<Long> distinct = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final AtomicLong lastAckNanos = new AtomicLong();

    public MessageAccount(String topic) {
        this.topic = topic;
    }

    public void attempt() {
        attempted.incrementAndGet();
    }

    public void ack(long seq, long ledgerId) {
        long now = System.nanoTime();
        lastAckNanos.accumulateAndGet(now, Math::max);
        acked.put(seq, new Ack(seq, now, ledgerId));
    }

    public void fail(long seq, Throwable why) {
        failed.put(seq, String.valueOf(why));
    }

    public void receive(long seq) {
        receive("", seq);
    }

    /**
     * A delivery from {@code partition} (a producer's order holds per partition: a partitioned topic's consumer
     * interleaves its partitions); whether it is the first of {@code seq}.
     */
    public boolean receive(String partition, long seq) {
        synchronized (received) {
            received.add(seq);
            receivedFrom.add(partition);
        }
        return distinct.add(seq);
    }

    /** Sends neither acknowledged nor failed yet. */
    public long pending() {
        return attempted.get() - acked.size() - failed.size();
    }

    public long lastAckNanos() {
        return lastAckNanos.get();
    }

    public List<Long> receivedSnapshot() {
        synchronized (received) {
            return new ArrayList<>(received);
        }
    }

    /** Distinct sequence numbers received. */
    public Set<Long> receivedSeqs() {
        return new HashSet<>(distinct);
    }

    public boolean receivedAllAcked() {
        return distinct.containsAll(acked.keySet());
    }

    /** Acknowledged sends never received, in order. */
    /**
     * For a read of the whole topic that misses messages: how many acknowledged ones are missing, by the ledger the
     * broker acknowledged them in, and how many of the missing were sends that failed (not stored, rightly).
     */
    public String wherePutAway(List<Long> stored) {
        Set<Long> read = new HashSet<>(stored);
        Map<Long, Long> byLedger = new java.util.TreeMap<>();
        acked.values().stream().filter(a -> !read.contains(a.seq()))
                .forEach(a -> byLedger.merge(a.ledgerId(), 1L, Long::sum));
        long failedMissing = failed.keySet().stream().filter(s -> !read.contains(s)).count();
        return "acknowledged but not read, by ledger: " + byLedger + "; failed sends not read: " + failedMissing;
    }

    public List<Long> missing() {
        return acked.keySet().stream().filter(s -> !distinct.contains(s)).toList();
    }

    /** The first acknowledgement at or after {@code nanos}, or null. */
    public Ack firstAckAfter(long nanos) {
        Ack first = null;
        for (Ack a : acked.values()) {
            if (a.nanos() >= nanos && (first == null || a.nanos() < first.nanos())) {
                first = a;
            }
        }
        return first;
    }

    /** What breaks the exact account, empty when nothing does; at most a few examples of each kind. */
    public List<String> problems(long maxFailedSends) {
        return problems(maxFailedSends, false);
    }

    /**
     * {@link #problems(long)}, where {@code redeliveriesAllowed} tolerates a message received again (at-least-once
     * delivery across a consumer's reconnect, for a scenario that unloads or kills brokers): everything else stays
     * exact, the order of first deliveries included.
     */
    public List<String> problems(long maxFailedSends, boolean redeliveriesAllowed) {
        List<String> out = new ArrayList<>();
        List<Long> got;
        List<String> from;
        synchronized (received) {
            got = new ArrayList<>(received);
            from = new ArrayList<>(receivedFrom);
        }
        Set<Long> seen = new HashSet<>();
        List<Long> twice = new ArrayList<>();
        List<String> outOfOrder = new ArrayList<>();
        List<Long> neverSent = new ArrayList<>();
        Map<String, Long> lastByPartition = new java.util.HashMap<>();
        for (int i = 0; i < got.size(); i++) {
            long s = got.get(i);
            if (!seen.add(s)) {
                twice.add(s);
                continue;
            }
            long last = lastByPartition.getOrDefault(from.get(i), -1L);
            if (s < last) {
                outOfOrder.add(s + " after " + last + (from.get(i).isEmpty() ? "" : " on " + from.get(i)));
            }
            lastByPartition.put(from.get(i), Math.max(last, s));
            if (!acked.containsKey(s) && !failed.containsKey(s)) {
                neverSent.add(s); // a failed send may still have been written: received, it is no loss
            }
        }
        add(out, "acknowledged but never received", missing());
        if (!redeliveriesAllowed) {
            add(out, "received more than once", twice);
        }
        add(out, "out of the producer's order", outOfOrder);
        add(out, "received but never sent", neverSent);
        if (failed.size() > maxFailedSends) {
            out.add(failed.size() + " failed sends, more than the " + maxFailedSends + " allowed (first: "
                    + failed.entrySet().stream().limit(3).toList() + ")");
        }
        return out;
    }

    /** Fails with every problem of {@link #problems} and this account's summary. */
    public void assertExact(long maxFailedSends) {
        List<String> p = problems(maxFailedSends);
        if (!p.isEmpty()) {
            throw new AssertionError(topic + ": " + String.join("; ", p) + " [" + summary() + "]");
        }
    }

    public String summary() {
        return "attempted=" + attempted + " acknowledged=" + acked.size() + " failed=" + failed.size()
                + " received=" + received.size() + " distinct=" + receivedSeqs().size();
    }

    private static void add(List<String> out, String what, List<?> examples) {
        if (!examples.isEmpty()) {
            out.add(examples.size() + " " + what + " (first: " + examples.subList(0, Math.min(5, examples.size()))
                    + ")");
        }
    }

    /** The sequence number of a message {@code <anything>:<seq>}. */
    public static long seq(String value) {
        return Long.parseLong(value.substring(value.lastIndexOf(':') + 1));
    }

    /**
     * Reads {@code topic} from the earliest message to its end (not to a count: a message that should not be there
     * is read too), whatever its schema; the sequence numbers in arrival order.
     */
    public static List<Long> readToEnd(PulsarClient client, String topic) throws Exception {
        return readValuesToEnd(client, topic).stream().map(MessageAccount::seq).toList();
    }

    /** Every message of {@code topic} from the earliest to its end, as UTF-8 text, in arrival order. */
    public static List<String> readValuesToEnd(PulsarClient client, String topic) throws Exception {
        List<String> out = new ArrayList<>();
        try (Reader<byte[]> reader = client.newReader(Schema.BYTES).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> m = reader.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                out.add(new String(m.getValue(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /**
     * What {@code consumer} receives until nothing more arrives for {@code quietSeconds} (each acknowledged), in
     * arrival order: a subscription's whole backlog, not a counted part of it.
     */
    public static List<String> drain(org.apache.pulsar.client.api.Consumer<String> consumer, int quietSeconds)
            throws Exception {
        List<String> out = new ArrayList<>();
        Message<String> m;
        while ((m = consumer.receive(quietSeconds, TimeUnit.SECONDS)) != null) {
            out.add(m.getValue());
            consumer.acknowledge(m);
        }
        return out;
    }

    /** {@code got} must be exactly 0, 1, ..., {@code expected}-1: each once, in order, nothing else. */
    public static void assertSequence(List<Long> got, long expected, String what) {
        List<Long> want = new ArrayList<>();
        for (long i = 0; i < expected; i++) {
            want.add(i);
        }
        if (!want.equals(got)) {
            MessageAccount a = new MessageAccount(what);
            want.forEach(s -> a.acked.put(s, new Ack(s, 0, -1)));
            got.forEach(a::receive);
            List<String> p = a.problems(0);
            throw new AssertionError(what + ": expected 0.." + (expected - 1) + ", got " + got.size()
                    + " message(s): " + (p.isEmpty() ? got : String.join("; ", p)));
        }
    }

    /** Accounts by topic, for a report line. */
    public static Map<String, String> summaries(List<MessageAccount> accounts) {
        Map<String, String> m = new java.util.LinkedHashMap<>();
        accounts.forEach(a -> m.put(a.topic, a.summary()));
        return m;
    }
}
