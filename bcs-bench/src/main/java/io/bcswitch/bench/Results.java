package io.bcswitch.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes a scenario's result as {@code <scenario>.json} and as a table ({@code <scenario>.txt}). */
final class Results {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Results() {
    }

    static void write(ScenarioResult r, Path dir) throws IOException {
        Files.createDirectories(dir);
        JSON.writeValue(dir.resolve(r.scenario() + ".json").toFile(), r);
        Files.writeString(dir.resolve(r.scenario() + ".txt"), table(r));
    }

    static ScenarioResult read(Path file) throws IOException {
        return JSON.readValue(file.toFile(), ScenarioResult.class);
    }

    /** The result as people read it: one row per figure, median [min..max] on each side, ratio, goal. */
    static String table(ScenarioResult r) {
        StringBuilder s = new StringBuilder();
        s.append(r.title()).append(" (").append(r.scenario()).append(")\n");
        s.append("machine: ").append(inline(r.machine())).append('\n');
        s.append("settings: ").append(inline(r.settings())).append('\n');
        List<String[]> rows = rows(r);
        int[] width = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                boolean last = i + 1 == row.length;
                s.append(last ? row[i] + "\n" : String.format(Locale.ROOT, "%-" + width[i] + "s  ", row[i]));
            }
        }
        for (String n : r.notes()) {
            s.append("note: ").append(n).append('\n');
        }
        return s.toString();
    }

    /** A header row, then one row per figure: metric, unit, both sides, ratio, goal, met. */
    static List<String[]> rows(ScenarioResult r) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"metric", "unit", "baseline median [min..max]", "ours median [min..max]",
            "ratio [per-round min..max]", "goal", "met"});
        for (Comparison c : r.comparisons()) {
            rows.add(new String[] {c.metric(), c.unit(), stat(c.baseline()), stat(c.ours()), ratio(c), c.goal(),
                c.goal().equals("none") ? "-" : c.met() ? "yes" : "NO"});
        }
        return rows;
    }

    /**
     * The ratio, and with more than one paired round the range of the per-round ratios; for a figure with a goal, also
     * in how many rounds ours was on the wrong side of the baseline (below it where more is better, above it where
     * less is): a median can hide a side that loses every round by a little.
     */
    private static String ratio(Comparison c) {
        if (Double.isNaN(c.ratio())) {
            return "-";
        }
        String median = String.format(Locale.ROOT, "%.3f", c.ratio());
        List<Double> paired = Comparison.pairedRatios(c.ours(), c.baseline());
        if (paired.size() < 2) {
            return median;
        }
        Stat range = Stat.of(paired);
        String s = median + String.format(Locale.ROOT, " [%.3f..%.3f]", range.min(), range.max());
        boolean higherIsBetter = c.goal().startsWith(">=");
        if (!higherIsBetter && !c.goal().startsWith("<=")) {
            return s;
        }
        long worse = paired.stream().filter(x -> higherIsBetter ? x < 1 : x > 1).count();
        return s + ", worse in " + worse + "/" + paired.size();
    }

    static String inline(Map<String, Object> m) {
        StringBuilder s = new StringBuilder();
        m.forEach((k, v) -> s.append(s.length() == 0 ? "" : ", ").append(k).append('=').append(v));
        return s.toString();
    }

    private static String stat(Stat st) {
        if (st == null) {
            return "-";
        }
        return number(st.median()) + " [" + number(st.min()) + ".." + number(st.max()) + "]";
    }

    static String number(double v) {
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
    }
}
