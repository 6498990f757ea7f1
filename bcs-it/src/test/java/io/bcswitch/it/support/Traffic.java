package io.bcswitch.it.support;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * Producers and consumers on a set of topics, counting every message: one producer per topic sends
 * "{producer}:{seq}" continuously; one exclusive consumer per topic records what arrives, duplicates
 * and per-producer order. Send errors are counted, never swallowed.
 */
public final class Traffic implements AutoCloseable {

    /** What happened on one topic. */
    public static final class TopicCounts {
        public final String topic;
        public final AtomicLong sent = new AtomicLong();
        public final AtomicLong sendErrors = new AtomicLong();
        public final AtomicLong received = new AtomicLong();
        public final AtomicLong duplicates = new AtomicLong();
        public final AtomicLong outOfOrder = new AtomicLong();
        final Map<Long, Boolean> seen = new ConcurrentHashMap<>();
        volatile long lastSeq = -1;

        TopicCounts(String topic) {
            this.topic = topic;
        }
    }

    private final PulsarClient client;
    private final List<TopicCounts> counts = new ArrayList<>();
    private final List<Producer<String>> producers = new ArrayList<>();
    private final List<Consumer<String>> consumers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);

    public Traffic(PulsarClient client, List<String> topics, String subscription, int messagesPerSecondPerTopic)
            throws PulsarClientException {
        this.client = client;
        for (String topic : topics) {
            TopicCounts c = new TopicCounts(topic);
            counts.add(c);
            Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic)
                    .subscriptionName(subscription).subscriptionType(SubscriptionType.Exclusive)
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .messageListener((cons, msg) -> {
                        record(c, msg);
                        cons.acknowledgeAsync(msg);
                    })
                    .subscribe();
            consumers.add(consumer);
            Producer<String> producer = client.newProducer(Schema.STRING).topic(topic)
                    .producerName("p-" + topic.substring(topic.lastIndexOf('/') + 1))
                    .enableBatching(false).sendTimeout(60, TimeUnit.SECONDS)
                    .blockIfQueueFull(true).create();
            producers.add(producer);
            long pauseMicros = 1_000_000L / messagesPerSecondPerTopic;
            Thread t = new Thread(() -> {
                long seq = 0;
                while (running.get()) {
                    long s = seq++;
                    producer.sendAsync(producer.getProducerName() + ":" + s).whenComplete((id, e) -> {
                        if (e != null) {
                            c.sendErrors.incrementAndGet();
                        } else {
                            c.sent.incrementAndGet();
                        }
                    });
                    try {
                        TimeUnit.MICROSECONDS.sleep(pauseMicros);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "traffic-" + topic);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
    }

    private static void record(TopicCounts c, Message<String> msg) {
        long seq = Long.parseLong(msg.getValue().substring(msg.getValue().lastIndexOf(':') + 1));
        if (c.seen.putIfAbsent(seq, Boolean.TRUE) != null) {
            c.duplicates.incrementAndGet();
            return;
        }
        if (seq < c.lastSeq) {
            c.outOfOrder.incrementAndGet();
        }
        c.lastSeq = seq;
        c.received.incrementAndGet();
    }

    /** Stops the producers and waits until every sent message is acknowledged by the broker. */
    public void stopProducing() throws Exception {
        running.set(false);
        for (Thread t : threads) {
            t.join(10_000);
        }
        for (Producer<String> p : producers) {
            p.flush();
        }
    }

    /**
     * Keeps producing until {@code more} further messages were sent, then stops, waits until every sent message
     * arrived, closes, and asserts the exact count per topic: no send error, every sent message received, none twice,
     * none out of order.
     */
    public void sendMoreThenStopAndAssertExact(long more) throws Exception {
        long sentNow = totalSent();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> totalSent() > sentNow + more);
        stopProducing();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(this::allReceived);
        close();
        for (TopicCounts c : counts()) {
            org.junit.jupiter.api.Assertions.assertEquals(0, c.sendErrors.get(), c.topic + ": send errors");
            org.junit.jupiter.api.Assertions.assertEquals(c.sent.get(), c.received.get(), c.topic + ": received");
            org.junit.jupiter.api.Assertions.assertEquals(0, c.duplicates.get(), c.topic + ": duplicates");
            org.junit.jupiter.api.Assertions.assertEquals(0, c.outOfOrder.get(), c.topic + ": out of order");
        }
    }

    public List<TopicCounts> counts() {
        return counts;
    }

    public long totalSent() {
        return counts.stream().mapToLong(c -> c.sent.get()).sum();
    }

    public long totalReceived() {
        return counts.stream().mapToLong(c -> c.received.get()).sum();
    }

    public boolean allReceived() {
        return counts.stream().allMatch(c -> c.received.get() == c.sent.get());
    }

    /**
     * Reads {@code topic} from the earliest message to its end (not to a count: a message that should not be there
     * is read too); returns the sequence numbers in arrival order.
     */
    public static List<Long> readAll(PulsarClient client, String topic) throws Exception {
        List<Long> out = new ArrayList<>();
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            while (reader.hasMessageAvailable()) {
                Message<String> m = reader.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                out.add(Long.parseLong(m.getValue().substring(m.getValue().lastIndexOf(':') + 1)));
            }
        }
        return out;
    }

    public Map<String, String> summary() {
        Map<String, String> m = new HashMap<>();
        for (TopicCounts c : counts) {
            m.put(c.topic, "sent=" + c.sent + " errors=" + c.sendErrors + " received=" + c.received + " dup="
                    + c.duplicates + " ooo=" + c.outOfOrder);
        }
        return m;
    }

    @Override
    public void close() {
        running.set(false);
        producers.forEach(p -> p.closeAsync());
        consumers.forEach(c -> c.closeAsync());
    }
}
