package io.bcswitch.tuning;

import io.bcswitch.registry.TuningOverrides;
import java.util.ArrayList;
import java.util.List;

/**
 * The pacing settings this broker works with now: broker.conf's values, with what an operator stored at run time
 * over them. Read by the migration's rate limiter and worker pool and by the cutover's pacing each time they pace,
 * so a change applies to the work under way, not only to the next run.
 */
public final class LiveTuning {
    /** One complete set of values. */
    public record Values(long migrationBytesPerSecond, int migrationConcurrency, double cutoverTopicsPerSecond) {
    }

    private final Values brokerConf;
    private volatile TuningOverrides stored = TuningOverrides.NONE;
    private volatile Values effective;

    public LiveTuning(Values brokerConf) {
        this.brokerConf = brokerConf;
        this.effective = brokerConf;
    }

    public Values brokerConf() {
        return brokerConf;
    }

    public Values effective() {
        return effective;
    }

    public TuningOverrides stored() {
        return stored;
    }

    public long migrationBytesPerSecond() {
        return effective.migrationBytesPerSecond();
    }

    public int migrationConcurrency() {
        return effective.migrationConcurrency();
    }

    public double cutoverTopicsPerSecond() {
        return effective.cutoverTopicsPerSecond();
    }

    /** Applies {@code s} (null: none stored); returns what changed, as "key old -> new" texts (empty: nothing). */
    public synchronized List<String> apply(TuningOverrides s) {
        TuningOverrides now = s == null ? TuningOverrides.NONE : s;
        Values before = effective;
        Values after = new Values(
                now.migrationBytesPerSecond() != null ? now.migrationBytesPerSecond()
                        : brokerConf.migrationBytesPerSecond(),
                now.migrationConcurrency() != null ? now.migrationConcurrency() : brokerConf.migrationConcurrency(),
                now.cutoverTopicsPerSecond() != null ? now.cutoverTopicsPerSecond()
                        : brokerConf.cutoverTopicsPerSecond());
        stored = now;
        effective = after;
        List<String> changes = new ArrayList<>();
        if (before.migrationBytesPerSecond() != after.migrationBytesPerSecond()) {
            changes.add("migrationBytesPerSecond " + before.migrationBytesPerSecond() + " -> "
                    + after.migrationBytesPerSecond());
        }
        if (before.migrationConcurrency() != after.migrationConcurrency()) {
            changes.add("migrationConcurrency " + before.migrationConcurrency() + " -> "
                    + after.migrationConcurrency());
        }
        if (before.cutoverTopicsPerSecond() != after.cutoverTopicsPerSecond()) {
            changes.add("cutoverTopicsPerSecond " + before.cutoverTopicsPerSecond() + " -> "
                    + after.cutoverTopicsPerSecond());
        }
        return changes;
    }
}
