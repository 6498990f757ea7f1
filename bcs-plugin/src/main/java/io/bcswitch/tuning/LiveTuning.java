package io.bcswitch.tuning;

import io.bcswitch.config.ConfigKey;
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

    public static final String MIGRATION_BYTES_PER_SECOND = "migrationBytesPerSecond";
    public static final String MIGRATION_CONCURRENCY = "migrationConcurrency";
    public static final String CUTOVER_TOPICS_PER_SECOND = "cutoverTopicsPerSecond";

    /** Slowest cutover pace that can be set at run time: a roll is never more than 10 s away from a change. */
    public static final double MIN_CUTOVER_TOPICS_PER_SECOND = 0.1;

    /** Why {@code value} cannot be {@code key}'s value, or null when it can (the bounds of broker.conf's keys). */
    public static String problem(String key, Number value) {
        if (value == null) {
            return null;
        }
        return switch (key) {
            case MIGRATION_BYTES_PER_SECOND -> outside(ConfigKey.MIGRATION_BYTES_PER_SECOND, value, " (unlimited)");
            case MIGRATION_CONCURRENCY -> outside(ConfigKey.MIGRATION_CONCURRENCY, value, "");
            case CUTOVER_TOPICS_PER_SECOND -> !(value.doubleValue() >= MIN_CUTOVER_TOPICS_PER_SECOND)
                    || value.doubleValue() > ConfigKey.CUTOVER_TOPICS_PER_SECOND.max()
                    ? key + " must be >= " + MIN_CUTOVER_TOPICS_PER_SECOND + " and <= "
                    + ConfigKey.CUTOVER_TOPICS_PER_SECOND.max() + ", not " + value : null;
            default -> "unknown setting '" + key + "'";
        };
    }

    private static String outside(ConfigKey key, Number value, String minMeans) {
        return value.longValue() < key.min() || value.longValue() > key.max() ? key.name() + " must be between " + key.min() + minMeans
                + " and " + key.max() + ", not " + value : null;
    }

    /**
     * Applies {@code s} (null: none stored); returns what changed, as "key old -> new" texts (empty: nothing). A
     * stored value out of range (written by hand, or by a later version) is not applied: broker.conf's is used, and
     * the returned texts say so.
     */
    public synchronized List<String> apply(TuningOverrides s) {
        TuningOverrides given = s == null ? TuningOverrides.NONE : s;
        List<String> refused = new ArrayList<>();
        TuningOverrides now = new TuningOverrides(given.formatVersion(),
                valid(MIGRATION_BYTES_PER_SECOND, given.migrationBytesPerSecond(), refused),
                valid(MIGRATION_CONCURRENCY, given.migrationConcurrency(), refused),
                valid(CUTOVER_TOPICS_PER_SECOND, given.cutoverTopicsPerSecond(), refused), given.updatedAt());
        Values before = effective;
        Values after = new Values(
                now.migrationBytesPerSecond() != null ? now.migrationBytesPerSecond()
                        : brokerConf.migrationBytesPerSecond(),
                now.migrationConcurrency() != null ? now.migrationConcurrency() : brokerConf.migrationConcurrency(),
                now.cutoverTopicsPerSecond() != null ? now.cutoverTopicsPerSecond()
                        : brokerConf.cutoverTopicsPerSecond());
        stored = now;
        effective = after;
        List<String> changes = new ArrayList<>(refused);
        if (before.migrationBytesPerSecond() != after.migrationBytesPerSecond()) {
            changes.add(MIGRATION_BYTES_PER_SECOND + " " + before.migrationBytesPerSecond() + " -> "
                    + after.migrationBytesPerSecond());
        }
        if (before.migrationConcurrency() != after.migrationConcurrency()) {
            changes.add(MIGRATION_CONCURRENCY + " " + before.migrationConcurrency() + " -> "
                    + after.migrationConcurrency());
        }
        if (before.cutoverTopicsPerSecond() != after.cutoverTopicsPerSecond()) {
            changes.add(CUTOVER_TOPICS_PER_SECOND + " " + before.cutoverTopicsPerSecond() + " -> "
                    + after.cutoverTopicsPerSecond());
        }
        return changes;
    }

    private static <T extends Number> T valid(String key, T value, List<String> refused) {
        String problem = problem(key, value);
        if (problem != null) {
            refused.add("stored " + problem + ": broker.conf's value is used");
            return null;
        }
        return value;
    }
}
