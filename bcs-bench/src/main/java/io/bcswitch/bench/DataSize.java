package io.bcswitch.bench;

import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.Migration;
import io.bcswitch.client.Status;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.config.SwitchConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;

/**
 * Scenario 5: what a switch costs does not depend on how much data the topics hold. The same topics (each with a
 * subscription that keeps its backlog) and the same compacted topic, holding a little data on one side and a lot
 * on the other: time from the switch call to the cutover's end and to the migration's end, and the bytes the
 * migration copied against the bytes stored. The baseline an operator knows, moving the data itself (decommission
 * the bookies and let re-replication copy everything), is estimated from the copy rate the migration reached.
 */
final class DataSize implements Scenario {
    private static final int TOPICS = 10;

    /** What one round measured. */
    private record Round(double cutoverSeconds, double doneSeconds, long bytesCopied, double buildSeconds) {
    }

    @Override
    public String name() {
        return "size";
    }

    @Override
    public String title() {
        return "Switch cost independent of data size: little data vs a lot, same topics";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        long smallBytes = o.smoke() ? 1L << 20 : 10L << 20;
        long largeBytes = o.smoke() ? 10L << 20 : 1L << 30;
        int compactedMb = o.size(2, 1);
        String small = mb(smallBytes);
        String large = mb(largeBytes);
        Map<String, String> unbounded = Map.of(
                SwitchConfig.PREFIX + ConfigKey.MIGRATION_CONCURRENCY.name(), "16",
                SwitchConfig.PREFIX + ConfigKey.MIGRATION_BYTES_PER_SECOND.name(), "0");
        Map<String, Sides.Spec> specs = new LinkedHashMap<>();
        // each round moves on to a cluster that never held the data: a switch back to one that still holds the
        // originals finds them already there and copies nothing, which would flatter both sides alike
        int clusters = o.rounds() + 1;
        specs.put(small, new Sides.Spec(true, clusters, 1, 1, unbounded));
        specs.put(large, new Sides.Spec(true, clusters, 1, 1, unbounded));
        Map<String, Long> stored = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        Map<String, List<Round>> rounds;
        try (Sides sides = Sides.start(specs)) {
            for (Map.Entry<String, Sides.Side> e : sides.all().entrySet()) {
                long t0 = System.nanoTime();
                stored.put(e.getKey(), fill(e.getValue(), e.getKey().equals(small) ? smallBytes : largeBytes,
                        compactedMb));
                notes.add(e.getKey() + ": " + stored.get(e.getKey()) + " bytes stored in the topics' backlogs, "
                        + "written in " + Results.number((System.nanoTime() - t0) / 1e9) + " s");
            }
            rounds = sides.alternate(o.rounds(), (side, s, round) -> switchAndFollow(s, clusters));
        }
        Map<String, Stat> done = new LinkedHashMap<>();
        Map<String, Stat> cutover = new LinkedHashMap<>();
        rounds.forEach((side, rs) -> {
            done.put(side, Stat.of(rs.stream().map(Round::doneSeconds).toList()));
            cutover.put(side, Stat.of(rs.stream().map(Round::cutoverSeconds).toList()));
            notes.add(side + ": copied " + rs.stream().map(Round::bytesCopied).toList() + " bytes per round");
        });
        List<Comparison> comparisons = new ArrayList<>();
        comparisons.add(Comparison.lowerIsBetter("switch call to the migration's end, " + large + " vs " + small, "s",
                done.get(small), done.get(large), 1.1));
        comparisons.add(Comparison.reported("switch call to the cutover's end, " + large + " vs " + small, "s",
                cutover.get(small), cutover.get(large)));
        List<Round> largeRounds = rounds.get(large);
        double copiedShare = largeRounds.stream().mapToLong(Round::bytesCopied).max().orElse(0)
                / (double) stored.get(large);
        comparisons.add(Comparison.absolute("bytes copied / bytes stored, " + large, "ratio",
                Stat.of(List.of(copiedShare)), "<= 0.01", copiedShare <= 0.01));
        // the copy rate the migration reached (the first round copies the compacted ledger: the rate is its)
        double rate = largeRounds.stream().filter(r -> r.bytesCopied() > 0 && r.buildSeconds() > 0)
                .mapToDouble(r -> r.bytesCopied() / r.buildSeconds()).max().orElse(Double.NaN);
        if (!Double.isNaN(rate)) {
            double moveAll = stored.get(large) / rate;
            comparisons.add(Comparison.reported("moving all " + large + " at that copy rate (re-replication) vs "
                    + "this switch", "s", Stat.of(List.of(moveAll)), done.get(large)));
            notes.add("copy rate reached: " + Results.number(rate / 1e6) + " MB/s");
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("topics", TOPICS);
        settings.put("data", small + " vs " + large + " of 1 KB messages, kept by a subscription");
        settings.put("compactedTopic", compactedMb + " MB on both sides");
        settings.put("migration", "migrationConcurrency=16, migrationBytesPerSecond=0");
        settings.put("rounds", o.rounds());
        settings.put("shape", "per side: ZooKeeper, rounds + 1 bookie clusters of 1 bookie (each round moves on to "
                + "the next), 1 broker with the plugin");
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, Map.of());
    }

