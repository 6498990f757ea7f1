package io.bcswitch.bench;

import io.bcswitch.client.BookieCluster;
import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * The cutover scenario against a running cluster that has the plugin ({@code --service-url}, {@code --admin-url}):
 * brokers, bookies and ZooKeeper on machines of their own, as the in-process bench cannot have them. Each round
 * switches to the other of two registered bookie clusters under a paced publish load (back and forth, round by
 * round) and waits for the migration before the next.
 *
 * <p>There is no stock side: stock Pulsar has no remote call that rolls a topic over to a new ledger (the in-process
 * baseline rolls managed ledgers inside the broker). Publish latency during the cutover is compared with the same
 * round's latency before it, and the cutover time is held to the absolute goal.
 */
final class RemoteCutover implements Scenario {
    private static final String PREFIX = "bcs-bench-cutover-t";

    /**
     * Where the cluster is.
     *
     * @param namespace existing namespace the bench creates its topics in (deleted again at the end)
     * @param target    the registered bookie cluster of the first round's switch (later rounds go back and forth);
     *                  null: the only other usable one
     * @param authToken token for the client, the admin and the REST API; null: none
     */
    record Target(String serviceUrl, String adminUrl, String namespace, String target, String authToken) {
    }

    private final Target where;

    RemoteCutover(Target where) {
        this.where = where;
    }

    @Override
    public String name() {
        return "cutover-remote";
    }

    @Override
    public String title() {
        return "Cutover on a running cluster: publish latency during a switch's cutover vs before it";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        int warm = o.seconds(5);
        int before = o.seconds(5);
        int tail = o.seconds(3);
        List<Comparison> comparisons = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Map<String, Object> series = new LinkedHashMap<>();
        try (BookieClustersAdmin admin = restAdmin(); PulsarClient client = client();
             PulsarAdmin pulsar = pulsarAdmin()) {
            Status start = admin.status();
            String back = start.activeCluster();
            String there = where.target() != null ? where.target() : onlyOther(admin.list(), back);
            notes.add("switches between " + back + " (active at the start) and " + there + ", " + start.brokers().size()
                    + " broker(s) reporting");
            for (int count : topicCounts(o)) {
                int rate = Math.max(o.size(500, 50), 2 * count);
                String label = count + " topics";
                List<String> topics = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    topics.add("persistent://" + where.namespace() + "/" + PREFIX + i);
                }
                List<CutoverAtScale.Round> rounds = new ArrayList<>();
                try {
                    for (int round = 0; round < o.rounds(); round++) {
                        String to = admin.status().activeCluster().equals(there) ? back : there;
                        rounds.add(CutoverAtScale.measure(client, topics, rate, warm, before, tail,
                                () -> CutoverAtScale.switchAndAwaitCutover(admin, to)));
                        CutoverAtScale.awaitMigration(admin); // its copying must not run into the next round
                    }
                } finally {
                    deleteTopics(pulsar, topics, notes);
                }
                Stat time = Stat.of(rounds.stream().map(CutoverAtScale.Round::seconds).toList());
                comparisons.add(Comparison.absolute(label + ": time to move every topic to a new ledger", "s", time,
                        "<= 5 s", time.median() <= 5));
                comparisons.add(Comparison.reported(label + ": max publish latency, during the cutover vs before",
                        "ms", Stat.of(rounds.stream().map(r -> r.before().getMaxValue() / 1000.0).toList()),
                        Stat.of(rounds.stream().map(r -> r.during().getMaxValue() / 1000.0).toList())));
                comparisons.add(Comparison.reported(label + ": publish latency p99, during the cutover vs before",
                        "ms", Stat.of(rounds.stream().map(r -> r.before().getValueAtPercentile(99) / 1000.0).toList()),
                        Stat.of(rounds.stream().map(r -> r.during().getValueAtPercentile(99) / 1000.0).toList())));
                notes.add(label + ": " + rounds.stream().mapToLong(CutoverAtScale.Round::errors).sum()
                        + " send error(s)");
                series.put(label + ", round 1 | cutover", rounds.get(0).series());
            }
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("serviceUrl", where.serviceUrl());
        settings.put("adminUrl", where.adminUrl());
        settings.put("namespace", where.namespace());
        settings.put("topics", topicCounts(o));
        settings.put("ratePerSecond", "max(" + o.size(500, 50) + ", 2 per topic)");
        settings.put("payloadBytes", CutoverAtScale.PAYLOAD);
        settings.put("rounds", o.rounds());
        settings.put("secondsWarmUpBeforeTail", List.of(warm, before, tail));
        settings.put("cutoverTopicsPerSecond", "as the cluster's brokers are configured");
        // the machine the bench ran on; the cluster's machines are the operator's to describe
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, series);
    }

    /** The in-process shapes' topic counts (the brokers are the cluster's own). */
    private static List<Integer> topicCounts(BenchOptions o) {
        return CutoverAtScale.shapes(o).stream().map(CutoverAtScale.Shape::topics).distinct().toList();
    }

    /** The one registered cluster other than {@code active} that can be switched to. */
    static String onlyOther(List<BookieCluster> clusters, String active) {
        List<String> others = clusters.stream().filter(c -> !c.name().equals(active)
                && !"DEPRECATED".equals(c.status())).map(BookieCluster::name).toList();
        if (others.size() != 1) {
            throw new IllegalArgumentException("the bench switches between the active bookie cluster (" + active
                    + ") and one other; registered and not deprecated besides it: " + others
                    + ": name one with --target");
        }
        return others.get(0);
    }

    private static void deleteTopics(PulsarAdmin pulsar, List<String> topics, List<String> notes) {
        int failed = 0;
        for (String t : topics) {
            try {
                pulsar.topics().delete(t, true);
            } catch (Exception e) {
                failed++;
            }
        }
        if (failed > 0) {
            notes.add(failed + " of the bench's topics could not be deleted (" + PREFIX + "*): delete them by hand");
        }
    }

    private BookieClustersAdmin restAdmin() {
        BookieClustersAdmin.Builder b = BookieClustersAdmin.builder().serviceUrl(where.adminUrl());
        if (where.authToken() != null) {
            b.authToken(where.authToken());
        }
        return b.build();
    }

    private PulsarClient client() throws PulsarClientException {
        var b = PulsarClient.builder().serviceUrl(where.serviceUrl()).operationTimeout(60, TimeUnit.SECONDS);
        if (where.authToken() != null) {
            b.authentication(AuthenticationFactory.token(where.authToken()));
        }
        return b.build();
    }

    private PulsarAdmin pulsarAdmin() throws PulsarClientException {
        var b = PulsarAdmin.builder().serviceHttpUrl(where.adminUrl());
        if (where.authToken() != null) {
            b.authentication(AuthenticationFactory.token(where.authToken()));
        }
        return b.build();
    }
}
