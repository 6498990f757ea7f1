package io.bcswitch.bench;

import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.Status;
import io.bcswitch.client.SwitchOutcome;
import io.bcswitch.config.ConfigKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Scenario 2: the cutover at scale. Topics publishing at a steady rate, on 1 and on 3 brokers; on the plugin's side a
 * switch to the other bookie cluster, from the switch call until every broker reports that every topic writes its
 * newest ledger on the target; on the stock side, as the baseline, the same topics rolled over to new ledgers (what
 * the cutover does to each topic) at the cutover's pace. Publish latency before and during each, per second too.
 */
final class CutoverAtScale implements Scenario {
    static final int PAYLOAD = 1024;
    private static final String PREFIX = "cutover-t";

    private final Sides.Layout layout;

    /** {@code cutover} in one JVM, {@code cutover-processes} on a JVM per broker, bookie and ZooKeeper. */
    CutoverAtScale(Sides.Layout layout) {
        this.layout = layout;
    }

    /** One shape: how many producing topics on how many brokers. */
    record Shape(int topics, int brokers) {
    }

    /** What one round measured on one side. */
    record Round(double seconds, Histogram before, Histogram during, long errors, List<PacedLoad.Second> series) {
    }

    /** What a round does to the topics while the load runs (a switch, or the stock rollover). */
    interface Action {
        void run() throws Exception;
    }

    /**
     * One round: {@code topics} publishing at {@code rate} (warm-up, then the "before" phase), then {@code action},
     * timed, then a tail; latencies before and during the action, and per second.
     */
    static Round measure(org.apache.pulsar.client.api.PulsarClient client, List<String> topics, int rate, int warm,
                         int before, int tail, Action action) throws Exception {
        try (PacedLoad load = new PacedLoad(client, topics, rate, PAYLOAD)) {
            load.start();
            Thread.sleep(TimeUnit.SECONDS.toMillis(warm));
            load.mark("before");
            Thread.sleep(TimeUnit.SECONDS.toMillis(before));
            load.mark("during");
            long t0 = System.nanoTime();
            action.run();
            double seconds = (System.nanoTime() - t0) / 1e9;
            load.mark("after");
            Thread.sleep(TimeUnit.SECONDS.toMillis(tail));
            load.stop();
            return new Round(seconds, load.phase("before"), load.phase("during"), load.errors(), load.seconds());
        }
    }

    @Override
    public String name() {
        return layout.scenario("cutover");
    }

    @Override
    public String title() {
        return layout.title("Cutover at scale: a switch's cutover vs stock Pulsar rolling the same topics over");
    }

    /** Overrides the shapes (JAVA_OPTS=-Dbench.cutover.shapes=50x1,100x3), to look into one closely. */
    static final String SHAPES_PROPERTY = "bench.cutover.shapes";

    List<Shape> layoutShapes(BenchOptions o) {
        if (layout == Sides.Layout.PROCESSES && !o.smoke() && System.getProperty(SHAPES_PROPERTY) == null) {
            // where one JVM could not tell the sides apart (several brokers), and one broker to compare with
            return List.of(new Shape(100, 1), new Shape(1000, 1), new Shape(100, 3), new Shape(1000, 3));
        }
        return shapes(o);
    }

