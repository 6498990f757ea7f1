package io.bcswitch.it.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.slf4j.Logger;
import static org.awaitility.Awaitility.await;

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
            failedTotal += l.account.failed.size();
            log.info("{} {}: sends attempted={} acknowledged={} failed={} (first failures: {}); received={}", tag,
                    l.topic, l.account.attempted.get(), l.account.acked.size(), l.account.failed.size(),
                    l.account.failed.values().stream().limit(3).toList(), got.size());
            // failed sends are bounded by each scenario (when publishing may fail, and after which point none may)
            l.account.assertExact(Long.MAX_VALUE);
        }
        log.info("{} send failures over all topics: {}", tag, failedTotal);
        return new Outcome(contents, failedTotal);
    }


    /** Reads {@code topic} from the earliest message to its end (see {@link MessageAccount#readToEnd}). */
    public static List<Long> readAll(PulsarClient client, String topic) throws Exception {
        return MessageAccount.readToEnd(client, topic);
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    public static long seq(String value) {
        return MessageAccount.seq(value);
    }

    public static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /**
     * One schema-less producer sending "{topic}:{seq}" at {@code rate}/s with sendAsync, and one consumer; both record
     * into the topic's {@link MessageAccount}.
     */
    public static final class Load implements AutoCloseable {
        public final String topic;
        public final Producer<byte[]> producer;
        public final Consumer<byte[]> consumer;
        public final MessageAccount account;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private Thread sender;

        private final int rate;

        public Load(PulsarClient client, String topic, int rate) throws Exception {
            this.topic = topic;
            this.rate = rate;
            this.account = new MessageAccount(topic);
            consumer = client.newConsumer(Schema.BYTES).topic(topic).subscriptionName("sub")
                    .subscriptionType(SubscriptionType.Exclusive)
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .messageListener((c, m) -> {
                        account.receive(seq(text(m.getValue())));
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
                    account.attempt();
                    producer.sendAsync(bytes(topic + ":" + s)).whenComplete((id, e) -> {
                        if (e != null) {
                            account.fail(s, e);
                        } else {
                            account.ack(s, ((MessageIdAdv) id).getLedgerId());
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
            return account.pending();
        }

        public MessageAccount.Ack firstAckAfter(long nanos) {
            return account.firstAckAfter(nanos);
        }

        public List<Long> receivedSnapshot() {
            return account.receivedSnapshot();
        }

        public boolean receivedAllAcked() {
            return account.receivedAllAcked();
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
