package io.bcswitch.bench;

import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.testkit.TestCluster;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * Scenario 6: a disaster switch. Topics publishing, the active bookie cluster's bookies all stopped, then a switch to
 * the other cluster: the time from the switch call until every topic has a publish acknowledged again, and the
 * acknowledged messages that never arrive (must be none). Stock Pulsar has no equivalent (its brokers have one
 * bookie cluster), so the figures stand against their goals only. Each round alternates the two clusters: the one
 * that died is brought back before the next round.
 */
final class DisasterSwitch implements Scenario {
    @Override
    public String name() {
        return "disaster";
    }

    @Override
    public String title() {
        return "Disaster switch: the active cluster's bookies stopped, a switch to the other cluster";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        int topicCount = o.size(100, 5);
        int perTopicRate = 5;
        List<Double> resume = new ArrayList<>();
        long lost = 0;
        long errors = 0;
        long acked = 0;
        try (TestCluster c = TestCluster.builder().bookieCluster(Sides.clusterName(0), 1)
                .bookieCluster(Sides.clusterName(1), 1).brokers(1).plugin(true).start();
             PulsarClient client = c.newClient();
             BookieClustersAdmin admin = Sides.admin(c)) {
            String ns = c.createTenant(Sides.NAMESPACE_TENANT);
            admin.register(Sides.clusterName(1), c.bookieCluster(Sides.clusterName(1)).metadataServiceUri());
            List<SequencedTopic> topics = new ArrayList<>();
            ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor();
            try {
                for (int i = 0; i < topicCount; i++) {
                    topics.add(new SequencedTopic(client, "persistent://" + ns + "/disaster-t" + i));
                }
                sender.scheduleAtFixedRate(() -> topics.forEach(SequencedTopic::send), 0,
                        1_000_000 / perTopicRate, TimeUnit.MICROSECONDS);
                Thread.sleep(TimeUnit.SECONDS.toMillis(o.seconds(3)));
                for (int r = 0; r < o.rounds(); r++) {
                    String dying = admin.status().activeCluster();
                    String target = Sides.otherCluster(dying);
                    c.bookieCluster(dying).stopBookies();
                    Thread.sleep(1_000); // sends stall on the dead cluster
                    long t0 = System.nanoTime();
                    topics.forEach(t -> t.mark(t0));
                    admin.switchTo(target);
                    long deadline = t0 + TimeUnit.MINUTES.toNanos(2);
                    while (topics.stream().anyMatch(t -> t.firstAckAfterMark() < 0) && System.nanoTime() < deadline) {
                        Thread.sleep(20);
                    }
                    long last = topics.stream().mapToLong(SequencedTopic::firstAckAfterMark).max().orElse(-1);
                    if (topics.stream().anyMatch(t -> t.firstAckAfterMark() < 0)) {
                        throw new IllegalStateException("publishing did not resume on every topic within 2 minutes");
                    }
                    resume.add((last - t0) / 1e9);
                    // the dead cluster comes back, to be the next round's target
                    c.bookieCluster(dying).startBookies();
                    c.bookieCluster(dying).awaitWritableBookies(1);
                    Thread.sleep(TimeUnit.SECONDS.toMillis(o.seconds(3)));
                }
            } finally {
                sender.shutdownNow();
                sender.awaitTermination(10, TimeUnit.SECONDS);
            }
            // sending has stopped (the sender is terminated): every send gets its answer and what was acknowledged
            // arrives, the consumers catch up
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            for (SequencedTopic t : topics) {
                lost += t.lostOnceSettled(deadline);
                errors += t.errors();
                acked += t.acked();
                t.close();
            }
        }
        Stat resumeStat = Stat.of(resume);
        List<Comparison> comparisons = List.of(
                Comparison.absolute("switch call to a publish acknowledged on every topic", "s", resumeStat,
                        "<= 5 s", resumeStat.median() <= 5),
                Comparison.absolute("acknowledged messages lost", "messages", Stat.of(List.of((double) lost)),
                        "0", lost == 0));
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("topics", topicCount);
        settings.put("messagesPerSecondPerTopic", perTopicRate);
        settings.put("rounds", o.rounds());
        settings.put("shape", "ZooKeeper, 2 bookie clusters of 1 bookie, 1 broker with the plugin");
        List<String> notes = List.of(acked + " message(s) acknowledged", "all topics: " + errors + " send error(s)",
                "no stock baseline: a stock broker has one bookie cluster; when it dies, publishing stops");
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, Map.of());
    }
}
