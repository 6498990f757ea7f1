package io.bcswitch.config;

import java.util.List;
import java.util.Locale;

/**
 * Every configuration key of the plugin, read from the broker configuration under the prefix
 * {@value SwitchConfig#PREFIX}: its type, default, accepted range and documentation. {@link SwitchConfig}
 * validates each value against it, and the key table of docs/configuration.md is rendered from it
 * ({@link #markdownTable()}; a unit test fails when the committed page differs).
 *
 * @param name         key name after the prefix
 * @param type         how the value is read
 * @param defaultValue default, as the string an operator would write
 * @param min          least accepted value of a {@link Type#WHOLE_NUMBER} (a {@link Type#RATE} must be above 0)
 * @param max          greatest accepted value of a {@link Type#WHOLE_NUMBER} or a {@link Type#RATE}
 * @param doc          what the key does (Markdown)
 */
public record ConfigKey(String name, Type type, String defaultValue, long min, long max, String doc) {

    /** How a key's value is read and checked. */
    public enum Type {
        /** free text, checked by {@link SwitchConfig} itself (a path, a cluster name) */
        TEXT,
        /** {@code true} or {@code false}, in any case */
        BOOLEAN,
        /** a whole number from min to max */
        WHOLE_NUMBER,
        /** a decimal number above 0 and at most max */
        RATE
    }

    static ConfigKey text(String name, String defaultValue, String doc) {
        return new ConfigKey(name, Type.TEXT, defaultValue, 0, 0, doc);
    }

    static ConfigKey bool(String name, String defaultValue, String doc) {
        return new ConfigKey(name, Type.BOOLEAN, defaultValue, 0, 0, doc);
    }

    static ConfigKey wholeNumber(String name, String defaultValue, long min, long max, String doc) {
        return new ConfigKey(name, Type.WHOLE_NUMBER, defaultValue, min, max, doc);
    }

    static ConfigKey rate(String name, String defaultValue, long max, String doc) {
        return new ConfigKey(name, Type.RATE, defaultValue, 0, max, doc);
    }

    public static final ConfigKey CONFIG_PATH = text("configPath", "/admin/bookie-clusters",
            "Root of the cluster registry and switch directive in the broker metadata store. Every "
            + "broker of a Pulsar cluster must use the same value.");

    public static final ConfigKey CURRENT_CLUSTER_NAME = text("currentClusterName", "",
            "Name under which the broker's own `bookkeeperMetadataServiceUri` cluster is registered"
            + " at first start, when the registry has no ACTIVE cluster yet. Empty: a name is derived"
            + " from the URI. Ignored once the registry has an active cluster.");

    public static final ConfigKey CUTOVER_TOPICS_PER_SECOND = rate("cutoverTopicsPerSecond", "150", 100_000,
            "After a switch, how many topics per second each broker rolls over onto the new "
            + "cluster. Set from the benchmarks (docs/benchmarks.md, cutover at scale): with Pulsar's"
            + " default 4 bundles per namespace, one of 3 brokers owns about half of 1,000 topics, "
            + "and at 100/s its cutover took 5.5 s against the 5 s goal; rolling a topic costs about "
            + "the same publish latency as stock Pulsar rolling it at the same pace. Lower it if "
            + "ledger creation on the new cluster's metadata store is slow; the time a cutover takes "
            + "is about the topics of the busiest broker divided by this.");

    public static final ConfigKey CUTOVER_ENABLED = bool("cutoverEnabled", "true",
            "Roll open ledgers onto the new cluster right after a switch. `false`: topics move at "
            + "their normal ledger rollover (up to `managedLedgerMaxLedgerRolloverTimeMinutes`).");

    public static final ConfigKey PROBE_TIMEOUT_SECONDS = wholeNumber("probeTimeoutSeconds", "10", 1, 3600,
            "Longest wait for a bookie cluster's metadata service during register, precheck and "
            + "switch.");

