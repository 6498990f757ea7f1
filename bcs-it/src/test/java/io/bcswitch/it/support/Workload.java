package io.bcswitch.it.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.ConsumerImpl;
import org.apache.pulsar.client.impl.MultiTopicsConsumerImpl;

/**
 * A mixed, continuous workload for sequences of switches and faults, counting every message: plain topics, a
 * partitioned topic, compacted topics (keyed), JSON-schema topics, each with a producer sending all the time and an
 * exclusive consumer acknowledging with receipts; and topics whose subscription stays idle until the end (their
 * cursors sit still on old clusters while switches go on).
 *
 * <p>Every message is {@code <producer>:<seq>}. For each subscription it records what arrived: a sequence number
 * seen before is a redelivery (counted; one whose acknowledgement the broker had confirmed is counted separately),
 * a new one lower than the last new one of the same producer and partition is out of order.
 */
public final class Workload implements AutoCloseable {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Workload.class);

    /**
     * How long before a disconnect an acknowledgement may have been confirmed without being persisted: the period of
     * Pulsar's default mark-delete rate limit ({@code managedLedgerDefaultMarkDeleteRateLimit=1.0} per second).
     */
    static final long UNPERSISTED_ACK_MILLIS = 1_000;

    /**
     * One subscription's view of one producer's messages: their {@link MessageAccount} (every send, acknowledgement,
     * failure and delivery), and which redeliveries lost an acknowledgement a broker had confirmed.
     */
    public static final class Stream {
        public final String name;
        public final MessageAccount account;
        /** When (wall clock, ms) a broker's receipt confirmed the acknowledgement of a message. */
        final Map<Long, Long> ackConfirmedAt = new ConcurrentHashMap<>();
        public final AtomicLong redelivered = new AtomicLong();
        /** Each redelivery after a confirmed acknowledgement: {seq, confirmed at, redelivered at} (wall clock, ms). */
        public final List<long[]> lateRedeliveries = java.util.Collections.synchronizedList(new ArrayList<>());

        Stream(String name) {
            this.name = name;
            this.account = new MessageAccount(name);
        }

        void receive(String partition, long seq) {
            receive(partition, seq, Long.MAX_VALUE);
        }

        /**
         * {@code lastDisconnectMillis}: when the consumer of {@code partition} last lost its broker. A redelivery
         * only means an acknowledgement was lost if a broker confirmed it before then: a receipt that came after
         * the reconnect may be the new broker's answer to an acknowledgement that reached it after it had
         * dispatched the message again (an ordinary duplicate of at-least-once delivery). Nor does one confirmed
         * within {@link #UNPERSISTED_ACK_MILLIS} before: Pulsar confirms an acknowledgement once its cursor holds it
         * in memory and persists the position at most once a second, so what the last second acknowledged is
         * persisted only by the cursor's close, and stock Pulsar loses that write when it races the cursor's own
         * metadata update during an unload (seen: a cutover unload, "Failed to update cursor metadata ... version
         * conflict", one message acknowledged 5 ms before redelivered). A cursor whose state the plugin lost would
         * send back messages acknowledged long before.
         */
        void receive(String partition, long seq, long lastDisconnectMillis) {
            if (!account.receive(partition, seq)) {
                redelivered.incrementAndGet();
                Long confirmedAt = ackConfirmedAt.get(seq);
                if (confirmedAt != null && confirmedAt < lastDisconnectMillis - UNPERSISTED_ACK_MILLIS) {
                    lateRedeliveries.add(new long[] {seq, confirmedAt, System.currentTimeMillis()});
                    LOG.warn("WORKLOAD {} ({}): message {} redelivered although a broker confirmed its "
                            + "acknowledgement {} ms before the consumer lost that broker", name, partition, seq,
                            lastDisconnectMillis - confirmedAt);
                }
            }
        }

        /** Acknowledged sends that never arrived. */
        public List<Long> missing() {
            return account.missing();
        }

        /**
         * What breaks this stream's account: redeliveries are allowed (consumers reconnect across unloads), nothing
         * else; no send may fail (producers never time out).
         */
        public List<String> problems() {
            return account.problems(0, true);
        }

        public String summary() {
            return name + ": " + account.summary() + " missing=" + missing().size() + " redelivered=" + redelivered
                    + " (after a confirmed ack: " + lateRedeliveries.size() + ")";
        }
    }

    /** A JSON-schema value. */
    public record Value(String producer, long seq, String note) {
    }

    private final PulsarClient client;
    private final PulsarAdmin admin;
    private final String ns;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final Map<String, Stream> streams = new TreeMap<>();
    private final List<String> compacted = new ArrayList<>();
    private final Map<String, Map<String, String>> latestByKey = new ConcurrentHashMap<>();
    private final Map<String, Producer<String>> idleProducers = new TreeMap<>();
    private final Map<String, Stream> idle = new TreeMap<>();
    private final AtomicLong idleSeq = new AtomicLong();

    /**
     * @param plain       plain topics
     * @param partitions  partitions of the one partitioned topic
     * @param compactedN  compacted topics
     * @param schemaN     JSON-schema topics
     * @param idleN       topics with an idle subscription
     * @param rate        messages per second per producer
     */
    public Workload(PulsarClient client, PulsarAdmin admin, String ns, int plain, int partitions, int compactedN,
                    int schemaN, int idleN, int rate) throws Exception {
        this.client = client;
        this.admin = admin;
        this.ns = ns;
        for (int i = 0; i < plain; i++) {
            stringTopic("persistent://" + ns + "/plain-" + i, false, rate);
        }
        String part = "persistent://" + ns + "/partitioned";
        admin.topics().createPartitionedTopic(part, partitions);
        stringTopic(part, false, rate);
        for (int i = 0; i < compactedN; i++) {
            String t = "persistent://" + ns + "/compacted-" + i;
            compacted.add(t);
            latestByKey.put(t, new ConcurrentHashMap<>());
            stringTopic(t, true, rate);
        }
        for (int i = 0; i < schemaN; i++) {
            schemaTopic("persistent://" + ns + "/schema-" + i, rate);
        }
        for (int i = 0; i < idleN; i++) {
            String t = "persistent://" + ns + "/idle-" + i;
            // the subscription exists from the start and then stays idle: its cursor never moves until the end
            client.newConsumer(Schema.STRING).topic(t).subscriptionName("idle")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe().close();
            Producer<String> p = client.newProducer(Schema.STRING).topic(t).producerName("idle-" + i)
                    .enableBatching(false).sendTimeout(0, TimeUnit.SECONDS).create();
            closeables.add(p);
            idleProducers.put(t, p);
            idle.put(t, new Stream(t + "/idle"));
        }
        threads.forEach(Thread::start);
    }

    private void stringTopic(String topic, boolean keyed, int rate) throws Exception {
        Stream s = new Stream(topic);
        streams.put(topic, s);
        Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("sub")
                .subscriptionType(SubscriptionType.Exclusive).isAckReceiptEnabled(true)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .messageListener((c, m) -> {
                    long seq = seq(m.getValue());
                    s.receive(m.getTopicName(), seq, lastDisconnect(c, m.getTopicName()));
                    acknowledge(c, m, s, seq);
                }).subscribe();
        closeables.add(consumer);
        String name = "p-" + topic.substring(topic.lastIndexOf('/') + 1);
        Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).producerName(name)
                .enableBatching(false).sendTimeout(0, TimeUnit.SECONDS).blockIfQueueFull(true).create();
        closeables.add(producer);
        Map<String, String> latest = latestByKey.get(topic);
        loop(topic, rate, seq -> {
            var msg = producer.newMessage().value(name + ":" + seq);
            if (keyed) {
                msg = msg.key("k" + (seq % 10));
            }
            s.account.attempt();
            msg.sendAsync().whenComplete((id, e) -> {
                if (e != null) {
                    s.account.fail(seq, e);
                } else {
                    s.account.ack(seq, -1);
                    if (keyed) {
                        latest.merge("k" + (seq % 10), name + ":" + seq, (a, b) -> seq(a) > seq(b) ? a : b);
                    }
                }
            });
        });
    }

    private void schemaTopic(String topic, int rate) throws Exception {
        Stream s = new Stream(topic);
        streams.put(topic, s);
        Consumer<Value> consumer = client.newConsumer(Schema.JSON(Value.class)).topic(topic).subscriptionName("sub")
                .subscriptionType(SubscriptionType.Exclusive).isAckReceiptEnabled(true)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .messageListener((c, m) -> {
                    long seq = m.getValue().seq();
                    s.receive(m.getTopicName(), seq, lastDisconnect(c, m.getTopicName()));
                    acknowledge(c, m, s, seq);
                }).subscribe();
        closeables.add(consumer);
        String name = "p-" + topic.substring(topic.lastIndexOf('/') + 1);
        Producer<Value> producer = client.newProducer(Schema.JSON(Value.class)).topic(topic).producerName(name)
                .enableBatching(false).sendTimeout(0, TimeUnit.SECONDS).blockIfQueueFull(true).create();
        closeables.add(producer);
        loop(topic, rate, seq -> {
            s.account.attempt();
            producer.sendAsync(new Value(name, seq, "v")).whenComplete((id, e) -> {
                if (e != null) {
                    s.account.fail(seq, e);
                } else {
                    s.account.ack(seq, -1);
                }
            });
        });
    }

    /**
     * Creates {@code n} new topics, each with a JSON schema registered by one message (so each has a schema ledger on
     * the cluster active now), for a step that deletes their schemas. They take no part in the message accounting.
     */
    public List<String> schemaTopicsToDelete(int n) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String topic = "persistent://" + ns + "/doomed-" + doomed.incrementAndGet();
            try (Producer<Value> p = client.newProducer(Schema.JSON(Value.class)).topic(topic).create()) {
                p.send(new Value("doomed", 0, "registers the schema"));
            }
            out.add(topic);
        }
        return out;
    }

    private final AtomicLong doomed = new AtomicLong();

    private void loop(String topic, int rate, java.util.function.LongConsumer send) {
        long pauseMicros = 1_000_000L / rate;
        Thread t = new Thread(() -> {
            long seq = 0;
            while (running.get()) {
                send.accept(seq++);
                try {
                    TimeUnit.MICROSECONDS.sleep(pauseMicros);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "workload-" + topic.substring(topic.lastIndexOf('/') + 1));
        t.setDaemon(true);
        threads.add(t);
    }

    /**
     * Sends {@code n} messages to every idle-subscription topic (their subscriptions stay idle); completes with
     * whether every send was acknowledged within {@code waitSeconds}. Sends not acknowledged by then stay pending
     * (the producers never time out) and count once they are.
     */
    public boolean feedIdleTopics(int n, int waitSeconds) throws Exception {
        List<CompletableFuture<?>> sends = new ArrayList<>();
        for (Map.Entry<String, Producer<String>> e : idleProducers.entrySet()) {
            Stream s = idle.get(e.getKey());
            for (int i = 0; i < n; i++) {
                long seq = idleSeq.incrementAndGet();
                s.account.attempt();
                sends.add(e.getValue().sendAsync(e.getValue().getProducerName() + ":" + seq)
                        .whenComplete((id, failure) -> {
                            if (failure != null) {
                                s.account.fail(seq, failure);
                            } else {
                                s.account.ack(seq, -1);
                            }
                        }));
            }
        }
        try {
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(waitSeconds, TimeUnit.SECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /**
     * Starts a compaction of every compacted topic; returns the topics that refused for another reason than a
     * compaction of theirs already running, each with why.
     */
    public Map<String, String> compact() {
        Map<String, String> refused = new TreeMap<>();
        for (String t : compacted) {
            try {
                admin.topics().triggerCompaction(t);
            } catch (org.apache.pulsar.client.admin.PulsarAdminException.ConflictException running) {
                // one is already running: it compacts what this one would
            } catch (Exception e) {
                refused.put(t, e.toString());
            }
        }
        return refused;
    }

    /**
     * Compacts every compacted topic up to what it holds now, waiting for it: a compaction still running (one
     * triggered while the bookies holding the topic were down waits for them, retrying its reads) is waited for and
     * then triggered again, since its horizon is older than the last messages. Returns the topics that could not be
     * compacted within {@code timeoutMillis}, each with why.
     */
    public Map<String, String> compactFully(long timeoutMillis) throws InterruptedException {
        Map<String, String> failed = new TreeMap<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (String t : compacted) {
            String why = compactFully(t, deadline);
            if (why != null) {
                failed.put(t, why);
                logCompactionState(t);
            }
        }
        return failed;
    }

    private String compactFully(String topic, long deadline) throws InterruptedException {
        String last = "not compacted";
        boolean triggered = false;
        while (System.nanoTime() < deadline) {
            try {
                if (!triggered) {
                    admin.topics().triggerCompaction(topic);
                    triggered = true;
                }
                var status = admin.topics().compactionStatus(topic);
                switch (status.status) {
                    case SUCCESS:
                        return null;
                    case ERROR:
                        last = "compaction failed: " + status.lastError;
                        triggered = false;
                        break;
                    case NOT_RUN:
                        // the topic moved to another broker since, which has never run one: trigger it there
                        last = "compaction NOT_RUN";
                        triggered = false;
                        break;
                    default:
                        last = "compaction " + status.status;
                }
            } catch (org.apache.pulsar.client.admin.PulsarAdminException.ConflictException e) {
                last = "an earlier compaction still running: " + e.getMessage(); // triggered again once it ended
            } catch (org.apache.pulsar.client.admin.PulsarAdminException e) {
                last = e.toString();
            }
            Thread.sleep(500);
        }
        return last;
    }

    /**
     * What a compaction that never ends waits for, for the log: the topic's and its compaction cursor's state as the
     * broker sees them, and every thread of this JVM (where the brokers run) standing in compaction code. A compaction
     * that never logged its first phase waits for its reader's subscribe or its last-message-id read.
     */
    private void logCompactionState(String topic) {
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        try {
            var internal = admin.topics().getInternalStats(topic);
            var subscription = admin.topics().getStats(topic).getSubscriptions().get("__compaction");
            LOG.warn("WORKLOAD compaction of {} unfinished: managed ledger {} ledgers {} last confirmed {}; compaction "
                            + "cursor {}; compaction subscription {}; compacted ledger {}", topic, internal.state,
                    internal.ledgers.stream().map(l -> l.ledgerId).toList(), internal.lastConfirmedEntry,
                    json.writeValueAsString(internal.cursors.get("__compaction")),
                    json.writeValueAsString(subscription), json.writeValueAsString(internal.compactedLedger));
        } catch (Exception e) {
            LOG.warn("WORKLOAD compaction of {} unfinished; its stats could not be read: {}", topic, e.toString());
        }
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            for (StackTraceElement frame : stack) {
                String c = frame.getClassName().toLowerCase(java.util.Locale.ROOT);
                if (c.contains("compact") || c.contains("rawreader")) {
                    LOG.warn("WORKLOAD thread {} in compaction code: {}", thread.getName(),
                            java.util.Arrays.toString(stack));
                    break;
                }
            }
        });
    }

    public List<String> compactedTopics() {
        return List.copyOf(compacted);
    }

    /** Key to latest acknowledged value of compacted topic {@code topic}. */
    public Map<String, String> expectedCompactedView(String topic) {
        return new TreeMap<>(latestByKey.get(topic));
    }

    /** Stops every producer and waits until each acknowledged or failed what it sent. */
    public void stopProducing() throws Exception {
        running.set(false);
        for (Thread t : threads) {
            t.join(10_000);
        }
        for (AutoCloseable c : closeables) {
            if (c instanceof Producer<?> p) {
                p.flushAsync().get(120, TimeUnit.SECONDS); // sends never time out: a wedge shows here
            }
        }
    }

    /** The consumers' streams (not yet the idle subscriptions'). */
    public List<Stream> streams() {
        return List.copyOf(streams.values());
    }

    /**
     * {@code s}'s topic read again from the earliest position with readers of its own (each partition of a
     * partitioned topic; the whole log of a compacted topic, not its compacted view), independent of any
     * subscription: an account with {@code s}'s acknowledged and failed sends, and each stored message as a delivery
     * from its partition in stored order. Its problems name what storage lost (an acknowledged message not stored),
     * stored out of the producer's order, or stored that was never sent; a message stored twice is a producer's
     * resend after its broker connection was lost (no deduplication here), which moving topics between brokers
     * allows.
     */
    public MessageAccount reread(PulsarClient reader, Stream s) throws Exception {
        String topic = s.name.endsWith("/idle") ? s.name.substring(0, s.name.length() - "/idle".length()) : s.name;
        MessageAccount stored = new MessageAccount(s.name + " (re-read from the earliest)");
        stored.acked.putAll(s.account.acked);
        stored.failed.putAll(s.account.failed);
        int partitions = admin.topics().getPartitionedTopicMetadata(topic).partitions;
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            parts.add(topic + "-partition-" + i);
        }
        for (String part : parts.isEmpty() ? List.of(topic) : parts) {
            for (String value : MessageAccount.readValuesToEnd(reader, part)) {
                // a JSON-schema topic's values are {"producer":...,"seq":n,...}, the others' "<producer>:<n>"
                stored.receive(parts.isEmpty() ? "" : part, value.startsWith("{")
                        ? JSON.readTree(value).get("seq").asLong() : seq(value));
            }
        }
        return stored;
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
            new com.fasterxml.jackson.databind.ObjectMapper();

    /** Whether every consumer has received every acknowledged message. */
    public boolean allReceived() {
        return streams.values().stream().allMatch(s -> s.missing().isEmpty());
    }

    /** Subscribes the idle subscriptions at last and reads their whole backlog; returns their streams. */
    public List<Stream> drainIdleSubscriptions(long timeoutMillis) throws Exception {
        // the topics are drained side by side: each ends on its own quiet second, which one after another added up
        List<CompletableFuture<Void>> drains = new ArrayList<>();
        for (Map.Entry<String, Stream> e : idle.entrySet()) {
            drains.add(CompletableFuture.runAsync(() -> {
                try {
                    drainIdle(e.getKey(), e.getValue(), timeoutMillis);
                } catch (Exception x) {
                    throw new CompletionException(x);
                }
            }, r -> {
                Thread t = new Thread(r, "drain-" + e.getKey());
                t.setDaemon(true);
                t.start();
            }));
        }
        try {
            CompletableFuture.allOf(drains.toArray(CompletableFuture[]::new)).get();
        } catch (ExecutionException x) {
            // get() has already unwrapped the CompletionException: its cause is the drain's own failure
            throw x.getCause() instanceof Exception cause ? cause : x;
        }
        return List.copyOf(idle.values());
    }

    private void drainIdle(String topic, Stream s, long timeoutMillis) throws Exception {
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("idle")
                .subscribe()) {
            long deadline = System.currentTimeMillis() + timeoutMillis;
            // to the end of the backlog, not to a count: a quiet second once every acknowledged message is in
            // (anything after it that should not be there is read and accounted too)
            while (System.currentTimeMillis() < deadline) {
                Message<String> m = c.receive(1, TimeUnit.SECONDS);
                if (m != null) {
                    s.receive(m.getTopicName(), seq(m.getValue()));
                    c.acknowledge(m);
                } else if (s.account.receivedAllAcked()) {
                    break;
                }
            }
        }
    }

    /**
     * Acknowledges with a receipt and records when the broker confirmed it. A consumer that has no connection
     * completes the acknowledgement at once, without a receipt (it queues it for the next broker): that is no
     * confirmation, so a future already complete when returned is not counted.
     */
    private static <T> void acknowledge(Consumer<T> c, Message<T> m, Stream s, long seq) {
        CompletableFuture<Void> ack = c.acknowledgeAsync(m);
        if (!ack.isDone()) {
            ack.thenRun(() -> s.ackConfirmedAt.put(seq, System.currentTimeMillis()));
        }
    }

    /** When the consumer of {@code topic} (one partition's, for a partitioned topic) last lost its broker. */
    private static long lastDisconnect(Consumer<?> c, String topic) {
        if (c instanceof MultiTopicsConsumerImpl<?> multi) {
            for (ConsumerImpl<?> one : multi.getConsumers()) {
                if (one.getTopic().equals(topic)) {
                    return one.getLastDisconnectedTimestamp();
                }
            }
        }
        return c.getLastDisconnectedTimestamp();
    }

    private static long seq(String value) {
        return Long.parseLong(value.substring(value.lastIndexOf(':') + 1));
    }

    public String namespace() {
        return ns;
    }

    @Override
    public void close() {
        running.set(false);
        for (AutoCloseable c : closeables) {
            try {
                if (c instanceof Producer<?> p) {
                    p.closeAsync();
                } else if (c instanceof Consumer<?> k) {
                    k.closeAsync();
                } else {
                    c.close();
                }
            } catch (Exception e) {
                // closing anyway
            }
        }
    }
}
