package io.bcswitch.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * Publish load with the real Pulsar client: as fast as the broker takes it, or at a fixed rate with every
 * message's latency recorded. One producer and one sending thread per topic.
 */
final class PublishLoad {
    /** Highest latency the histograms track: a minute, in microseconds. */
    private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(1);

    private PublishLoad() {
    }

    /** Messages acknowledged per second over the window, and sends that failed. */
    record Throughput(double messagesPerSecond, long acknowledged, long errors) {
    }

    /**
     * Latency from the moment each message was due (not when it was sent: a stalled sender still counts the wait),
     * in microseconds, of the messages due inside the window.
     */
    record Latency(Histogram micros, long errors) {
    }

    /**
     * Sends as fast as the broker acknowledges (at most {@code pending} messages in flight per producer) and
     * counts what is acknowledged inside the window that follows the warm-up.
     */
    static Throughput saturate(PulsarClient client, List<String> topics, boolean batching, int payloadBytes,
                               int pending, Duration warmUp, Duration window) throws Exception {
        byte[] payload = new byte[payloadBytes];
        AtomicLong acked = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<Producer<byte[]>> producers = producers(client, topics, batching, pending);
        List<Thread> senders = new ArrayList<>();
        AtomicBoolean running = new AtomicBoolean(true);
        try {
            for (Producer<byte[]> p : producers) {
                Thread t = new Thread(() -> {
                    while (running.get()) {
                        // blocks while the producer's queue is full: the broker sets the pace
                        p.sendAsync(payload).whenComplete((id, e) -> (e == null ? acked : errors).incrementAndGet());
                    }
                }, "bench-send-" + p.getTopic());
                t.setDaemon(true);
                senders.add(t);
                t.start();
            }
            Thread.sleep(warmUp.toMillis());
            long a0 = acked.get();
            long e0 = errors.get();
            long t0 = System.nanoTime();
            Thread.sleep(window.toMillis());
            long a1 = acked.get();
            long t1 = System.nanoTime();
            long e1 = errors.get();
            return new Throughput((a1 - a0) / ((t1 - t0) / 1e9), a1 - a0, e1 - e0);
        } finally {
            running.set(false);
            for (Thread t : senders) {
                t.join(TimeUnit.SECONDS.toMillis(60));
            }
            close(producers);
        }
    }

    /**
     * Sends {@code ratePerSecond} messages a second in all (spread evenly over the topics, batching off) for the
     * warm-up and the window; records the latency of the messages due inside the window.
     */
    static Latency atRate(PulsarClient client, List<String> topics, int ratePerSecond, int payloadBytes,
                          Duration warmUp, Duration window) throws Exception {
        byte[] payload = new byte[payloadBytes];
        Recorder recorder = new Recorder(MAX_MICROS, 3);
        AtomicLong errors = new AtomicLong();
        List<Producer<byte[]>> producers = producers(client, topics, false, 100_000);
        long periodNanos = Math.max(1, (long) (1e9 * topics.size() / ratePerSecond));
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
        long measureFrom = start + warmUp.toNanos();
        long end = measureFrom + window.toNanos();
        List<Thread> senders = new ArrayList<>();
        List<CompletableFuture<?>> last = new ArrayList<>();
        try {
            for (int i = 0; i < producers.size(); i++) {
                Producer<byte[]> p = producers.get(i);
                // the topics' schedules are staggered so that their sends do not all fall on the same instant
                long first = start + periodNanos * i / producers.size();
                CompletableFuture<Void> sent = new CompletableFuture<>();
                last.add(sent);
                Thread t = new Thread(() -> {
                    CompletableFuture<?> previous = CompletableFuture.completedFuture(null);
                    for (long due = first; due < end; due += periodNanos) {
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                        long dueAt = due;
                        previous = p.sendAsync(payload).whenComplete((id, e) -> {
                            if (e != null) {
                                errors.incrementAndGet();
                            } else if (dueAt >= measureFrom) {
                                recorder.recordValue(Math.min(MAX_MICROS, (System.nanoTime() - dueAt) / 1_000));
                            }
                        });
                    }
                    previous.whenComplete((v, e) -> sent.complete(null));
                }, "bench-rate-" + p.getTopic());
                t.setDaemon(true);
                senders.add(t);
                t.start();
            }
            for (Thread t : senders) {
                t.join();
            }
            CompletableFuture.allOf(last.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
            return new Latency(recorder.getIntervalHistogram(), errors.get());
        } finally {
            close(producers);
        }
    }

    private static List<Producer<byte[]>> producers(PulsarClient client, List<String> topics, boolean batching,
                                                    int pending) throws PulsarClientException {
        List<Producer<byte[]>> producers = new ArrayList<>();
        try {
            for (String topic : topics) {
                producers.add(client.newProducer().topic(topic).enableBatching(batching).blockIfQueueFull(true)
                        .maxPendingMessages(pending).sendTimeout(30, TimeUnit.SECONDS).create());
            }
            return producers;
        } catch (PulsarClientException e) {
            close(producers);
            throw e;
        }
    }

    private static void close(List<Producer<byte[]>> producers) {
        for (Producer<byte[]> p : producers) {
            try {
                p.close();
            } catch (PulsarClientException e) {
                // the run is over; a producer that does not close cleanly changes no figure
            }
        }
    }
}
