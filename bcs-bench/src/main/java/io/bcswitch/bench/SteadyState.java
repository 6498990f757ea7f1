package io.bcswitch.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.apache.pulsar.client.admin.PulsarAdmin;

/**
 * Scenario 1: what the plugin costs when no switch runs. The same cluster shape with stock storage and with the
 * plugin's; maximum publish throughput of 1 KB messages with batching off and on, then latency at a fixed rate
 * well below the lower of the two maxima (half of it), batching off.
 */
final class SteadyState implements Scenario {
    static final int PAYLOAD = 1024;

    private final Sides.Layout layout;

    /** {@code steady} in one JVM, {@code steady-processes} on a JVM per broker, bookie and ZooKeeper. */
    SteadyState(Sides.Layout layout) {
        this.layout = layout;
    }

    @Override
    public String name() {
        return layout.scenario("steady");
    }

    /** The fixed rate of the latency rounds, as a fraction of the lower measured maximum (batching off). */
    static final double RATE_OF_MAX = 0.25;
    /** No steady-state cost: the plugin's maximum throughput at least this share of stock's (median of rounds). */
    static final double THROUGHPUT_GOAL = 0.99;
    /** ... and its p99 at a fixed rate at most this multiple of stock's. */
    static final double P99_GOAL = 1.02;

