package io.bcswitch.metrics;

import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.routing.Ownership;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * This broker's switch metrics as {@code /metrics} serves them, from what the broker holds in memory (nothing is
 * read from the metadata store or a bookie cluster on a scrape).
 */
public final class BrokerMetrics {
    private final Map<String, String> common;
    private final Supplier<Ownership> ownership;
    private final Supplier<Optional<BrokerCutoverRecord>> cutover;
    private final Function<String, Map<String, Integer>> openHandlesOutside;
    private final MigrationCounters migration;

    /**
     * @param pulsarCluster      the Pulsar cluster's name (Pulsar's {@code cluster} label)
     * @param ownership          this broker's routing view; null until it has one
     * @param cutover            this broker's latest cutover progress
     * @param openHandlesOutside open ledger handles by bookie cluster, for clusters other than the given active one
     */
    public BrokerMetrics(String pulsarCluster, Supplier<Ownership> ownership,
                         Supplier<Optional<BrokerCutoverRecord>> cutover,
                         Function<String, Map<String, Integer>> openHandlesOutside, MigrationCounters migration) {
        this.common = Map.of("cluster", pulsarCluster);
        this.ownership = ownership;
        this.cutover = cutover;
        this.openHandlesOutside = openHandlesOutside;
        this.migration = migration;
    }

    /** The metrics now, in Prometheus' text format. */
    public String text() {
        PrometheusText t = new PrometheusText();
        Ownership o = ownership.get();
        if (o != null) {
            t.gauge(MetricNames.EPOCH, "Epoch of the switch this broker applied; bookie_cluster names the active "
                    + "bookie cluster", with("bookie_cluster", o.activeCluster()), o.activeEpoch());
            cutover.get().ifPresent(r -> {
                String help = "Topics of this broker in its latest cutover, by state (total, moved, failed, pending)";
                long pending = Math.max(0, r.topicsTotal() - r.topicsMoved() - r.topicsFailed());
                t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "total"), r.topicsTotal());
                t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "moved"), r.topicsMoved());
                t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "failed"), r.topicsFailed());
                t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "pending"), pending);
            });
            new TreeMap<>(openHandlesOutside.apply(o.activeCluster())).forEach((cluster, n) -> t.gauge(
                    MetricNames.OPEN_LEDGER_HANDLES, "Ledger handles this broker holds open on a bookie cluster "
                            + "other than the active one (it cannot be retired while there are any)",
                    with("bookie_cluster", cluster), n));
        }
        if (migration != null) {
            migration.write(t, common);
        }
        return t.toString();
    }

    private Map<String, String> with(String key, String value) {
        Map<String, String> m = new TreeMap<>(common);
        m.put(key, value);
        return m;
    }
}
