package io.bcswitch.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One figure measured in several rounds: its median and spread. Rounds on a shared machine are noisy, so a figure
 * is never a single run.
 *
 * @param median  the median of the samples (the mean of the middle two for an even count)
 * @param min     the smallest sample
 * @param max     the largest sample
 * @param samples every round's value, in the order measured
 */
public record Stat(double median, double min, double max, List<Double> samples) {

    public static Stat of(List<Double> samples) {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("no samples");
        }
        List<Double> sorted = new ArrayList<>(samples);
        Collections.sort(sorted);
        int n = sorted.size();
        double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
        return new Stat(median, sorted.get(0), sorted.get(n - 1), List.copyOf(samples));
    }
}