    @Override
    public String title() {
        return layout.title("Steady-state overhead: stock storage vs the plugin's, no switch running");
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        int topics = o.size(4, 2);
        Duration warmUp = Duration.ofSeconds(o.seconds(5));
        Duration window = Duration.ofSeconds(o.seconds(15));
        Map<String, AtomicLong> errors = new LinkedHashMap<>();
        errors.put(Sides.STOCK, new AtomicLong());
        errors.put(Sides.PLUGIN, new AtomicLong());
        List<Comparison> comparisons = new ArrayList<>();
        Map<String, Object> settings = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        try (Sides sides = Sides.stockAndPlugin(layout, 1, 1)) {
            // a round per side that is not counted (in either layout; its send errors are counted with the others):
            // a broker run with the full compiler (the process layout) is still compiling its hot paths in its first
            // saturated window: the first round of each side measured up to 37 % (batching off) and 71 % (on) below
            // its others
            sides.alternate(1, (side, s, round) -> {
                saturated(s, errors.get(side), "warm-off", round, topics, false, warmUp, window);
                return saturated(s, errors.get(side), "warm-on", round, topics, true, warmUp, window);
            });
            Map<String, List<Double>> off = sides.alternate(o.rounds(), (side, s, round) -> saturated(s,
                    errors.get(side), "off", round, topics, false, warmUp, window));
            Map<String, List<Double>> on = sides.alternate(o.rounds(), (side, s, round) -> saturated(s,
                    errors.get(side), "on", round, topics, true, warmUp, window));
            Stat offStock = Stat.of(off.get(Sides.STOCK));
            Stat offPlugin = Stat.of(off.get(Sides.PLUGIN));
            comparisons.add(Comparison.higherIsBetter("max publish throughput, batching off", "msg/s", offStock,
                    offPlugin, THROUGHPUT_GOAL));
            comparisons.add(Comparison.higherIsBetter("max publish throughput, batching on", "msg/s",
                    Stat.of(on.get(Sides.STOCK)), Stat.of(on.get(Sides.PLUGIN)), THROUGHPUT_GOAL));

            // well below saturation on both sides: a quarter of the lower of the two maxima. At half of it, on two
            // cores with both sides in one JVM, p99 swung from 9 to 266 ms between rounds of the same side (GC and
            // page-cache write-back): the spread drowned any difference between the sides
            int rate = Math.max(10, (int) (RATE_OF_MAX * Math.min(offStock.median(), offPlugin.median())));
            Map<String, List<Histogram>> latencies = new LinkedHashMap<>();
            latencies.put(Sides.STOCK, new ArrayList<>());
            latencies.put(Sides.PLUGIN, new ArrayList<>());
            sides.alternate(o.rounds(), (side, s, round) -> {
                PublishLoad.Latency l = PublishLoad.atRate(s.client(), topics(s, "rate", round, topics), rate,
                        PAYLOAD, warmUp, window);
                errors.get(side).addAndGet(l.errors());
                latencies.get(side).add(l.micros());
                return l;
            });
            comparisons.add(Comparison.reported("publish latency p50 at " + rate + " msg/s", "ms",
                    percentile(latencies.get(Sides.STOCK), 50), percentile(latencies.get(Sides.PLUGIN), 50)));
            comparisons.add(Comparison.lowerIsBetter("publish latency p99 at " + rate + " msg/s", "ms",
                    percentile(latencies.get(Sides.STOCK), 99), percentile(latencies.get(Sides.PLUGIN), 99), P99_GOAL));
            comparisons.add(Comparison.reported("publish latency p99.9 at " + rate + " msg/s", "ms",
                    percentile(latencies.get(Sides.STOCK), 99.9), percentile(latencies.get(Sides.PLUGIN), 99.9)));
            settings.put("fixedRateMessagesPerSecond", rate);
            pulsarPerf(o, sides, rate, window, comparisons, notes);
        }
        settings.put("topics", topics);
        settings.put("payloadBytes", PAYLOAD);
        settings.put("warmUpSeconds", warmUp.toSeconds());
        settings.put("windowSeconds", window.toSeconds());
        settings.put("rounds", o.rounds());
        settings.put("warmUpRounds", "1 per side, not counted (saturated once with batching off and on)");
        settings.put("maxPendingPerProducer", 1000);
        settings.put("fixedRateOfMax", RATE_OF_MAX);
        settings.put("shape", "ZooKeeper + 1 bookie + 1 broker per side; " + layout.description());
        errors.forEach((side, n) -> notes.add(side + ": " + n.get() + " send error(s)"));
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, Map.of());
    }

    /**
     * The same fixed rate through the real pulsar-perf (one topic, batching off), each side in turn: its own latency
     * figures, for comparison with what operators measure. Reported beside ours, with no goal of their own.
     */
    private static void pulsarPerf(BenchOptions o, Sides sides, int rate, Duration window, List<Comparison> comparisons,
                                   List<String> notes) throws Exception {
        java.util.Optional<String> cp = PulsarPerf.classpath();
        if (cp.isEmpty()) {
            notes.add("pulsar-perf not run: module bcs-bench-perf was not built (mvn install builds it)");
            return;
        }
        Map<String, List<PulsarPerf.Result>> perf = sides.alternate(o.rounds(), (side, s, round) ->
                PulsarPerf.produce(cp.get(), s.cluster().broker(0).brokerServiceUrl(),
                        "persistent://" + s.namespace() + "/steady-perf-r" + round, rate, PAYLOAD,
                        (int) window.toSeconds()));
        String label = "pulsar-perf produce at " + rate + " msg/s, batching off";
        comparisons.add(Comparison.reported(label + ": latency p50", "ms", perfStat(perf, Sides.STOCK,
                PulsarPerf.Result::p50), perfStat(perf, Sides.PLUGIN, PulsarPerf.Result::p50)));
        comparisons.add(Comparison.reported(label + ": latency p99", "ms", perfStat(perf, Sides.STOCK,
                PulsarPerf.Result::p99), perfStat(perf, Sides.PLUGIN, PulsarPerf.Result::p99)));
        comparisons.add(Comparison.reported(label + ": latency p99.9", "ms", perfStat(perf, Sides.STOCK,
                PulsarPerf.Result::p999), perfStat(perf, Sides.PLUGIN, PulsarPerf.Result::p999)));
        comparisons.add(Comparison.reported(label + ": throughput", "msg/s", perfStat(perf, Sides.STOCK,
                PulsarPerf.Result::messagesPerSecond), perfStat(perf, Sides.PLUGIN,
                PulsarPerf.Result::messagesPerSecond)));
        perf.forEach((side, rs) -> notes.add("pulsar-perf " + side + ": " + rs.stream()
                .mapToLong(PulsarPerf.Result::sent).sum() + " message(s) sent"));
    }

    private static Stat perfStat(Map<String, List<PulsarPerf.Result>> perf, String side,
                                 java.util.function.ToDoubleFunction<PulsarPerf.Result> figure) {
        return Stat.of(perf.get(side).stream().map(figure::applyAsDouble).toList());
    }

    /**
     * A saturation round writes gigabytes: its topics go once measured, so that their ledgers are deleted and the
     * bookies reclaim the space (the rounds after would otherwise run on a filling disk, and a full one turns the
     * bookie read-only).
     */
    private static void deleteTopics(Sides.Side s, List<String> topics) throws Exception {
        try (PulsarAdmin admin = s.cluster().newAdmin()) {
            for (String t : topics) {
                admin.topics().delete(t, true);
            }
        }
    }

    /**
     * The acknowledged rate of {@code side} kept full on fresh topics for one window (msg/s); its send errors added to
     * {@code errors}, its topics deleted once measured.
     */
    private static double saturated(Sides.Side s, AtomicLong errors, String kind, int round, int topics,
                                    boolean batching, Duration warmUp, Duration window) throws Exception {
        PublishLoad.Throughput t = PublishLoad.saturate(s.client(), topics(s, kind, round, topics), batching, PAYLOAD,
                1000, warmUp, window);
        errors.addAndGet(t.errors());
        deleteTopics(s, topics(s, kind, round, topics));
        return t.messagesPerSecond();
    }

    private static List<String> topics(Sides.Side s, String kind, int round, int count) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            names.add("persistent://" + s.namespace() + "/steady-" + kind + "-r" + round + "-t" + i);
        }
        return names;
    }

    /** The percentile of each round's histogram, in milliseconds. */
    private static Stat percentile(List<Histogram> rounds, double p) {
        List<Double> values = new ArrayList<>();
        for (Histogram h : rounds) {
            values.add(h.getValueAtPercentile(p) / 1000.0);
        }
        return Stat.of(values);
    }
}
