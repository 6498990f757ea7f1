package io.bcswitch.config;

import java.util.List;

/**
 * Every configuration key of the plugin, read from the broker configuration under the prefix
 * {@value SwitchConfig#PREFIX}. This table is the single source of the docs' configuration page.
 *
 * @param name         key name after the prefix
 * @param defaultValue default, as the string an operator would write
 * @param doc          what the key does
 */
public record ConfigKey(String name, String defaultValue, String doc) {

    public static final ConfigKey CONFIG_PATH = new ConfigKey("configPath", "/admin/bookie-clusters",
            "Root of the cluster registry and switch directive in the broker metadata store.");
    public static final ConfigKey CURRENT_CLUSTER_NAME = new ConfigKey("currentClusterName", "",
            "Name under which the broker's own bookkeeperMetadataServiceUri cluster is registered at first "
                    + "start, when the registry has no ACTIVE cluster yet. Empty: derive a name from the URI.");
    public static final ConfigKey CUTOVER_TOPICS_PER_SECOND = new ConfigKey("cutoverTopicsPerSecond", "150",
            "After a switch, how many topics per second each broker rolls onto the new cluster.");
    public static final ConfigKey CUTOVER_ENABLED = new ConfigKey("cutoverEnabled", "true",
            "Roll open ledgers onto the new cluster right after a switch. false: ledgers move at their "
                    + "normal rollover only.");
    public static final ConfigKey PROBE_TIMEOUT_SECONDS = new ConfigKey("probeTimeoutSeconds", "10",
            "Longest wait for a bookie cluster's metadata service during register, precheck and switch.");

    public static final ConfigKey SWITCH_PREPARE_TIMEOUT_MILLIS = new ConfigKey("switchPrepareTimeoutMillis",
            "3000",
            "Before a switch is committed, each broker builds its clients of the target (and writes one probe ledger "
                    + "through each) so that the first ledgers after the commit do not pay for it; the switch waits "
                    + "at most this long for every live broker to say it is ready, then commits anyway (a broker not "
                    + "ready builds its clients when it applies the switch, as with 0). 0: no preparation "
                    + "(0-30000: the switch call must answer within the REST API's 60 s).");

    public static final ConfigKey RESYNC_INTERVAL_SECONDS = new ConfigKey("resyncIntervalSeconds", "30",
            "How often each broker re-reads the switch directive, the range table and the relocation epoch, and "
                    + "re-creates its registry records if they are gone, in case a change notification was missed "
                    + "(1-3600). Session changes of the metadata store trigger the same re-read at once.");

    public static final ConfigKey INVENTORY_READ_CONCURRENCY = new ConfigKey("inventoryReadConcurrency",
            "256",
            "How many metadata-store reads the ledger inventory (behind the drain report, cleanup, unregister, "
                    + "verify and the migration's plan) has in flight at most on one broker, however many managed "
                    + "ledgers there are (1-10000). A managed ledger's metadata read counts as one.");

    public static final ConfigKey MIGRATION_CONCURRENCY = new ConfigKey("migrationConcurrency", "4",
            "After a switch, how many ledgers the migration copies at the same time (1-1024).");
    public static final ConfigKey MIGRATION_BYTES_PER_SECOND = new ConfigKey("migrationBytesPerSecond", "1048576",
            "Upper bound on the bytes per second the migration reads: from the old clusters while copying and "
                    + "from the copies while verifying them; 0: unlimited. The default keeps publish latency flat "
                    + "on small brokers; raise it when the old cluster must be emptied quickly.");
    public static final ConfigKey MIGRATION_PROMOTE_BATCH_SIZE = new ConfigKey("migrationPromoteBatchSize", "100",
            "Promotions per batch: the relocation epoch brokers react to is bumped once per batch, and the next "
                    + "batch waits until every live broker has applied it (1-100000).");
    public static final ConfigKey ROLLBACK_WINDOW_HOURS = new ConfigKey("rollbackWindowHours", "24",
            "How long after a switch it may be rolled back, and before which cleanup needs force (0-8760).");

    public static List<ConfigKey> all() {
        return List.of(CONFIG_PATH, CURRENT_CLUSTER_NAME, CUTOVER_TOPICS_PER_SECOND, CUTOVER_ENABLED,
                PROBE_TIMEOUT_SECONDS, SWITCH_PREPARE_TIMEOUT_MILLIS, RESYNC_INTERVAL_SECONDS,
                INVENTORY_READ_CONCURRENCY, MIGRATION_CONCURRENCY,
                MIGRATION_BYTES_PER_SECOND, MIGRATION_PROMOTE_BATCH_SIZE, ROLLBACK_WINDOW_HOURS);
    }

    public String fullName() {
        return SwitchConfig.PREFIX + name;
    }
}
