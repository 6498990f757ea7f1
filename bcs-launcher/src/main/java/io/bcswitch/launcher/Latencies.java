package io.bcswitch.launcher;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Publish latencies of one phase, recorded into an HdrHistogram (3 significant digits, 1 µs to 10 min): recording
 * from many producer callbacks takes no lock and keeps no per-message array.
 */
final class Latencies {
    private static final long MAX_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final Recorder recorder = new Recorder(TimeUnit.MICROSECONDS.toNanos(1), MAX_NANOS, 3);
    /** Everything recorded so far (the recorder hands out what came since the last look). */
    private final Histogram total = new Histogram(TimeUnit.MICROSECONDS.toNanos(1), MAX_NANOS, 3);

    void add(long nanos) {
        recorder.recordValue(Math.max(TimeUnit.MICROSECONDS.toNanos(1), Math.min(MAX_NANOS, nanos)));
    }

    /** What was recorded up to now: count, percentiles (nanoseconds; -1 when empty), max. */
    synchronized Summary summary() {
        total.add(recorder.getIntervalHistogram());
        long n = total.getTotalCount();
        return new Summary(n, n == 0 ? -1 : total.getValueAtPercentile(50), n == 0 ? -1 : total.getValueAtPercentile(99),
                n == 0 ? -1 : total.getMaxValue());
    }

    record Summary(long count, long p50, long p99, long max) {
    }
}