    private static String mb(long bytes) {
        return bytes >= 1L << 30 ? (bytes >> 30) + " GB" : (bytes >> 20) + " MB";
    }

    /** Fills the topics with {@code bytes} in all and a compacted topic; returns the bytes their backlogs hold. */
    private static long fill(Sides.Side s, long bytes, int compactedMb) throws Exception {
        byte[] payload = new byte[1024];
        long perTopic = bytes / TOPICS / payload.length;
        long storedBytes = 0;
        try (PulsarAdmin admin = s.cluster().newAdmin()) {
            for (int t = 0; t < TOPICS; t++) {
                String topic = "persistent://" + s.namespace() + "/size-" + t;
                // a subscription that never consumes keeps the backlog (and has a cursor ledger to migrate)
                try (Consumer<byte[]> c = s.client().newConsumer().topic(topic).subscriptionName("keep").subscribe();
                     Producer<byte[]> p = s.client().newProducer().topic(topic).blockIfQueueFull(true)
                             .batchingMaxMessages(1000).create()) {
                    List<CompletableFuture<?>> sends = new ArrayList<>();
                    for (long k = 0; k < perTopic; k++) {
                        sends.add(p.sendAsync(payload));
                    }
                    CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
                }
                storedBytes += admin.topics().getStats(topic).getStorageSize();
            }
            CompactedTopic.create(s.client(), admin, "persistent://" + s.namespace() + "/size-compacted",
                    compactedMb);
        }
        return storedBytes;
    }

    /** Switches to the next cluster and follows it to the migration's end. */
    private static Round switchAndFollow(Sides.Side s, int clusters) throws Exception {
        try (BookieClustersAdmin admin = Sides.admin(s.cluster())) {
            String source = admin.status().activeCluster();
            String target = Sides.nextCluster(source, clusters);
            long t0 = System.nanoTime();
            long epoch = admin.switchTo(target).directive().epoch();
            long cutoverAt = 0;
            long buildAt = 0;
            long promoteAt = 0;
            long deadline = t0 + TimeUnit.MINUTES.toNanos(30);
            while (System.nanoTime() < deadline) {
                Status st = admin.status();
                long now = System.nanoTime();
                if (cutoverAt == 0 && st.epoch() >= epoch && st.cutoverComplete()) {
                    cutoverAt = now;
                }
                Migration m = st.migration();
                if (m != null && m.switchEpoch() == epoch) {
                    if (buildAt == 0 && !m.phase().equals("PENDING")) {
                        buildAt = now;
                    }
                    if (promoteAt == 0 && !m.phase().equals("PENDING") && !m.phase().equals("BUILD")) {
                        promoteAt = now;
                    }
                    if (m.phase().equals("DONE_WITH_FAILURES")) {
                        throw new IllegalStateException("the migration ended with failures: " + m.issues());
                    }
                    if (m.phase().equals("DONE") && cutoverAt > 0) {
                        return new Round((cutoverAt - t0) / 1e9, (now - t0) / 1e9, m.bytesCopied(),
                                (promoteAt - buildAt) / 1e9);
                    }
                    if (!List.of("PENDING", "BUILD", "PROMOTE", "DONE").contains(m.phase())) {
                        throw new IllegalStateException("the migration ended " + m.phase());
                    }
                }
                Thread.sleep(50);
            }
            throw new IllegalStateException("the switch to " + target + " did not finish within 30 minutes");
        }
    }
}
