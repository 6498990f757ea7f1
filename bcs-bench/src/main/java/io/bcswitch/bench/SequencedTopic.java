package io.bcswitch.bench;

import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;

/**
 * One topic whose messages carry their sequence number, with a consumer that checks them off: what was
 * acknowledged to the producer must arrive. Also remembers when the first send acknowledged after a given moment
 * came back.
 */
final class SequencedTopic implements AutoCloseable {
    private final Producer<Long> producer;
    private final Consumer<Long> consumer;
    private final BitSet acked = new BitSet();
    private final BitSet received = new BitSet();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong lastAckNanos = new AtomicLong();
    private long next;
    private final AtomicLong firstAckAfterMark = new AtomicLong(-1);
    private volatile long mark = Long.MAX_VALUE;
    private volatile boolean consuming = true;
    private final Thread reader;

    SequencedTopic(PulsarClient client, String topic) throws PulsarClientException {
        consumer = client.newConsumer(Schema.INT64).topic(topic).subscriptionName("bench")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
        producer = client.newProducer(Schema.INT64).topic(topic).enableBatching(false).blockIfQueueFull(true)
                .sendTimeout(0, TimeUnit.SECONDS).create(); // no timeout: a send waits out the disaster
        reader = new Thread(this::read, "bench-read-" + topic);
        reader.setDaemon(true);
        reader.start();
    }

    private void read() {
        while (consuming) {
            try {
                Message<Long> m = consumer.receive(200, TimeUnit.MILLISECONDS);
                if (m != null) {
                    synchronized (this) {
                        received.set(m.getValue().intValue());
                    }
                    consumer.acknowledgeAsync(m);
                }
            } catch (PulsarClientException e) {
                if (!consuming) {
                    return;
                }
            }
        }
    }

    /** Sends the next message (asynchronously). */
    void send() {
        long seq;
        synchronized (this) {
            seq = next++;
        }
        producer.sendAsync(seq).whenComplete((id, e) -> {
            if (e != null) {
                errors.incrementAndGet();
                return;
            }
            long now = System.nanoTime();
            lastAckNanos.set(now);
            synchronized (this) {
                acked.set((int) seq);
            }
            if (now >= mark) {
                firstAckAfterMark.compareAndSet(-1, now);
            }
        });
    }

    /** From now on, remember the first acknowledgement that comes back. */
    void mark(long nanos) {
        mark = nanos; // first: an acknowledgement from before it can no longer be taken for one after it
        firstAckAfterMark.set(-1);
    }

    /** When the first acknowledgement after the mark came back (System.nanoTime), -1 if none yet. */
    long firstAckAfterMark() {
        return firstAckAfterMark.get();
    }

    synchronized int acked() {
        return acked.cardinality();
    }

    /**
     * Acknowledged to the producer and never received, once sending has stopped: waits (until {@code deadlineNanos},
     * System.nanoTime) for every message sent to have its answer (acknowledged or failed) and for every acknowledged
     * one to be received, then counts those acknowledged and still not received. Counting before every answer is in
     * would take an acknowledgement that arrives after the consumer was last looked at for a loss.
     */
    int lostOnceSettled(long deadlineNanos) throws InterruptedException {
        while (System.nanoTime() < deadlineNanos) {
            synchronized (this) {
                if (acked.cardinality() + errors.get() >= next && missing() == 0) {
                    return 0;
                }
            }
            Thread.sleep(50);
        }
        synchronized (this) {
            return missing();
        }
    }

    private int missing() {
        BitSet missing = (BitSet) acked.clone();
        missing.andNot(received);
        return missing.cardinality();
    }

    long errors() {
        return errors.get();
    }

    @Override
    public void close() {
        consuming = false;
        try {
            reader.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (AutoCloseable c : new AutoCloseable[] {producer, consumer}) {
            try {
                c.close();
            } catch (Exception e) {
                // the run is over
            }
        }
    }
}
