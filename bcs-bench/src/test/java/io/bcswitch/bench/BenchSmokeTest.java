package io.bcswitch.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every scenario in its smoke size, so that the benchmark code cannot rot. Nothing here is about speed: it checks
 * that each scenario measures both sides, writes its result file and table, and loses no message.
 */
class BenchSmokeTest {

    /** All but the scenarios on processes, which {@link ProcessBenchSmokeTest} runs beside this. */
    @Test
    void everyScenarioRunsInItsSmokeSizeAndWritesItsResult() throws Exception {
        smoke(new Bench().names().stream().filter(n -> !Sides.Layout.onProcesses(n)).toList(), Path.of("target", "bench-smoke"));
    }

    /**
     * Runs {@code names} in their smoke size into {@code out} (kept under target/ for a look after the build), checks
     * each result and the report built from them.
     */
    static void smoke(List<String> names, Path out) throws Exception {
        Bench bench = new Bench();
        List<ScenarioResult> results = new java.util.ArrayList<>();
        for (String name : names) {
            results.addAll(bench.run(name, new BenchOptions(true, 1, out)));
        }
        assertEquals(names, results.stream().map(ScenarioResult::scenario).toList());
        for (ScenarioResult r : results) {
            assertTrue(Files.exists(out.resolve(r.scenario() + ".txt")), r.scenario());
            ScenarioResult read = Results.read(out.resolve(r.scenario() + ".json"));
            assertEquals(r.comparisons(), read.comparisons(), "the result file reads back as written");
            assertEquals(r.notes(), read.notes());
            assertTrue(!r.comparisons().isEmpty(), r.scenario());
            for (Comparison c : r.comparisons()) {
                if (c.metric().contains("lost")) {
                    assertEquals(0.0, c.ours().median(), "nothing acknowledged is lost: " + c);
                    continue;
                }
                // a smoke run's figures mean nothing, its shape does: one sample a side, each a number >= 0; only
                // BUILD's and PROMOTE's phases can be too short to time in a smoke run (NaN, BuildAtScale)
                boolean untimedAllowed = r.scenario().equals("build");
                assertEquals(1, c.ours().samples().size(), c.metric());
                assertMeasured(c.ours(), untimedAllowed, c);
                if (c.baseline() != null) {
                    assertEquals(1, c.baseline().samples().size(), c.metric());
                    assertMeasured(c.baseline(), untimedAllowed, c);
                }
            }
            if (r.scenario().startsWith("steady")) {
                // the real pulsar-perf ran on both sides (module bcs-bench-perf resolves it before this module)
                assertTrue(r.comparisons().stream().anyMatch(c -> c.metric().startsWith("pulsar-perf")
                        && c.ours().median() > 0 && c.baseline().median() > 0), r.comparisons().toString());
            }
            if (r.scenario().equals("inventory")) {
                inventoryStaysWithinItsLimitAndMissesNothing(r);
            }
            if (r.scenario().equals("build")) {
                // a throughput-over-time chart per data set (small ledgers, large ones), both sides in each
                assertEquals(2, Report.charts(r.series()).size(), r.series().keySet().toString());
                Report.charts(r.series()).values().forEach(lines -> assertEquals(2, lines.size(), lines.toString()));
            }
            for (String note : r.notes()) {
                if (note.contains("send error")) {
                    assertTrue(note.endsWith(": 0 send error(s)"), note);
                }
            }
            String table = Files.readString(out.resolve(r.scenario() + ".txt"));
            System.out.println(table); // in the test's output file: what a smoke run measured, for a look
            r.comparisons().forEach(c -> assertTrue(table.contains(c.metric()), table));
        }

        // the report is built from the result files alone, with a plot per series
        Path md = Report.write(out, out.resolve("docs"), names);
        String report = Files.readString(md);
        for (ScenarioResult r : results) {
            assertTrue(report.contains("## " + r.title()), report);
            for (int n = 1; n <= Report.charts(r.series()).size(); n++) {
                Path png = out.resolve("docs/bench/" + r.scenario() + "-" + n + ".png");
                assertTrue(Files.size(png) > 0, png.toString());
                assertTrue(report.contains("(bench/" + r.scenario() + "-" + n + ".png)"), report);
            }
        }
    }

    @Test
    void theCutoverRunsAgainstARunningClusterByItsUrls() throws Exception {
        Path out = Path.of("target", "bench-smoke-remote");
        try (Sides sides = Sides.start(java.util.Map.of(Sides.PLUGIN, new Sides.Spec(true, 2, 1, 1,
                java.util.Map.of())))) {
            Sides.Side s = sides.all().get(Sides.PLUGIN);
            var broker = s.cluster().broker(0);
            RemoteCutover remote = new RemoteCutover(new RemoteCutover.Target(broker.brokerServiceUrl(),
                    broker.webServiceUrl(), s.namespace(), null, null));
            ScenarioResult r = remote.run(new BenchOptions(true, 2, out));
            Results.write(r, out);
            assertEquals(3, r.comparisons().size(), r.comparisons().toString());
            for (Comparison c : r.comparisons()) {
                assertEquals(2, c.ours().samples().size(), c.metric());
            }
            assertTrue(r.comparisons().get(0).ours().min() > 0, "each round timed a switch: " + r.comparisons());
            try (var admin = Sides.admin(s.cluster())) {
                io.bcswitch.client.Status st = admin.status();
                // there and back: two switches, each one's migration finished, back on the first cluster
                assertEquals(2, st.epoch());
                assertEquals(Sides.clusterName(0), st.activeCluster());
                assertEquals("DONE", st.migration().phase(), st.migration().toString());
            }
            try (var pulsar = s.cluster().newAdmin()) {
                assertEquals(List.of(), pulsar.topics().getList(s.namespace()).stream()
                        .filter(t -> t.contains("bcs-bench-cutover-t")).toList(), "the bench's topics are deleted");
            }
            r.notes().stream().filter(n -> n.contains("send error")).forEach(n ->
                    assertTrue(n.endsWith(": 0 send error(s)"), n));
        }
    }

    private static void assertMeasured(Stat s, boolean untimedAllowed, Comparison c) {
        double v = s.median();
        assertTrue(v >= 0 && !Double.isInfinite(v) || untimedAllowed && Double.isNaN(v), "not a figure: " + c);
    }

    /**
     * Not a time: the broker's inventory never had more reads in flight than its setting, did reach it (so the
     * figure is the limit's doing, not a small load's), and the drain report counted every synthetic ledger.
     */
    private static void inventoryStaysWithinItsLimitAndMissesNothing(ScenarioResult r) {
        int checked = 0;
        for (Comparison c : r.comparisons()) {
            if (c.metric().startsWith("most inventory reads in flight")) {
                int limit = Integer.parseInt(c.metric().replaceAll(".*\\(limit (\\d+)\\)$", "$1"));
                assertTrue(c.met(), c.toString());
                assertEquals(limit, c.ours().median(), 0.0, "the limit was reached: " + c);
                checked++;
            }
        }
        assertEquals(2, checked, "both settings of the smoke run");
        r.notes().forEach(n -> assertTrue(!n.contains(" failed after "), n));
        int synthetic = ((Number) r.settings().get("managedLedgers")).intValue()
                + ((Number) r.settings().get("schemas")).intValue();
        String counted = r.notes().stream().filter(n -> n.startsWith("drain report: ")).findFirst().orElseThrow();
        int n = Integer.parseInt(counted.replaceAll("drain report: (\\d+) ledger.*", "$1"));
        assertTrue(n >= synthetic, counted + ", synthetic ledgers: " + synthetic);
    }
}
