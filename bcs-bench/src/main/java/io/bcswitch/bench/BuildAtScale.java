package io.bcswitch.bench;

import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.BookieClustersAdminException;
import io.bcswitch.client.Migration;
import io.bcswitch.client.Status;
import io.bcswitch.config.ConfigKey;
import io.bcswitch.config.SwitchConfig;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.apache.pulsar.common.schema.SchemaType;

/**
 * Scenario 3: the migration's BUILD and PROMOTE at scale, at the plugin's default rate and concurrency and
 * unbounded. Two data sets, each on clusters of its own: many small metadata ledgers (schema versions, one ledger
 * each) and a few large compacted ledgers. Each round switches to the next bookie cluster, so every round moves the
 * whole data set again; publish latency on a few topics before and during BUILD.
 */
final class BuildAtScale implements Scenario {
    /** Ledgers one cleanup call deletes at most. */
    private static final int CLEANUP_BATCH = 2_000;
    static final String DEFAULTS = "defaults";
    static final String UNBOUNDED = "unbounded";
    /** The load's window before the switch, the baseline of the p99 during BUILD. */
    static final int BEFORE_SECONDS = 30;

    /** What one round measured. */
    private record Round(double buildSeconds, int copied, long bytes, double promoteSeconds, int promoted,
                         Histogram before, Histogram during, List<Progress> progress) {
    }

    /**
     * One second of a BUILD, for the plot: seconds since BUILD began and what was copied in that second.
     *
     * @param second          offset from the start of BUILD
     * @param ledgersPerSecond ledgers copied since the previous sample, per second
     * @param mbPerSecond      MB copied since the previous sample, per second
     */
    record Progress(int second, double ledgersPerSecond, double mbPerSecond) {
    }

    @Override
    public String name() {
        return "build";
    }

