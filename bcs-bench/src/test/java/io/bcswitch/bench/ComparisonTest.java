package io.bcswitch.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ComparisonTest {

    @Test
    void sidesMeasuredInTheSameRoundsAreComparedRoundByRound() {
        // the medians of the sides are equal (12 and 12), but the plugin was faster in two of three rounds
        Stat stock = Stat.of(List.of(10.0, 100.0, 12.0));
        Stat plugin = Stat.of(List.of(12.0, 90.0, 11.0));
        Comparison c = Comparison.lowerIsBetter("latency", "ms", stock, plugin, 0.95);
        assertEquals(11.0 / 12.0, c.ratio(), 1e-9);
        assertTrue(c.met());
        assertEquals(List.of(1.2, 0.9, 11.0 / 12.0), Comparison.pairedRatios(plugin, stock));
        String row = rowOf(c);
        // ours was worse (slower) in one round of three
        assertTrue(row.contains("0.917 [0.900..1.200], worse in 1/3"), row);
        // where more is better, worse is below 1; a figure without a goal is not counted
        Comparison throughput = Comparison.higherIsBetter("t", "msg/s", stock, plugin, 0.99);
        assertTrue(rowOf(throughput).contains(", worse in 2/3"), rowOf(throughput));
        assertFalse(rowOf(Comparison.reported("r", "ms", stock, plugin)).contains("worse"));
    }

    private static String rowOf(Comparison c) {
        return String.join(" | ", Results.rows(new ScenarioResult("s", "t", java.util.Map.of(), java.util.Map.of(),
                List.of(c), List.of(), java.util.Map.of())).get(1));
    }

    @Test
    void withoutPairsTheMediansAreCompared() {
        Stat stock = Stat.of(List.of(10.0, 20.0));
        Stat plugin = Stat.of(List.of(30.0));
        assertEquals(List.of(), Comparison.pairedRatios(plugin, stock));
        assertEquals(2.0, Comparison.reported("x", "s", stock, plugin).ratio(), 1e-9);
        // a round whose baseline is zero has no ratio: no pairs at all rather than a partial set
        Stat zero = Stat.of(List.of(0.0, 20.0));
        Stat two = Stat.of(List.of(5.0, 10.0));
        assertEquals(List.of(), Comparison.pairedRatios(two, zero));
        assertFalse(Comparison.higherIsBetter("x", "msg/s", zero, two, 0.99).met());
    }
}
