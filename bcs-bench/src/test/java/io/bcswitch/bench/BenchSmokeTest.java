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

    @Test
    void everyScenarioRunsInItsSmokeSizeAndWritesItsResult() throws Exception {
        // kept under target/ for a look after the build
        Path out = Path.of("target", "bench-smoke");
        Bench bench = new Bench();
        List<ScenarioResult> results = bench.run("all", new BenchOptions(true, 1, out));
        assertEquals(bench.names(), results.stream().map(ScenarioResult::scenario).toList());
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
                // a smoke run's phases can be too short to time (NaN): its figures mean nothing, its shape does
                assertEquals(1, c.ours().samples().size(), c.metric());
                assertTrue(!(c.ours().median() < 0), "no negative figure: " + c);
                if (c.baseline() != null) {
                    assertEquals(1, c.baseline().samples().size(), c.metric());
                    assertTrue(!(c.baseline().median() < 0), "no negative figure: " + c);
                }
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
        Path md = Report.write(out, out.resolve("docs"), bench.names());
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
}
