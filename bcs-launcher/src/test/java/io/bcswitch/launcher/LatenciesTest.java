package io.bcswitch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Percentiles of what was recorded, within HdrHistogram's 3 significant digits; -1 when nothing was. */
class LatenciesTest {

    @Test
    void percentilesOfWhatWasRecordedSoFar() {
        Latencies l = new Latencies();
        assertEquals(new Latencies.Summary(0, -1, -1, -1), l.summary());
        for (int ms = 1; ms <= 1000; ms++) {
            l.add(TimeUnit.MILLISECONDS.toNanos(ms));
        }
        Latencies.Summary s = l.summary();
        assertEquals(1000, s.count());
        assertEquals(500e6, s.p50(), 500e6 * 0.001);
        assertEquals(990e6, s.p99(), 990e6 * 0.001);
        assertEquals(1000e6, s.max(), 1000e6 * 0.001);
        // a later look includes what came since, as well as what was there
        l.add(TimeUnit.MINUTES.toNanos(20)); // beyond the range: counted at its top
        Latencies.Summary later = l.summary();
        assertEquals(1001, later.count());
        assertEquals(TimeUnit.MINUTES.toNanos(10), later.max(), TimeUnit.MINUTES.toNanos(10) * 0.001);
    }
}
