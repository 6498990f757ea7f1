package io.bcswitch.bench;

import java.util.List;
import java.util.Map;

/**
 * What one scenario found: written as JSON (the source of docs/benchmarks.md) and as a table.
 *
 * @param scenario    its name
 * @param title       what it compares
 * @param machine     where it ran (cores, memory, JVM)
 * @param settings    the sizes and rates it ran with
 * @param comparisons every figure, both sides, ratio and goal
 * @param notes       what else it observed (errors counted, what saturated), in words
 * @param series      time series for the plots (per second), by name
 */
public record ScenarioResult(String scenario, String title, Map<String, Object> machine, Map<String, Object> settings,
                             List<Comparison> comparisons, List<String> notes, Map<String, Object> series) {
}
