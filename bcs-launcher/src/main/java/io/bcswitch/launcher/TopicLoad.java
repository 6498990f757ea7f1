package io.bcswitch.launcher;

import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * One topic of the demo: a paced producer whose messages carry its sequence number (0, 1, 2, ...)
 * and an exclusive consumer that checks what arrives against what the producer had acknowledged.
 */
final class TopicLoad implements AutoCloseable {

    static final String SUBSCRIPTION = "demo-sub";
    static final long SEND_TIMEOUT_MS = 30_000;

    /**
     * Where the demo is; a message's latency counts towards the phase it was sent in. DRAIN starts
     * after the producers stopped, but a send issued just before may still land in it.
     */
    enum Phase { BEFORE, DURING, BUILD, AFTER, DRAIN }

    final String topic;
    private final int ratePerSecond;
    private final AtomicReference<Phase> phase;
    private final Latencies[] latencies;
    private final Producer<Long> producer;
    private final Consumer<Long> consumer;
    private final Thread producerThread;
    private final Thread consumerThread;
    private volatile boolean producing = true;
    private volatile boolean consuming = true;

    private final AtomicLong attempted = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong sendFailures = new AtomicLong();
    private final AtomicReference<String> firstSendError = new AtomicReference<>();
    private final AtomicReference<String> consumerError = new AtomicReference<>();

    // guarded by this
    private final BitSet acked = new BitSet();
    private final BitSet received = new BitSet();
    private long deliveries;
    private long duplicates;
    private long outOfOrder;
    private long maxSeqSeen = -1;

