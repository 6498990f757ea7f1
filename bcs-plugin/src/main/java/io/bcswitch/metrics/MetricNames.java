package io.bcswitch.metrics;

import java.util.List;

/** The plugin's metrics on {@code /metrics}: described in docs/operations.md, used by docs/monitoring. */
public final class MetricNames {
    public static final String EPOCH = "pulsar_bookie_switch_epoch";
    public static final String CUTOVER_TOPICS = "pulsar_bookie_switch_cutover_topics";
    public static final String OPEN_LEDGER_HANDLES = "pulsar_bookie_switch_open_ledger_handles";
    public static final String MIGRATION_LEDGERS = "pulsar_bookie_switch_migration_ledgers_total";
    public static final String MIGRATION_COPIED_BYTES = "pulsar_bookie_switch_migration_copied_bytes_total";
    public static final String ROLLBACKS = "pulsar_bookie_switch_rollbacks_total";

    /** Every name above. */
    public static final List<String> ALL = List.of(EPOCH, CUTOVER_TOPICS, OPEN_LEDGER_HANDLES, MIGRATION_LEDGERS,
            MIGRATION_COPIED_BYTES, ROLLBACKS);

    private MetricNames() {
    }
}