    public static final ConfigKey SWITCH_PREPARE_TIMEOUT_MILLIS = wholeNumber("switchPrepareTimeoutMillis", "3000",
            0, 30_000,
            "Before a switch is committed, it is announced: each broker builds its BookKeeper "
            + "clients of the target for the new id range (and writes one probe ledger through each),"
            + " so that the first ledgers after the commit, while every topic starts rolling onto the"
            + " target, do not also pay for new clients, metadata sessions and bookie connections. "
            + "The switch waits at most this long for every live broker to say it is ready, then "
            + "commits anyway (a broker that was not ready builds its clients when it applies the "
            + "switch). `0`: no announcement, clients are built when the switch is applied (0-30000: "
            + "the switch call must answer within the REST API's 60 s). The wait polls every live "
            + "broker's record, backing off from 25 to 200 ms. During a rolling upgrade from a "
            + "version without announcements, the brokers not upgraded yet never say they are ready, "
            + "so each switch waits the full bound. See docs/benchmarks.md, cutover at scale.");

    public static final ConfigKey RESYNC_INTERVAL_SECONDS = wholeNumber("resyncIntervalSeconds", "30", 1, 3600,
            "How often each broker re-reads the switch directive, the range table and the "
            + "relocation epoch, and re-creates its registry records if they are gone, in case a "
            + "change notification was missed (1-3600). A reconnection or a new session of the "
            + "broker's metadata store triggers the same re-read at once (ZooKeeper does not replay "
            + "what changed while a broker was cut off).");

    public static final ConfigKey INVENTORY_READ_CONCURRENCY = wholeNumber("inventoryReadConcurrency", "256",
            1, 10_000,
            "How many metadata-store reads the ledger inventory has in flight at most on one broker"
            + " (1-10000). The inventory is every ledger the Pulsar cluster references (every managed"
            + " ledger's data and cursor ledgers, compacted-topic ledgers, schema ledgers); the drain"
            + " report, cleanup and cleanup-targets, unregister, verify and the migration's plan each"
            + " read it once. However many managed ledgers there are, and however many of these run "
            + "at once, one broker never has more than this many of the inventory's reads "
            + "outstanding; a managed ledger's metadata read counts as one (Pulsar reads the ledger's"
            + " node, then its cursors'). Set from the benchmarks (docs/benchmarks.md, inventory at "
            + "scale): over 100,000 managed ledgers, 256 reads in flight made the drain report, "
            + "cleanup-targets, verify and the migration's plan about 3 times faster than 64 (verify "
            + "17 s instead of 38 s, which was close to the REST API's 60 s limit) with the heap "
            + "peaks in the same range; 1,024 was only 1.2 to 2 times faster again, with a few "
            + "hundred MB more heap. 256 stays well below ZooKeeper's default limit of 1,000 "
            + "outstanding requests (`globalOutstandingLimit`) even with three brokers reading at "
            + "once. Lower it when the metadata store is shared and busy.");

    public static final ConfigKey MIGRATION_CONCURRENCY = wholeNumber("migrationConcurrency", "4", 1, 1024,
            "After a switch, how many ledgers the migration copies at the same time (1-1024).");

    public static final ConfigKey MIGRATION_BYTES_PER_SECOND = wholeNumber("migrationBytesPerSecond", "1048576",
            0, Long.MAX_VALUE / 2,
            "Upper bound on the bytes per second the migration reads: from the old cluster while "
            + "copying, and from the copy on the active cluster while verifying it (so copying runs "
            + "at about half this rate); each ledger copied (or found already copied) also counts 16 KB, "
            + "at most 1/64 of this bound, for its metadata work, so small ledgers go at most 64 a "
            + "second at any bound up to the default; "
            + "`0`: unlimited. The default keeps publish latency flat on "
            + "small brokers (see operations.md); raise it (and `migrationConcurrency`) when the "
            + "bookies have headroom and the old cluster must be emptied quickly.");

    public static final ConfigKey MIGRATION_PROMOTE_BATCH_SIZE = wholeNumber("migrationPromoteBatchSize", "1000",
            1, 100_000,
            "Promotions per batch (1-100000). After each batch the relocation epoch is bumped, "
            + "every broker re-reads that batch's relocations, and the next batch waits until every "
            + "live broker has applied it (at most 30 s).");

    public static final ConfigKey ROLLBACK_WINDOW_HOURS = wholeNumber("rollbackWindowHours", "24", 0, 8760,
            "How long after a switch it may be rolled back; inside it, cleanup needs `force`.");

