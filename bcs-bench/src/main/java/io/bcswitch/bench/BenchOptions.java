package io.bcswitch.bench;

import java.nio.file.Path;

/**
 * How to run: full size or the smoke size CI uses (a few seconds per scenario, so the code cannot rot; its figures
 * mean nothing), how many alternating rounds, where results go.
 *
 * @param smoke  tiny sizes and durations
 * @param rounds rounds per side; each round runs both sides, the first side alternating
 * @param out    directory for {@code <scenario>.json} and {@code <scenario>.txt}
 */
public record BenchOptions(boolean smoke, int rounds, Path out) {

    public BenchOptions {
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be >= 1: " + rounds);
        }
    }

    /** Seconds of a measuring window: {@code full} at full size, one second in a smoke run. */
    public int seconds(int full) {
        return smoke ? 1 : full;
    }

    /** A count (topics, ledgers): {@code full} at full size, {@code small} in a smoke run. */
    public int size(int full, int small) {
        return smoke ? small : full;
    }
}
