package io.bcswitch.it.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * Producers and consumers on a set of topics, counting every message: one producer per topic sends
 * "{producer}:{seq}" continuously; one exclusive consumer per topic records what arrives. Each topic has its
 * {@link MessageAccount}; send errors are counted there, never swallowed.
 */
public final class Traffic implements AutoCloseable {

    private final List<MessageAccount> counts = new ArrayList<>();
    private final List<Producer<String>> producers = new ArrayList<>();
    private final List<Consumer<String>> consumers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);

    public Traffic(PulsarClient client, List<String> topics, String subscription, int messagesPerSecondPerTopic)
            throws PulsarClientException {
        this(client, topics, subscription, messagesPerSecondPerTopic, 60);
    }

    /**
     * Traffic whose producers never give a send up (no send timeout), as an application that must not lose a
     * message is configured: a send waits out a broker's restart, crash or pause however long it takes under load,
     * and ends acknowledged, so every message sent must be stored exactly once. With a timeout, a restart that
     * outlasts it fails every send pending by then (the producer fails its whole queue), and those messages are
     * rightly not stored.
     */
    /**
     * Waits (30 s at most) until more than {@code received} messages have been received and {@code topic}'s
     * subscription {@code subscription} has its position ledger (created through the metadata store: a test that
     * cuts a broker off the store needs it to exist before).
     */
    public void awaitFlowingWithCursorLedger(org.apache.pulsar.client.admin.PulsarAdmin admin, String topic,
                                            String subscription, long received) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> {
            var c = admin.topics().getInternalStats(topic).cursors.get(subscription);
            return totalReceived() > received && c != null && c.cursorLedger >= 0;
        });
    }

    public static Traffic neverGivingUp(PulsarClient client, List<String> topics, String subscription,
                                        int messagesPerSecondPerTopic) throws PulsarClientException {
        return new Traffic(client, topics, subscription, messagesPerSecondPerTopic, 0);
    }

    private Traffic(PulsarClient client, List<String> topics, String subscription, int messagesPerSecondPerTopic,
                    int sendTimeoutSeconds) throws PulsarClientException {
        for (String topic : topics) {
            MessageAccount c = new MessageAccount(topic);
            counts.add(c);
            Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic)
                    .subscriptionName(subscription).subscriptionType(SubscriptionType.Exclusive)
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .messageListener((cons, msg) -> {
                        c.receive(MessageAccount.seq(msg.getValue()));
                        cons.acknowledgeAsync(msg);
                    })
                    .subscribe();
            consumers.add(consumer);
            Producer<String> producer = client.newProducer(Schema.STRING).topic(topic)
                    .producerName("p-" + topic.substring(topic.lastIndexOf('/') + 1))
                    .enableBatching(false).sendTimeout(sendTimeoutSeconds, TimeUnit.SECONDS)
                    .blockIfQueueFull(true).create();
            producers.add(producer);
            long pauseMicros = 1_000_000L / messagesPerSecondPerTopic;
            Thread t = new Thread(() -> {
                long seq = 0;
                while (running.get()) {
                    long s = seq++;
                    c.attempt();
                    producer.sendAsync(producer.getProducerName() + ":" + s).whenComplete((id, e) -> {
                        if (e != null) {
                            c.fail(s, e);
                        } else {
                            c.ack(s, ((MessageIdAdv) id).getLedgerId());
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

    /** Stops the producers and waits until every sent message is acknowledged by the broker. */
    public void stopProducing() throws Exception {
        running.set(false);
        for (Thread t : threads) {
            t.join(10_000);
        }
        for (Producer<String> p : producers) {
            // bounded: a producer without a send timeout would otherwise wait for ever on a cluster that never recovers
            p.flushAsync().get(180, TimeUnit.SECONDS);
        }
    }

    /**
     * Keeps producing until {@code more} further messages were acknowledged, then stops, waits until every
     * acknowledged message arrived, closes, and asserts each topic's exact account with no failed send.
     */
    public void sendMoreThenStopAndAssertExact(long more) throws Exception {
        long sentNow = totalSent();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> totalSent() > sentNow + more);
        stopProducing();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(this::allReceived);
        close();
        assertExact(0);
    }

    /**
     * For a scenario that restarts, kills or pauses brokers: stops producing, waits until every acknowledged message
     * arrived, and asserts each topic's account with redeliveries allowed (a consumer's acknowledgements in flight to
     * a broker that went away come back: at-least-once delivery), then reads each topic again from its first message:
     * each acknowledged message must be stored exactly once, in the producer's order (brokers with deduplication on,
     * a namespace that retains everything).
     */
    public void stopAndAssertStoredOnce(PulsarClient client) throws Exception {
        stopProducing();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(120)).until(this::allReceived);
        close();
        List<String> problems = new ArrayList<>();
        for (MessageAccount c : counts) {
            c.problems(0, true).forEach(p -> problems.add(c.topic + ": " + p));
            if (c.acked.isEmpty()) {
                problems.add(c.topic + ": nothing was acknowledged");
                continue;
            }
            List<Long> stored = MessageAccount.readToEnd(client, c.topic);
            try {
                MessageAccount.assertSequence(stored, c.acked.lastKey() + 1, c.topic + " read from the earliest");
            } catch (AssertionError e) {
                problems.add(e.getMessage() + "; " + c.wherePutAway(stored));
            }
        }
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), problems, "message accounts: " + summary());
    }

    /** Every topic's exact account (see {@link MessageAccount#problems}), with at most {@code maxFailedSends} each. */
    public void assertExact(long maxFailedSends) {
        List<String> problems = new ArrayList<>();
        for (MessageAccount c : counts) {
            c.problems(maxFailedSends).forEach(p -> problems.add(c.topic + ": " + p));
            if (c.acked.isEmpty()) {
                problems.add(c.topic + ": nothing was acknowledged");
            }
        }
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), problems, "message accounts: " + summary());
    }

    public List<MessageAccount> counts() {
        return counts;
    }

    /** Sends the brokers acknowledged, over all topics. */
    public long totalSent() {
        return counts.stream().mapToLong(c -> c.acked.size()).sum();
    }

    /** Distinct messages received, over all topics. */
    public long totalReceived() {
        return counts.stream().mapToLong(c -> c.receivedSeqs().size()).sum();
    }

    /** Whether every acknowledged send has arrived (and every send completed). */
    public boolean allReceived() {
        return counts.stream().allMatch(c -> c.pending() == 0 && c.receivedAllAcked());
    }

    /**
     * Reads {@code topic} from the earliest message to its end (see {@link MessageAccount#readToEnd}).
     */
    public static List<Long> readAll(PulsarClient client, String topic) throws Exception {
        return MessageAccount.readToEnd(client, topic);
    }

    public Map<String, String> summary() {
        return MessageAccount.summaries(counts);
    }

    @Override
    public void close() {
        running.set(false);
        producers.forEach(p -> p.closeAsync());
        consumers.forEach(c -> c.closeAsync());
    }
}