    static List<Shape> shapes(BenchOptions o) {
        String given = System.getProperty(SHAPES_PROPERTY);
        if (given != null && !given.isBlank()) {
            List<Shape> shapes = new ArrayList<>();
            for (String s : given.split(",")) {
                String[] tb = s.trim().split("x");
                shapes.add(new Shape(Integer.parseInt(tb[0]), Integer.parseInt(tb[1])));
            }
            return shapes;
        }
        return o.smoke() ? List.of(new Shape(10, 1))
                : List.of(new Shape(100, 1), new Shape(300, 1), new Shape(1000, 1), new Shape(100, 3),
                        new Shape(300, 3), new Shape(1000, 3));
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        int pace = Integer.parseInt(ConfigKey.CUTOVER_TOPICS_PER_SECOND.defaultValue());
        int warm = o.seconds(3);
        int before = o.seconds(3);
        int tail = o.seconds(2);
        List<Comparison> comparisons = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Map<String, Object> series = new LinkedHashMap<>();
        for (Shape shape : layoutShapes(o)) {
            int rate = Math.max(o.size(500, 50), 2 * shape.topics());
            String label = shape.topics() + " topics, " + shape.brokers() + " broker(s)";
            Map<String, List<Round>> rounds;
            try (Sides sides = Sides.stockAndPlugin(layout, shape.brokers(), 2)) {
                rounds = sides.alternate(o.rounds(), (side, s, round) -> {
                    List<String> topics = new ArrayList<>();
                    for (int i = 0; i < shape.topics(); i++) {
                        topics.add("persistent://" + s.namespace() + "/" + PREFIX + i);
                    }
                    Round r = measure(s.client(), topics, rate, warm, before, tail, () -> {
                        if (side.equals(Sides.PLUGIN)) {
                            try (BookieClustersAdmin admin = Sides.admin(s.cluster())) {
                                switchAndAwaitCutover(admin, Sides.otherCluster(admin.status().activeCluster()));
                            }
                        } else {
                            StockRollover.rollAll(s.cluster(), "/" + PREFIX, pace)
                                    .get(5, TimeUnit.MINUTES);
                        }
                    });
                    if (side.equals(Sides.PLUGIN)) {
                        try (BookieClustersAdmin admin = Sides.admin(s.cluster())) {
                            awaitMigration(admin); // its copying must not run into the next round, of either side
                        }
                    }
                    return r;
                });
            }
            Map<String, Stat> time = new LinkedHashMap<>();
            Map<String, Stat> max = new LinkedHashMap<>();
            Map<String, Stat> p99 = new LinkedHashMap<>();
            Map<String, Stat> p99Before = new LinkedHashMap<>();
            rounds.forEach((side, rs) -> {
                time.put(side, Stat.of(rs.stream().map(Round::seconds).toList()));
                max.put(side, Stat.of(rs.stream().map(r -> r.during().getMaxValue() / 1000.0).toList()));
                p99.put(side, Stat.of(rs.stream().map(r -> r.during().getValueAtPercentile(99) / 1000.0).toList()));
                p99Before.put(side, Stat.of(rs.stream().map(r -> r.before().getValueAtPercentile(99) / 1000.0)
                        .toList()));
                long errors = rs.stream().mapToLong(Round::errors).sum();
                notes.add(label + ", " + side + ": " + errors + " send error(s)");
                // "<chart> | <line>": the report draws both sides of a shape in one chart
                series.put(label + ", round 1 | " + side, rs.get(0).series());
            });
            Comparison duration = Comparison.reported(label + ": time to move every topic to a new ledger", "s",
                    time.get(Sides.STOCK), time.get(Sides.PLUGIN));
            if (shape.topics() == 1000 && shape.brokers() == 3) {
                double s = time.get(Sides.PLUGIN).median();
                duration = new Comparison(duration.metric(), duration.unit(), duration.baseline(), duration.ours(),
                        duration.ratio(), "cutover <= 5 s", s <= 5);
            }
            comparisons.add(duration);
            comparisons.add(Comparison.lowerIsBetter(label + ": max publish latency during it", "ms",
                    max.get(Sides.STOCK), max.get(Sides.PLUGIN), 1.5));
            comparisons.add(Comparison.reported(label + ": publish latency p99 during it", "ms",
                    p99.get(Sides.STOCK), p99.get(Sides.PLUGIN)));
            comparisons.add(Comparison.reported(label + ": publish latency p99 before it", "ms",
                    p99Before.get(Sides.STOCK), p99Before.get(Sides.PLUGIN)));
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("shapes", layoutShapes(o).stream().map(s -> s.topics() + "x" + s.brokers()).toList());
        settings.put("ratePerSecond", "max(" + o.size(500, 50) + ", 2 per topic)");
        settings.put("payloadBytes", PAYLOAD);
        settings.put("cutoverTopicsPerSecond", pace);
        settings.put("rounds", o.rounds());
        if (!Sides.pluginConfig().isEmpty()) {
            settings.put("pluginConfig", Sides.pluginConfig());
        }
        settings.put("secondsWarmUpBeforeTail", List.of(warm, before, tail));
        settings.put("shape", "per side: ZooKeeper, brokers, 1 bookie per bookie cluster (plugin: 2 clusters); "
                + layout.description());
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, series);
    }

    /** Waits until the migration after the latest switch has ended (outside any measurement). */
    static void awaitMigration(BookieClustersAdmin admin) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (System.nanoTime() < deadline) {
            Status st = admin.status();
            if (st.migration() != null && st.migration().switchEpoch() == st.epoch()
                    && st.migration().phase().startsWith("DONE")) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the migration after the switch did not end within 10 minutes");
    }

    /** Switches to {@code target} and waits until every broker finished its cutover. */
    static void switchAndAwaitCutover(BookieClustersAdmin admin, String target) throws Exception {
        SwitchOutcome out = admin.switchTo(target);
        long epoch = out.directive().epoch();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (System.nanoTime() < deadline) {
            Status now = admin.status();
            if (now.epoch() >= epoch && now.cutoverComplete()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("the cutover to " + target + " did not finish within 5 minutes");
    }
}