    @Override
    public String title() {
        return "BUILD and PROMOTE at scale: the plugin's default migration rate vs unbounded";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        int smallLedgers = o.size(10_000, 20);
        int largeLedgers = o.size(10, 1);
        int largeMb = o.size(10, 1);
        List<Comparison> comparisons = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Map<String, Object> series = new LinkedHashMap<>();
        for (boolean large : new boolean[] {false, true}) {
            String data = large ? largeLedgers + " compacted ledger(s) of " + largeMb + " MB"
                    : smallLedgers + " schema ledgers";
            Map<String, Sides.Spec> specs = new LinkedHashMap<>();
            // one bookie cluster more than rounds: each round moves the data on to a cluster that never held it.
            // Moving it back to where cleanup deleted it fails: a bookie refuses, for 7 days or until it restarts,
            // to take a ledger id again that it wrote and then deleted (BookKeeper's guard against zombie writers)
            int clusters = o.rounds() + 1;
            specs.put(DEFAULTS, new Sides.Spec(true, clusters, 1, 1, Map.of()));
            specs.put(UNBOUNDED, new Sides.Spec(true, clusters, 1, 1, Map.of(
                    SwitchConfig.PREFIX + ConfigKey.MIGRATION_CONCURRENCY.name(), "16",
                    SwitchConfig.PREFIX + ConfigKey.MIGRATION_BYTES_PER_SECOND.name(), "0")));
            Map<String, List<Round>> rounds;
            try (Sides sides = Sides.start(specs)) {
                for (Map.Entry<String, Sides.Side> e : sides.all().entrySet()) {
                    Sides.Side s = e.getValue();
                    long t0 = System.nanoTime();
                    try (PulsarAdmin admin = s.cluster().newAdmin()) {
                        // the load's data stays on each cluster: a cleaned-up cluster is never drained, so never
                        // retired, and the next round can switch back to it
                        admin.namespaces().setRetention(s.namespace(), new RetentionPolicies(-1, -1));
                    }
                    if (large) {
                        compactedLedgers(s, largeLedgers, largeMb);
                    } else {
                        schemaLedgers(s, smallLedgers);
                    }
                    notes.add(data + ", " + e.getKey() + ": created in " + Results.number((System.nanoTime() - t0)
                            / 1e9) + " s");
                }
                rounds = sides.alternate(o.rounds(), (side, s, round) -> migrate(s, o, clusters,
                        round == o.rounds() - 1));
            }
            String what = "BUILD of " + data;
            Map<String, Stat> rate = new LinkedHashMap<>();
            Map<String, Stat> mbs = new LinkedHashMap<>();
            Map<String, Stat> promote = new LinkedHashMap<>();
            Map<String, Stat> p99Ratio = new LinkedHashMap<>();
            Map<String, Stat> p99Before = new LinkedHashMap<>();
            Map<String, Stat> p99During = new LinkedHashMap<>();
            rounds.forEach((side, rs) -> {
                rate.put(side, Stat.of(rs.stream().map(r -> perSecond(r.copied(), r.buildSeconds())).toList()));
                mbs.put(side, Stat.of(rs.stream().map(r -> perSecond(r.bytes() / 1e6, r.buildSeconds())).toList()));
                promote.put(side, Stat.of(rs.stream().map(r -> perSecond(r.promoted(), r.promoteSeconds()))
                        .toList()));
                p99Ratio.put(side, Stat.of(rs.stream().map(r -> ratio(p99(r.during()), p99(r.before()))).toList()));
                p99Before.put(side, Stat.of(rs.stream().map(r -> p99(r.before())).toList()));
                p99During.put(side, Stat.of(rs.stream().map(r -> p99(r.during())).toList()));
                notes.add(what + ", " + side + ": copied " + rs.stream().map(Round::copied).toList()
                        + " ledger(s) per round");
                // "<chart> | <line>": both sides of one data set in one chart, in the unit that data set is judged by
                String unit = large ? "mbPerSecond" : "ledgersPerSecond";
                series.put(what + ", round 1 (" + (large ? "MB/s" : "ledgers/s") + ") | " + side,
                        rs.get(0).progress().stream().map(p -> Map.of("second", p.second(), unit,
                                large ? p.mbPerSecond() : p.ledgersPerSecond())).toList());
            });
            if (large) {
                Stat u = mbs.get(UNBOUNDED);
                comparisons.add(new Comparison(what + ": MB/s", "MB/s", mbs.get(DEFAULTS), u,
                        ratio(u.median(), mbs.get(DEFAULTS).median()), "unbounded >= 100 MB/s", u.median() >= 100));
            } else {
                Stat u = rate.get(UNBOUNDED);
                comparisons.add(new Comparison(what + ": ledgers/s", "ledgers/s", rate.get(DEFAULTS), u,
                        ratio(u.median(), rate.get(DEFAULTS).median()), "unbounded >= 1000/s", u.median() >= 1000));
                Stat pu = promote.get(UNBOUNDED);
                comparisons.add(new Comparison("PROMOTE of " + data + ": relocations/s", "relocations/s",
                        promote.get(DEFAULTS), pu, ratio(pu.median(), promote.get(DEFAULTS).median()), ">= 2000/s",
                        pu.median() >= 2000 && promote.get(DEFAULTS).median() >= 2000));
            }
            Stat d = p99Ratio.get(DEFAULTS);
            comparisons.add(new Comparison(what + ": publish p99 during BUILD / before", "ratio", d,
                    p99Ratio.get(UNBOUNDED), ratio(p99Ratio.get(UNBOUNDED).median(), d.median()), "defaults <= 1.1",
                    d.median() <= 1.1));
            comparisons.add(Comparison.reported(what + ": publish p99 before the switch ("
                    + o.seconds(BEFORE_SECONDS) + " s)", "ms", p99Before.get(DEFAULTS), p99Before.get(UNBOUNDED)));
            comparisons.add(Comparison.reported(what + ": publish p99 during BUILD", "ms", p99During.get(DEFAULTS),
                    p99During.get(UNBOUNDED)));
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("smallLedgers", smallLedgers);
        settings.put("largeLedgers", largeLedgers + " x " + largeMb + " MB");
        settings.put("defaults", "migrationConcurrency=" + ConfigKey.MIGRATION_CONCURRENCY.defaultValue()
                + ", migrationBytesPerSecond=" + ConfigKey.MIGRATION_BYTES_PER_SECOND.defaultValue());
        settings.put("unbounded", "migrationConcurrency=16, migrationBytesPerSecond=0");
        settings.put("rounds", o.rounds());
        settings.put("load", "4 topics, 200 msg/s in all, 1 KB; p99 before: the " + o.seconds(BEFORE_SECONDS)
                + " s before the switch");
        settings.put("shape", "per side: ZooKeeper, rounds + 1 bookie clusters of 1 bookie (each round moves the "
                + "data on to the next), 1 broker with the plugin");
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, series);
    }

