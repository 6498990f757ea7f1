package io.bcswitch.config;

import io.bcswitch.registry.ClusterNames;
import io.bcswitch.registry.RegistryPaths;
import java.util.List;
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
 * @param oldLedgerReadTimeoutMillis longest a read of a ledger on a cluster that is not the active one may take;
 *                               0: BookKeeper's timeouts only
 * @param operationAfterSeconds  how long a drain report, cleanup or verify called synchronously may run before its
 *                               call answers 202 with the operation it continues as
 */
public record SwitchConfig(String configPath, String currentClusterName, double cutoverTopicsPerSecond,
                           boolean cutoverEnabled, int probeTimeoutSeconds, Migration migration,
                           int resyncIntervalSeconds, int inventoryReadConcurrency,
                           int switchPrepareTimeoutMillis, long oldLedgerReadTimeoutMillis,
                           int operationAfterSeconds) {

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
                Integer.parseInt(ConfigKey.SWITCH_PREPARE_TIMEOUT_MILLIS.defaultValue()),
                Long.parseLong(ConfigKey.OLD_LEDGER_READ_TIMEOUT_MS.defaultValue()),
                Integer.parseInt(ConfigKey.OPERATION_AFTER_SECONDS.defaultValue()));
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
        Migration migration = new Migration(
                (int) wholeNumber(props, ConfigKey.MIGRATION_CONCURRENCY),
                wholeNumber(props, ConfigKey.MIGRATION_BYTES_PER_SECOND),
                (int) wholeNumber(props, ConfigKey.MIGRATION_PROMOTE_BATCH_SIZE),
                (int) wholeNumber(props, ConfigKey.ROLLBACK_WINDOW_HOURS));
        return new SwitchConfig(configPath, current, rate(props, ConfigKey.CUTOVER_TOPICS_PER_SECOND),
                bool(props, ConfigKey.CUTOVER_ENABLED), (int) wholeNumber(props, ConfigKey.PROBE_TIMEOUT_SECONDS),
                migration, (int) wholeNumber(props, ConfigKey.RESYNC_INTERVAL_SECONDS),
                (int) wholeNumber(props, ConfigKey.INVENTORY_READ_CONCURRENCY),
                (int) wholeNumber(props, ConfigKey.SWITCH_PREPARE_TIMEOUT_MILLIS),
                wholeNumber(props, ConfigKey.OLD_LEDGER_READ_TIMEOUT_MS),
                (int) wholeNumber(props, ConfigKey.OPERATION_AFTER_SECONDS));
    }

    /**
     * What an operator should hear at start-up about the keys under {@link #PREFIX}: each PIP-477 key that is
     * accepted and does nothing here (with why), and each key nothing reads (a typo, or a key of another version),
     * which would otherwise be ignored without a word.
     */
    public static List<String> notices(Properties props) {
        java.util.Set<String> known = new java.util.HashSet<>();
        ConfigKey.all().forEach(k -> known.add(k.fullName()));
        List<String> out = new java.util.ArrayList<>();
        for (ConfigKey k : ConfigKey.notApplicable()) {
            if (props.containsKey(k.fullName())) {
                out.add(k.fullName() + " is set but does nothing: " + k.doc().replaceFirst("^Not applicable \\("
                        + "PIP-477's key; accepted and ignored, with a warning at start\\): ", ""));
                known.add(k.fullName());
            }
        }
        props.stringPropertyNames().stream().filter(n -> n.startsWith(PREFIX) && !known.contains(n)).sorted()
                .forEach(n -> out.add(n + " is not a key of this plugin and is ignored (keys: docs/configuration.md)"));
        return out;
    }

    /** A {@link ConfigKey.Type#WHOLE_NUMBER} key's value, within the key's range. */
    private static long wholeNumber(Properties props, ConfigKey key) {
        String v = get(props, key).trim();
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.fullName() + " is not a whole number between " + key.min()
                    + " and " + key.max() + ": '" + v + "'");
        }
        if (n < key.min() || n > key.max()) {
            throw new IllegalArgumentException(key.fullName() + " must be between " + key.min() + " and "
                    + key.max() + ", not " + n);
        }
        return n;
    }

    /** A {@link ConfigKey.Type#RATE} key's value: above 0, at most the key's maximum. */
    private static double rate(Properties props, ConfigKey key) {
        String v = get(props, key).trim();
        double rate;
        try {
            rate = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.fullName() + " is not a number: '" + v + "'");
        }
        if (!(rate > 0) || rate > key.max()) {
            throw new IllegalArgumentException(key.fullName() + " must be > 0 and <= " + key.max());
        }
        return rate;
    }

    /** A {@link ConfigKey.Type#BOOLEAN} key's value. */
    private static boolean bool(Properties props, ConfigKey key) {
        String v = get(props, key).trim();
        if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(key.fullName() + " must be true or false");
        }
        return Boolean.parseBoolean(v);
    }

    public RegistryPaths paths() {
        return new RegistryPaths(configPath);
    }

    private static String get(Properties props, ConfigKey key) {
        Object v = props.get(key.fullName());
        return v == null ? key.defaultValue() : v.toString();
    }
}