    public static final ConfigKey OLD_LEDGER_READ_TIMEOUT_MS = wholeNumber("oldLedgerReadTimeoutMs", "5000", 0,
            3_600_000,
            "Longest a read of a ledger on a bookie cluster that is not the active one may take (PIP-477's key): "
            + "a slower read fails with BookKeeper's timeout error and a log line naming the cluster, so the "
            + "readers of an old cluster that stopped answering fail fast instead of waiting for the broker-wide "
            + "BookKeeper timeouts. Applies to the data-ledger reads of topics; `0`: only BookKeeper's timeouts.");

    /**
     * PIP-477's keys this design has no use for: accepted, so that a broker.conf written from the PIP starts, and
     * named in a warning at start-up with why they do nothing.
     */
    public static final ConfigKey SKIP_IDGEN_PRECHECK = text("skipIdgenPrecheck", "false",
            "Not applicable (PIP-477's key; accepted and ignored, with a warning at start): the precheck cannot be "
            + "skipped, and needs no id-generator preparation by hand: a switch moves the target's id generator to "
            + "a fresh range itself. The one override is `allowUnknownSourceIds` on a switch, for a source that "
            + "cannot be read.");

    public static final ConfigKey DUAL_READ_TIMEOUT_DAYS = text("dualReadTimeoutDays", "15",
            "Not applicable (PIP-477's key; accepted and ignored, with a warning at start): a ledger is read from "
            + "the cluster that holds it for as long as it exists (`DUAL_READ` always). An old cluster is retired "
            + "when the drain report says nothing needs it, by cleanup and close-client, not after a number of "
            + "days.");

    public static final ConfigKey OPERATION_AFTER_SECONDS = wholeNumber("operationAfterSeconds", "30", 0, 45,
            "How long a drain report, cleanup or verify called without `async=true` may run (0-45 s, leaving the "
            + "operation's record time to be written within the API's 60 s) before its "
            + "call answers `202 Accepted` with the operation it continues as (`GET /operations/{id}` gives its "
            + "answer when it ends), if the call says it can follow one (`Prefer: respond-async`, as the admin "
            + "client and `pulsar-admin bookie-clusters` do: they follow it and print that answer). Over a large "
            + "cluster these read every managed ledger's metadata and may take longer than an HTTP client waits "
            + "(pulsar-admin: 60 s); such callers are never cut off with a 503. 0: every such call becomes an "
            + "operation at once.");

    public static List<ConfigKey> all() {
        return List.of(CONFIG_PATH, CURRENT_CLUSTER_NAME, CUTOVER_TOPICS_PER_SECOND, CUTOVER_ENABLED,
                PROBE_TIMEOUT_SECONDS, SWITCH_PREPARE_TIMEOUT_MILLIS, RESYNC_INTERVAL_SECONDS,
                INVENTORY_READ_CONCURRENCY, MIGRATION_CONCURRENCY,
                MIGRATION_BYTES_PER_SECOND, MIGRATION_PROMOTE_BATCH_SIZE, ROLLBACK_WINDOW_HOURS,
                OLD_LEDGER_READ_TIMEOUT_MS, OPERATION_AFTER_SECONDS);
    }

    /** PIP-477's keys that are accepted and do nothing here (see each one's doc). */
    public static List<ConfigKey> notApplicable() {
        return List.of(SKIP_IDGEN_PRECHECK, DUAL_READ_TIMEOUT_DAYS);
    }

    public String fullName() {
        return SwitchConfig.PREFIX + name;
    }

    /** The values the key accepts, as the docs say them. */
    public String accepted() {
        return switch (type) {
            case TEXT -> "text";
            case BOOLEAN -> "`true` or `false`";
            case WHOLE_NUMBER -> "whole number, " + number(min) + " to " + number(max);
            case RATE -> "number above 0, at most " + number(max);
        };
    }

    private static String number(long n) {
        return n >= Long.MAX_VALUE / 4 ? "unbounded" : String.format(Locale.ROOT, "%,d", n);
    }

    /** The key table of docs/configuration.md. */
    public static String markdownTable() {
        StringBuilder sb = new StringBuilder("| key | default | accepted | meaning |\n|---|---|---|---|\n");
        for (ConfigKey k : java.util.stream.Stream.concat(all().stream(), notApplicable().stream()).toList()) {
            sb.append("| `").append(k.fullName()).append("` | ")
                    .append(k.defaultValue().isEmpty() ? "*(empty)*" : "`" + k.defaultValue() + "`").append(" | ")
                    .append(k.accepted()).append(" | ").append(k.doc()).append(" |\n");
        }
        return sb.toString();
    }
}
