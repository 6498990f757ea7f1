package io.bcswitch.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * One figure measured on both sides of a scenario, its ratio (ours over the baseline) and the goal the ratio is held
 * to. Where both sides were measured in the same rounds (each round runs both back to back), the ratio is the median
 * of the per-round ratios: a machine that warms up or slows down over a run moves both sides of a round alike, where
 * it would move a ratio of the two sides' medians.
 *
 * @param metric   what was measured, in words
 * @param unit     its unit
 * @param baseline the reference side (stock Pulsar, or the operation the plugin replaces); null when there is none
 * @param ours     the plugin's side
 * @param ratio    the median of {@link #pairedRatios}; without pairs {@code ours.median / baseline.median}
 * @param goal     the goal for the ratio, e.g. {@code ">= 0.98"}
 * @param met      whether the ratio meets it
 */
public record Comparison(String metric, String unit, Stat baseline, Stat ours, double ratio, String goal,
                         boolean met) {

    /** A figure where more is better (throughput): the ratio must be at least {@code atLeast}. */
    public static Comparison higherIsBetter(String metric, String unit, Stat baseline, Stat ours, double atLeast) {
        double ratio = ratio(ours, baseline);
        return new Comparison(metric, unit, baseline, ours, ratio, ">= " + atLeast, ratio >= atLeast);
    }

    /** A figure where less is better (latency, time): the ratio must be at most {@code atMost}. */
    public static Comparison lowerIsBetter(String metric, String unit, Stat baseline, Stat ours, double atMost) {
        double ratio = ratio(ours, baseline);
        return new Comparison(metric, unit, baseline, ours, ratio, "<= " + atMost, ratio <= atMost);
    }

    /** A figure reported beside the others, with no goal of its own. */
    public static Comparison reported(String metric, String unit, Stat baseline, Stat ours) {
        return new Comparison(metric, unit, baseline, ours, ratio(ours, baseline), "none", true);
    }

    /** A figure with no baseline (stock Pulsar cannot do it), held to an absolute goal. */
    public static Comparison absolute(String metric, String unit, Stat ours, String goal, boolean met) {
        return new Comparison(metric, unit, null, ours, Double.NaN, goal, met);
    }

    private static double ratio(Stat ours, Stat baseline) {
        List<Double> paired = pairedRatios(ours, baseline);
        if (!paired.isEmpty()) {
            return Stat.of(paired).median();
        }
        return baseline.median() == 0 ? Double.NaN : ours.median() / baseline.median();
    }

    /**
     * Round by round, ours over the baseline; empty when the sides do not have a sample for each round alike (or a
     * round's baseline is zero or not a number).
     */
    static List<Double> pairedRatios(Stat ours, Stat baseline) {
        if (ours == null || baseline == null || ours.samples().size() != baseline.samples().size()) {
            return List.of();
        }
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < ours.samples().size(); i++) {
            double b = baseline.samples().get(i);
            double o = ours.samples().get(i);
            if (b == 0 || Double.isNaN(b) || Double.isNaN(o)) {
                return List.of();
            }
            out.add(o / b);
        }
        return out;
    }
}
