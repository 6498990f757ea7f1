package io.bcswitch.metrics;

import java.util.List;

/** The plugin's metrics on {@code /metrics}: described in docs/operations.md, used by docs/monitoring. */
public final class MetricNames {
    public static final String EPOCH = "pulsar_bookie_switch_epoch";
    public static final String BROKERS_WITHOUT_PLUGIN = "pulsar_bookie_switch_brokers_without_plugin";
    public static final String RELOCATION_EPOCH_LAG = "pulsar_bookie_switch_relocation_epoch_lag";
    public static final String CUTOVER_TOPICS = "pulsar_bookie_switch_cutover_topics";
    public static final String OPEN_LEDGER_HANDLES = "pulsar_bookie_switch_open_ledger_handles";
    public static final String MIGRATION_PHASE = "pulsar_bookie_switch_migration_phase";
    public static final String MIGRATION_LEDGERS_NOW = "pulsar_bookie_switch_migration_plan_ledgers";
    public static final String MIGRATION_REMAINING_BYTES = "pulsar_bookie_switch_migration_remaining_bytes";
    public static final String ROLLBACK_WINDOW_SECONDS = "pulsar_bookie_switch_rollback_window_seconds";
    public static final String DRAIN_BYTES = "pulsar_bookie_switch_drain_bytes";
    public static final String DRAIN_LEDGERS = "pulsar_bookie_switch_drain_ledgers";
    public static final String DRAIN_REPORT_TIMESTAMP = "pulsar_bookie_switch_drain_report_timestamp_seconds";
    public static final String MIGRATION_LEDGERS = "pulsar_bookie_switch_migration_ledgers_total";
    public static final String MIGRATION_COPIED_BYTES = "pulsar_bookie_switch_migration_copied_bytes_total";
    public static final String ROLLBACKS = "pulsar_bookie_switch_rollbacks_total";
    public static final String MIGRATION_PASS_FAILURES = "pulsar_bookie_switch_migration_pass_failures_total";
    /** A summary: {@code _count} and {@code _sum} samples. */
    public static final String CLIENT_OP_SECONDS = "pulsar_bookie_switch_client_op_seconds";

    /** Every name above (a summary by its family name). */
    public static final List<String> ALL = List.of(EPOCH, BROKERS_WITHOUT_PLUGIN, RELOCATION_EPOCH_LAG, CUTOVER_TOPICS, OPEN_LEDGER_HANDLES,
            MIGRATION_PHASE, MIGRATION_LEDGERS_NOW, MIGRATION_REMAINING_BYTES, ROLLBACK_WINDOW_SECONDS, DRAIN_BYTES, DRAIN_LEDGERS,
            DRAIN_REPORT_TIMESTAMP, MIGRATION_LEDGERS, MIGRATION_COPIED_BYTES, ROLLBACKS, MIGRATION_PASS_FAILURES, CLIENT_OP_SECONDS);

    private MetricNames() {
    }
}