    /**
     * Subscribes the consumer (from the earliest position) and creates the producer; nothing is
     * sent until {@link #start()}.
     */
    TopicLoad(PulsarClient client, String topic, int index, int ratePerSecond, AtomicReference<Phase> phase,
              Latencies[] latencies) throws PulsarClientException {
        if (latencies.length != Phase.values().length) {
            throw new IllegalArgumentException("need one Latencies per phase");
        }
        this.topic = topic;
        this.ratePerSecond = ratePerSecond;
        this.phase = phase;
        this.latencies = latencies;
        this.consumer = client.newConsumer(Schema.INT64)
                .topic(topic)
                .subscriptionName(SUBSCRIPTION)
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .consumerName("demo-consumer-" + index)
                .subscribe();
        try {
            this.producer = client.newProducer(Schema.INT64)
                    .topic(topic)
                    .producerName("demo-producer-" + index)
                    .enableBatching(false)
                    .blockIfQueueFull(true)
                    .maxPendingMessages(10_000)
                    .sendTimeout((int) SEND_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .create();
        } catch (PulsarClientException | RuntimeException e) {
            consumer.closeAsync();
            throw e;
        }
        this.producerThread = new Thread(this::produce, "demo-producer-" + index);
        this.consumerThread = new Thread(this::consume, "demo-consumer-" + index);
        producerThread.setDaemon(true);
        consumerThread.setDaemon(true);
    }

    void start() {
        consumerThread.start();
        producerThread.start();
    }

    private void produce() {
        long interval = 1_000_000_000L / ratePerSecond;
        long start = System.nanoTime();
        long seq = 0;
        while (producing) {
            long now = System.nanoTime();
            long due = start + seq * interval;
            if (due > now) {
                LockSupport.parkNanos(Math.min(due - now, 50_000_000L));
                continue;
            }
            if (now - due > 1_000_000_000L) {
                // more than a second behind (sendAsync blocked): do not burst to catch up
                start = now - seq * interval;
            }
            send(seq++);
        }
    }

    private void send(long seq) {
        Phase sentIn = phase.get();
        attempted.incrementAndGet();
        inFlight.incrementAndGet();
        long t0 = System.nanoTime();
        try {
            producer.newMessage().value(seq).sendAsync().whenComplete((id, err) -> {
                long dt = System.nanoTime() - t0;
                try {
                    if (err == null) {
                        synchronized (this) {
                            acked.set((int) seq);
                        }
                        latencies[sentIn.ordinal()].add(dt);
                    } else {
                        sendFailures.incrementAndGet();
                        firstSendError.compareAndSet(null, "seq " + seq + ": " + err);
                    }
                } finally {
                    inFlight.decrementAndGet();
                }
            });
        } catch (RuntimeException e) {
            sendFailures.incrementAndGet();
            firstSendError.compareAndSet(null, "seq " + seq + ": " + e);
            inFlight.decrementAndGet();
        }
    }

    private void consume() {
        while (consuming) {
            Message<Long> msg;
            try {
                msg = consumer.receive(200, TimeUnit.MILLISECONDS);
            } catch (PulsarClientException e) {
                if (!consuming) {
                    return;
                }
                consumerError.compareAndSet(null, e.toString());
                LockSupport.parkNanos(100_000_000L);
                continue;
            }
            if (msg == null) {
                continue;
            }
            long seq = msg.getValue();
            synchronized (this) {
                deliveries++;
                if (received.get((int) seq)) {
                    duplicates++;
                } else {
                    received.set((int) seq);
                    if (seq < maxSeqSeen) {
                        outOfOrder++;
                    }
                    maxSeqSeen = Math.max(maxSeqSeen, seq);
                }
            }
            consumer.acknowledgeAsync(msg);
        }
    }

    /** Stops issuing sends (outstanding ones still complete); waits for the producer thread. */
    void stopProducing() throws InterruptedException {
        producing = false;
        producerThread.join(5_000);
        producer.flushAsync();
    }

    /** The producer's own view, for sends that never completed. */
    String producerState() {
        return "producer connected=" + producer.isConnected() + ", client pending queue="
                + producer.getStats().getPendingQueueSize() + ", last sequence id published="
                + producer.getLastSequenceId();
    }

    long inFlight() {
        return inFlight.get();
    }

    /** True when every acknowledged message has been received. */
    synchronized boolean drained() {
        BitSet missing = (BitSet) acked.clone();
        missing.andNot(received);
        return missing.isEmpty();
    }

    void stopConsuming() throws InterruptedException {
        consuming = false;
        consumerThread.join(5_000);
    }

    synchronized Counts counts() {
        BitSet lost = (BitSet) acked.clone();
        lost.andNot(received);
        BitSet unconfirmed = (BitSet) received.clone();
        unconfirmed.andNot(acked);
        return new Counts(attempted.get(), acked.cardinality(), sendFailures.get(), inFlight.get(),
                received.cardinality(), deliveries, lost.cardinality(), duplicates, outOfOrder,
                unconfirmed.cardinality(), firstMissing(lost), firstSendError.get(), consumerError.get());
    }

    private static String firstMissing(BitSet lost) {
        if (lost.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        int shown = 0;
        for (int i = lost.nextSetBit(0); i >= 0 && shown < 10; i = lost.nextSetBit(i + 1), shown++) {
            sb.append(shown == 0 ? "" : ",").append(i);
        }
        if (lost.cardinality() > shown) {
            sb.append(",...");
        }
        return sb.toString();
    }

    @Override
    public void close() {
        producing = false;
        consuming = false;
        producer.closeAsync();
        consumer.closeAsync();
    }

    /**
     * What happened on one topic.
     *
     * @param attempted   sends issued
     * @param sent        sends the broker acknowledged
     * @param sendFailed  sends that completed with an error
     * @param pending     sends still outstanding
     * @param received    distinct sequence numbers received
     * @param deliveries  messages received including duplicates
     * @param lost        acknowledged by the broker but never received
     * @param duplicates  deliveries of a sequence number already received
     * @param outOfOrder  first deliveries of a sequence number below one already received
     * @param unconfirmed received although the send did not succeed (e.g. timed out after being stored)
     */
    record Counts(long attempted, long sent, long sendFailed, long pending, long received, long deliveries,
                  long lost, long duplicates, long outOfOrder, long unconfirmed, String lostSample,
                  String firstSendError, String consumerError) {

        Counts plus(Counts o) {
            return new Counts(attempted + o.attempted, sent + o.sent, sendFailed + o.sendFailed,
                    pending + o.pending, received + o.received, deliveries + o.deliveries, lost + o.lost,
                    duplicates + o.duplicates, outOfOrder + o.outOfOrder, unconfirmed + o.unconfirmed,
                    null, null, null);
        }

        static Counts zero() {
            return new Counts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, null, null);
        }
    }
}
