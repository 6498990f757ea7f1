package io.bcswitch.it.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Schema-less load for the disaster tests: paced sendAsync per topic, acknowledged sends and received messages recorded. */
public final class ByteLoad {
    private ByteLoad() {
    }

    /** Starts one {@link Load} on each of {@code count} topics {@code <namespace>/t<i>}. */
    public static List<Load> start(PulsarClient client, String namespace, int count, int rate) throws Exception {
        List<Load> loads = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            loads.add(new Load(client, "persistent://" + namespace + "/t" + i, rate));
        }
        loads.forEach(Load::startSending);
        return loads;
    }

    /** What {@link #stopAndVerify} saw: each topic's received sequence numbers and the failed sends. */
    public record Outcome(Map<String, List<Long>> received, long failedSends) {
    }

    /**
     * Stops sending, waits until every send has completed and every acknowledged message is received,
     * and asserts that each consumer got every acknowledged message exactly once, in order, and nothing
     * that was never sent.
     */
    public static Outcome stopAndVerify(List<Load> loads, org.slf4j.Logger log, String tag) throws Exception {
        loads.forEach(Load::stopSending);
        for (Load l : loads) {
            l.producer.flushAsync().get(70, TimeUnit.SECONDS);
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(70))
                .until(() -> loads.stream().allMatch(l -> l.pending() == 0));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .pollInterval(java.time.Duration.ofMillis(100))
                .until(() -> loads.stream().allMatch(Load::receivedAllAcked));
        long failedTotal = 0;
        Map<String, List<Long>> contents = new java.util.LinkedHashMap<>();
        for (Load l : loads) {
            List<Long> got = l.receivedSnapshot();
            contents.put(l.topic, got);
            failedTotal += l.failed.size();
            log.info("{} {}: sends attempted={} acknowledged={} failed={} (first failures: {}); received={}", tag,
                    l.topic, l.attempted.get(), l.acked.size(), l.failed.size(),
                    l.failed.values().stream().limit(3).toList(), got.size());
            assertStrictlyIncreasing(got, l.topic + " consumer");
            org.junit.jupiter.api.Assertions.assertTrue(got.containsAll(l.acked.keySet()),
                    l.topic + ": every acknowledged message is received");
            for (long s : got) {
                org.junit.jupiter.api.Assertions.assertTrue(l.acked.containsKey(s) || l.failed.containsKey(s),
                        l.topic + ": received " + s + ", which was never sent");
            }
        }
        log.info("{} send failures over all topics: {}", tag, failedTotal);
        return new Outcome(contents, failedTotal);
    }


    /** Reads {@code topic} from the earliest message to its end; the sequence numbers in arrival order. */
    public static List<Long> readAll(PulsarClient client, String topic) throws Exception {
        List<Long> out = new ArrayList<>();
        try (Reader<byte[]> reader = client.newReader(Schema.BYTES).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> m = reader.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                out.add(seq(text(m.getValue())));
            }
        }
        return out;
    }

    public static void assertStrictlyIncreasing(List<Long> seqs, String what) {
        for (int i = 1; i < seqs.size(); i++) {
            assertTrue(seqs.get(i) > seqs.get(i - 1), what + ": " + seqs.get(i) + " after " + seqs.get(i - 1)
                    + " (duplicate or out of order) at index " + i);
        }
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    public static long seq(String value) {
        return Long.parseLong(value.substring(value.lastIndexOf(':') + 1));
    }

    public static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** A publish the broker acknowledged: sequence number, when, and into which ledger. */
    public record Ack(long seq, long nanos, long ledgerId) {
    }

    /** One schema-less producer sending "{topic}:{seq}" at {@code rate}/s with sendAsync, and one consumer recording. */
    public static final class Load implements AutoCloseable {
        public final String topic;
        public final Producer<byte[]> producer;
        public final Consumer<byte[]> consumer;
        public final AtomicLong attempted = new AtomicLong();
        public final ConcurrentSkipListMap<Long, Ack> acked = new ConcurrentSkipListMap<>();
        public final ConcurrentSkipListMap<Long, String> failed = new ConcurrentSkipListMap<>();
        public final AtomicLong lastAckNanos = new AtomicLong();
        public final List<Long> received = Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean running = new AtomicBoolean(true);
        private Thread sender;

        private final int rate;

        public Load(PulsarClient client, String topic, int rate) throws Exception {
            this.topic = topic;
            this.rate = rate;
            consumer = client.newConsumer(Schema.BYTES).topic(topic).subscriptionName("sub")
                    .subscriptionType(SubscriptionType.Exclusive)
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .messageListener((c, m) -> {
                        received.add(seq(text(m.getValue())));
                        c.acknowledgeAsync(m);
                    })
                    .subscribe();
            // a generous send timeout: sends stalled by the dead cluster complete after the switch
            producer = client.newProducer(Schema.BYTES).topic(topic).producerName("p")
                    .enableBatching(false).sendTimeout(60, TimeUnit.SECONDS).blockIfQueueFull(true).create();
        }

        public void startSending() {
            sender = new Thread(() -> {
                long seq = 0;
                while (running.get()) {
                    long s = seq++;
                    attempted.incrementAndGet();
                    producer.sendAsync(bytes(topic + ":" + s)).whenComplete((id, e) -> {
                        if (e != null) {
                            failed.put(s, e.toString());
                        } else {
                            long now = System.nanoTime();
                            lastAckNanos.accumulateAndGet(now, Math::max);
                            acked.put(s, new Ack(s, now, ((MessageIdAdv) id).getLedgerId()));
                        }
                    });
                    try {
                        TimeUnit.MILLISECONDS.sleep(1000 / rate);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "load-" + topic);
            sender.setDaemon(true);
            sender.start();
        }

        public long pending() {
            return attempted.get() - acked.size() - failed.size();
        }

        public Ack firstAckAfter(long nanos) {
            Ack first = null;
            for (Ack a : acked.values()) {
                if (a.nanos >= nanos && (first == null || a.nanos < first.nanos)) {
                    first = a;
                }
            }
            return first;
        }

        public List<Long> receivedSnapshot() {
            synchronized (received) {
                return new ArrayList<>(received);
            }
        }

        public boolean receivedAllAcked() {
            return receivedSnapshot().containsAll(acked.keySet());
        }

        public void stopSending() {
            running.set(false);
            try {
                sender.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void close() {
            running.set(false);
            producer.closeAsync();
            consumer.closeAsync();
        }
    }

}
