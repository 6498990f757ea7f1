package io.bcswitch.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * A steady publish load across many topics (one producer each, batching off), paced by one thread: message k is
 * due at {@code start + k / rate} on topic {@code k mod topics}. Each message's latency is taken from when it was
 * due, so a stalled broker counts in full. Latencies go to the phase the scenario has marked when the message was
 * due, and to a per-second series.
 */
final class PacedLoad implements AutoCloseable {
    private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(1);

    /** One second of the series: offset from the start, messages acknowledged, p99 and max latency (ms). */
    record Second(int second, long count, double p99Millis, double maxMillis) {
    }

    private final List<Producer<byte[]>> producers = new ArrayList<>();
    private final int ratePerSecond;
    private final byte[] payload;
    private final Map<String, Recorder> phases = new ConcurrentHashMap<>();
    private final Recorder series = new Recorder(MAX_MICROS, 3);
    private final List<Second> seconds = new ArrayList<>();
    private final AtomicLong errors = new AtomicLong();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-load-sampler");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong inFlight = new AtomicLong();
    /** When each phase began (System.nanoTime), in order: a message belongs to the phase it was due in. */
    private final List<Mark> marks = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean running;
    private Thread sender;

    PacedLoad(PulsarClient client, List<String> topics, int ratePerSecond, int payloadBytes)
            throws PulsarClientException {
        this.ratePerSecond = ratePerSecond;
        this.payload = new byte[payloadBytes];
        List<CompletableFuture<Producer<byte[]>>> creating = new ArrayList<>();
        for (String topic : topics) {
            creating.add(client.newProducer().topic(topic).enableBatching(false).blockIfQueueFull(true)
                    .maxPendingMessages(10_000).sendTimeout(30, TimeUnit.SECONDS).createAsync());
        }
        Exception failed = null;
        for (CompletableFuture<Producer<byte[]>> p : creating) {
            try {
                producers.add(p.get(2, TimeUnit.MINUTES));
            } catch (Exception e) {
                failed = failed == null ? e : failed; // the others are still collected, to be closed
            }
        }
        if (failed != null) {
            close();
            throw new PulsarClientException(failed);
        }
    }

    /** From now on, messages due go under {@code name}. */
    synchronized void mark(String name) {
        marks.add(new Mark(System.nanoTime(), phases.computeIfAbsent(name, n -> new Recorder(MAX_MICROS, 3))));
    }

    private record Mark(long at, Recorder recorder) {
    }

    /** The recorder of the phase {@code due} fell in (null before the first mark). */
    private Recorder phaseOf(long due) {
        Recorder in = null;
        for (Mark m : marks) {
            if (m.at() <= due) {
                in = m.recorder();
            }
        }
        return in;
    }

    synchronized PacedLoad start() {
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        long periodNanos = Math.max(1, 1_000_000_000L / ratePerSecond);
        running = true;
        sender = new Thread(() -> {
            for (long k = 0; running; k++) {
                long due = start + k * periodNanos;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                inFlight.incrementAndGet();
                producers.get((int) (k % producers.size())).sendAsync(payload).whenComplete((id, e) -> {
                    if (e != null) {
                        errors.incrementAndGet();
                    }
                    // a failed send counts with the time it took to fail: leaving it out would flatter the tail
                    long micros = Math.min(MAX_MICROS, (System.nanoTime() - due) / 1_000);
                    series.recordValue(micros);
                    Recorder inPhase = phaseOf(due);
                    if (inPhase != null) {
                        inPhase.recordValue(micros);
                    }
                    inFlight.decrementAndGet();
                });
            }
        }, "bench-paced-load");
        sender.setDaemon(true);
        sender.start();
        int[] second = {0};
        sampler.scheduleAtFixedRate(() -> {
            Histogram h = series.getIntervalHistogram();
            synchronized (seconds) {
                seconds.add(new Second(++second[0], h.getTotalCount(), h.getValueAtPercentile(99) / 1000.0,
                        h.getMaxValue() / 1000.0));
            }
        }, 1, 1, TimeUnit.SECONDS);
        return this;
    }

    /** Stops sending and waits until every send has completed (at most a minute; sends time out after 30 s). */
    void stop() throws InterruptedException {
        running = false;
        if (sender != null) {
            sender.join(TimeUnit.MINUTES.toMillis(1));
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        if (inFlight.get() > 0) {
            throw new IllegalStateException(inFlight.get() + " send(s) still in flight a minute after the load stopped");
        }
        sampler.shutdownNow();
    }

    /** The latencies of the messages due in phase {@code name} (microseconds). */
    synchronized Histogram phase(String name) {
        Recorder r = phases.get(name);
        return r == null ? new Histogram(MAX_MICROS, 3) : r.getIntervalHistogram();
    }

    List<Second> seconds() {
        synchronized (seconds) {
            return List.copyOf(seconds);
        }
    }

    long errors() {
        return errors.get();
    }

    @Override
    public void close() {
        running = false;
        sampler.shutdownNow();
        if (sender != null) {
            try {
                sender.join(TimeUnit.MINUTES.toMillis(1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Producer<byte[]> p : producers) {
            try {
                p.close();
            } catch (PulsarClientException e) {
                // the run is over; a producer that does not close cleanly changes no figure
            }
        }
    }
}
