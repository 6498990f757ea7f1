package io.bcswitch.launcher;

import java.util.Arrays;

/** Publish latencies (nanoseconds) of one phase; thread-safe, append-only. */
final class Latencies {

    private long[] values = new long[1024];
    private int size;

    synchronized void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    /** A sorted snapshot. */
    synchronized long[] sorted() {
        long[] copy = Arrays.copyOf(values, size);
        Arrays.sort(copy);
        return copy;
    }

    /** Nearest-rank percentile of a sorted array, -1 when empty. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