    /** p99 in ms; NaN for an empty histogram (a phase too short to hold a message measures nothing). */
    private static double p99(Histogram h) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1000.0;
    }

    /** {@code a / b}, NaN unless both are measured and {@code b} is not 0. */
    private static double ratio(double a, double b) {
        return b == 0 || Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : a / b;
    }

    /** Per second over {@code seconds}; NaN when the phase was too short to time (it fell between two polls). */
    private static double perSecond(double amount, double seconds) {
        return seconds < 0.1 ? Double.NaN : amount / seconds;
    }

    /**
     * Switches to the next cluster under a light load and follows its migration from BUILD to its end.
     *
     * @param last the side's last round: no round follows that would find what cleanup leaves behind
     */
    private static Round migrate(Sides.Side s, BenchOptions o, int clusters, boolean last) throws Exception {
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            topics.add("persistent://" + s.namespace() + "/build-load-" + i);
        }
        try (BookieClustersAdmin admin = Sides.admin(s.cluster());
             PacedLoad load = new PacedLoad(s.client(), topics, 200, 1024)) {
            load.start();
            Thread.sleep(TimeUnit.SECONDS.toMillis(o.seconds(2)));
            load.mark("before");
            // long enough for a p99 that one stall does not make (6,000 samples at 200 msg/s: the 60th slowest).
            // BUILD at the defaults takes minutes; unbounded it takes seconds, so its "during" window is the short
            // one there and its p99 the less certain
            Thread.sleep(TimeUnit.SECONDS.toMillis(o.seconds(BEFORE_SECONDS)));
            load.mark("cutover");
            String source = admin.status().activeCluster();
            String target = Sides.nextCluster(source, clusters);
            long epoch = admin.switchTo(target).directive().epoch();
            long buildAt = 0;
            long promoteAt = 0;
            List<Progress> progress = new ArrayList<>();
            long sampledAt = 0;
            int copiedAt = 0;
            long bytesAt = 0;
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
            while (System.nanoTime() < deadline) {
                Status st;
                try {
                    st = admin.status();
                } catch (BookieClustersAdminException e) {
                    System.err.println(ThreadDump.of("status did not answer during the migration: " + e.getMessage()));
                    throw e;
                }
                Migration m = st.migration();
                if (m != null && m.switchEpoch() == epoch) {
                    long now = System.nanoTime();
                    if (buildAt == 0 && !m.phase().equals("PENDING")) {
                        buildAt = now;
                        sampledAt = now;
                        load.mark("during");
                    }
                    if (buildAt != 0 && promoteAt == 0 && now - sampledAt >= TimeUnit.SECONDS.toNanos(1)) {
                        double dt = (now - sampledAt) / 1e9;
                        progress.add(new Progress((int) Math.round((now - buildAt) / 1e9),
                                (m.copied() - copiedAt) / dt, (m.bytesCopied() - bytesAt) / 1e6 / dt));
                        sampledAt = now;
                        copiedAt = m.copied();
                        bytesAt = m.bytesCopied();
                    }
                    if (promoteAt == 0 && !m.phase().equals("PENDING") && !m.phase().equals("BUILD")) {
                        promoteAt = now;
                        load.mark("after");
                    }
                    if (m.phase().equals("DONE_WITH_FAILURES")) {
                        throw new IllegalStateException("the migration ended with failures: " + m.issues());
                    }
                    if (m.phase().equals("DONE")) {
                        double promoteSeconds = (now - promoteAt) / 1e9;
                        load.stop();
                        // the originals go, so that the next round (a switch back) copies everything again rather
                        // than finding it already there; the retained load data keeps the cluster from being retired
                        cleanUp(admin, source, !last);
                        return new Round((promoteAt - buildAt) / 1e9, m.copied(),
                                m.bytesCopied(), promoteSeconds, m.promoted(), load.phase("before"),
                                load.phase("during"), progress);
                    }
                    if (!m.phase().equals("PENDING") && !m.phase().equals("BUILD") && !m.phase().equals("PROMOTE")) {
                        throw new IllegalStateException("the migration ended " + m.phase());
                    }
                }
                Thread.sleep(50);
            }
            throw new IllegalStateException("the migration to " + target + " did not finish within 30 minutes");
        }
    }

    /**
     * Deletes every original the migration relocated off {@code source}, a bounded number per call as an operator
     * would: one call deleting 10,000 ledgers takes about a minute on a small machine, past the REST API's 60 s, and
     * would answer 503 while the deletion goes on. Originals a broker still holds open (a compacted topic's reader,
     * until its topic reloads on the copy) are kept by cleanup and taken on a later pass; the next round would
     * otherwise find them "already present" and only verify them. After a side's last round nothing needs them gone:
     * one pass runs (so the cleanup path is exercised in every run) and held originals are left, rather than waiting
     * up to a minute per side for readers that nothing measures.
     *
     * @param waitForHeld take originals held open on a later pass, as the next round needs
     */
    private static void cleanUp(BookieClustersAdmin admin, String source, boolean waitForHeld) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (true) {
            var cleaned = admin.cleanup(source, false, CLEANUP_BATCH, true);
            if (cleaned.deprecated() || !cleaned.errors().isEmpty()) {
                throw new IllegalStateException("cleanup of " + source + " did not leave it usable for the next "
                        + "round: " + cleaned);
            }
            if (cleaned.deleted() >= CLEANUP_BATCH) {
                continue; // more may be left
            }
            List<String> held = cleaned.notes() == null ? List.of()
                    : cleaned.notes().stream().filter(n -> n.contains(" is open on broker")).toList();
            if (held.isEmpty() || !waitForHeld) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cleanup of " + source + " still keeps originals held open after 5 "
                        + "minutes: " + held);
            }
            Thread.sleep(2_000);
        }
    }

    /** {@code count} schema ledgers: one schema version each on as many topics, uploaded a few at a time. */
    private static void schemaLedgers(Sides.Side s, int count) throws Exception {
        try (PulsarAdmin admin = s.cluster().newAdmin()) {
            Semaphore window = new Semaphore(16);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                window.acquire();
                String json = "{\"type\":\"record\",\"name\":\"R" + i + "\",\"fields\":[{\"name\":\"f\",\"type\":"
                        + "\"string\"}]}";
                SchemaInfo info = SchemaInfo.builder().name("R" + i).type(SchemaType.JSON)
                        .schema(json.getBytes(StandardCharsets.UTF_8)).build();
                all.add(admin.schemas().createSchemaAsync("persistent://" + s.namespace() + "/schema-" + i, info)
                        .whenComplete((v, e) -> window.release()));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
        }
    }

    /** {@code count} compacted topics of {@code mb} MB each. */
    private static void compactedLedgers(Sides.Side s, int count, int mb) throws Exception {
        try (PulsarAdmin admin = s.cluster().newAdmin()) {
            for (int t = 0; t < count; t++) {
                CompactedTopic.create(s.client(), admin, "persistent://" + s.namespace() + "/compacted-" + t, mb);
            }
        }
    }
}
