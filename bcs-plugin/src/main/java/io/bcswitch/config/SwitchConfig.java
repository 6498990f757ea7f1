package io.bcswitch.config;

import io.bcswitch.registry.ClusterNames;
import io.bcswitch.registry.RegistryPaths;
import java.util.Properties;

/**
 * The plugin's configuration, parsed once from the broker's properties. Immutable.
 *
 * @param configPath             registry root in the broker metadata store
 * @param currentClusterName     name for the broker's own cluster at first start, or empty
 * @param cutoverTopicsPerSecond throttle of the post-switch rollover, per broker
 * @param cutoverEnabled         whether open ledgers are rolled over right after a switch
 * @param probeTimeoutSeconds    bounded wait for a bookie cluster's metadata service
 * @param migration              how the post-switch migration is paced and guarded
 * @param resyncIntervalSeconds  how often each broker re-reads the registry as a safety net
 * @param inventoryReadConcurrency metadata-store reads the ledger inventory has in flight at most
 * @param switchPrepareTimeoutMillis longest wait, before a switch is committed, for every broker to have its
 *                               clients of the target ready; 0: no preparation
 */
public record SwitchConfig(String configPath, String currentClusterName, double cutoverTopicsPerSecond,
                           boolean cutoverEnabled, int probeTimeoutSeconds, Migration migration,
                           int resyncIntervalSeconds, int inventoryReadConcurrency,
                           int switchPrepareTimeoutMillis) {

    /**
     * @param concurrency       ledgers copied at the same time
     * @param bytesPerSecond    copy rate bound, 0 for none
     * @param promoteBatchSize  promotions per relocation-epoch bump
     * @param rollbackWindowHours how long a switch may be rolled back
     */
    public record Migration(int concurrency, long bytesPerSecond, int promoteBatchSize, int rollbackWindowHours) {
        /** The defaults of {@link ConfigKey}, the one place they are written down. */
        public static final Migration DEFAULTS = new Migration(
                Integer.parseInt(ConfigKey.MIGRATION_CONCURRENCY.defaultValue()),
                Long.parseLong(ConfigKey.MIGRATION_BYTES_PER_SECOND.defaultValue()),
                Integer.parseInt(ConfigKey.MIGRATION_PROMOTE_BATCH_SIZE.defaultValue()),
                Integer.parseInt(ConfigKey.ROLLBACK_WINDOW_HOURS.defaultValue()));
    }

    public SwitchConfig(String configPath, String currentClusterName, double cutoverTopicsPerSecond,
                        boolean cutoverEnabled, int probeTimeoutSeconds) {
        this(configPath, currentClusterName, cutoverTopicsPerSecond, cutoverEnabled, probeTimeoutSeconds,
                Migration.DEFAULTS, Integer.parseInt(ConfigKey.RESYNC_INTERVAL_SECONDS.defaultValue()),
                Integer.parseInt(ConfigKey.INVENTORY_READ_CONCURRENCY.defaultValue()),
                Integer.parseInt(ConfigKey.SWITCH_PREPARE_TIMEOUT_MILLIS.defaultValue()));
    }

    public static final String PREFIX = "bookieClusterSwitch.";

    /** Parses and validates; a bad value fails with a message naming the key. */
    public static SwitchConfig from(Properties props) {
        String configPath = get(props, ConfigKey.CONFIG_PATH);
        try {
            new RegistryPaths(configPath);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ConfigKey.CONFIG_PATH.fullName() + ": " + e.getMessage());
        }
        String current = get(props, ConfigKey.CURRENT_CLUSTER_NAME).trim();
        String nameProblem = current.isEmpty() ? null : ClusterNames.problem(current);
        if (nameProblem != null) {
            throw new IllegalArgumentException(ConfigKey.CURRENT_CLUSTER_NAME.fullName() + ": " + nameProblem);
        }
        double rate = parseDouble(props, ConfigKey.CUTOVER_TOPICS_PER_SECOND);
        if (!(rate > 0) || rate > 100_000) {
            throw new IllegalArgumentException(ConfigKey.CUTOVER_TOPICS_PER_SECOND.fullName()
                    + " must be > 0 and <= 100000");
        }
        String enabled = get(props, ConfigKey.CUTOVER_ENABLED).trim();
        if (!enabled.equalsIgnoreCase("true") && !enabled.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(ConfigKey.CUTOVER_ENABLED.fullName() + " must be true or false");
        }
        double probeValue = parseDouble(props, ConfigKey.PROBE_TIMEOUT_SECONDS);
        if (probeValue != Math.rint(probeValue) || probeValue < 1 || probeValue > 3600) {
            throw new IllegalArgumentException(ConfigKey.PROBE_TIMEOUT_SECONDS.fullName()
                    + " must be a whole number of seconds between 1 and 3600");
        }
        int probe = (int) probeValue;
        Migration migration = new Migration(
                (int) wholeNumber(props, ConfigKey.MIGRATION_CONCURRENCY, 1, 1024),
                wholeNumber(props, ConfigKey.MIGRATION_BYTES_PER_SECOND, 0, Long.MAX_VALUE / 2),
                (int) wholeNumber(props, ConfigKey.MIGRATION_PROMOTE_BATCH_SIZE, 1, 100_000),
                (int) wholeNumber(props, ConfigKey.ROLLBACK_WINDOW_HOURS, 0, 8760));
        int resync = (int) wholeNumber(props, ConfigKey.RESYNC_INTERVAL_SECONDS, 1, 3600);
        int inventoryReads = (int) wholeNumber(props, ConfigKey.INVENTORY_READ_CONCURRENCY, 1, 10_000);
        int prepare = (int) wholeNumber(props, ConfigKey.SWITCH_PREPARE_TIMEOUT_MILLIS, 0, 30_000);
        return new SwitchConfig(configPath, current, rate, Boolean.parseBoolean(enabled), probe, migration, resync,
                inventoryReads, prepare);
    }

    private static long wholeNumber(Properties props, ConfigKey key, long min, long max) {
        String v = get(props, key).trim();
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.fullName() + " is not a whole number: '" + v + "'");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key.fullName() + " must be between " + min + " and " + max
                    + ", not " + n);
        }
        return n;
    }

    public RegistryPaths paths() {
        return new RegistryPaths(configPath);
    }

    private static String get(Properties props, ConfigKey key) {
        Object v = props.get(key.fullName());
        return v == null ? key.defaultValue() : v.toString();
    }

    private static double parseDouble(Properties props, ConfigKey key) {
        String v = get(props, key).trim();
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.fullName() + " is not a number: '" + v + "'");
        }
    }
}
