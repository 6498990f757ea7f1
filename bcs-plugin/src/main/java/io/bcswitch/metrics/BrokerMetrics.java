package io.bcswitch.metrics;

import io.bcswitch.migration.DrainReports;
import io.bcswitch.migration.MigrationOrchestrator;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * This broker's switch metrics as {@code /metrics} serves them, from what the broker holds in memory (nothing is
 * read from the metadata store or a bookie cluster on a scrape).
 */
public final class BrokerMetrics {
    /**
     * Where the metrics come from.
     *
     * @param ownership           this broker's routing view; null until it has one
     * @param cutover             this broker's latest cutover progress
     * @param openHandlesOutside  open ledger handles by bookie cluster, for clusters other than the given active one
     * @param relocationEpochLag  relocation epochs this broker routes behind the newest it has read
     * @param migration           the latest switch and its migration as this broker last saw them
     * @param drain               the last drain report this broker made of each cluster
     * @param counters            what the migrations run by this broker did
     * @param clientOps           the per-cluster BookKeeper clients' operations
     * @param rollbackWindowHours how long a switch may be rolled back (cleanup refuses before)
     * @param brokersWithoutPlugin live brokers of the Pulsar cluster that run without the plugin
     */
    public record Sources(Supplier<Ownership> ownership, Supplier<Optional<BrokerCutoverRecord>> cutover,
                          Function<String, Map<String, Integer>> openHandlesOutside, LongSupplier relocationEpochLag,
                          Supplier<Optional<MigrationOrchestrator.Seen>> migration,
                          Supplier<Map<String, DrainReports.Latest>> drain, MigrationCounters counters,
                          ClientOpStats clientOps, int rollbackWindowHours, Clock clock,
                          java.util.function.IntSupplier brokersWithoutPlugin) {
    }

    private final Map<String, String> common;
    private final Sources in;

    /** @param pulsarCluster the Pulsar cluster's name (Pulsar's {@code cluster} label) */
    public BrokerMetrics(String pulsarCluster, Sources in) {
        this.common = Map.of("cluster", pulsarCluster);
        this.in = in;
    }

    /** The metrics now, in Prometheus' text format. */
    public String text() {
        PrometheusText t = new PrometheusText();
        Ownership o = in.ownership().get();
        if (o != null) {
            routing(t, o);
        }
        in.migration().get().ifPresent(seen -> migration(t, seen));
        t.gauge(MetricNames.BROKERS_WITHOUT_PLUGIN, "Live brokers of the Pulsar cluster that run without the plugin "
                + "(or are starting): after a switch such a broker drops a topic's last ledger it cannot find on its "
                + "own bookie cluster", common, in.brokersWithoutPlugin().getAsInt());
        drain(t);
        if (in.counters() != null) {
            in.counters().write(t, common);
        }
        if (in.clientOps() != null) {
            in.clientOps().write(t, common);
        }
        return t.toString();
    }

    private void routing(PrometheusText t, Ownership o) {
        t.gauge(MetricNames.EPOCH, "Epoch of the switch this broker applied; bookie_cluster names the active "
                + "bookie cluster", with("bookie_cluster", o.activeCluster()), o.activeEpoch());
        t.gauge(MetricNames.RELOCATION_EPOCH_LAG, "Relocation epochs this broker routes behind the newest one it has "
                + "read (a broker that stays behind reads moved ledgers where they were)", common,
                in.relocationEpochLag().getAsLong());
        in.cutover().get().ifPresent(r -> {
            String help = "Topics of this broker in its latest cutover, by state (total, moved, failed, pending)";
            long pending = Math.max(0, r.topicsTotal() - r.topicsMoved() - r.topicsFailed());
            t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "total"), r.topicsTotal());
            t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "moved"), r.topicsMoved());
            t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "failed"), r.topicsFailed());
            t.gauge(MetricNames.CUTOVER_TOPICS, help, with("state", "pending"), pending);
        });
        new TreeMap<>(in.openHandlesOutside().apply(o.activeCluster())).forEach((cluster, n) -> t.gauge(
                MetricNames.OPEN_LEDGER_HANDLES, "Ledger handles this broker holds open on a bookie cluster "
                        + "other than the active one (it cannot be retired while there are any)",
                with("bookie_cluster", cluster), n));
    }

    private void migration(PrometheusText t, MigrationOrchestrator.Seen seen) {
        MigrationState s = seen.state();
        String target = seen.directive().target();
        Phase current = s == null ? Phase.PENDING : s.phase();
        for (Phase p : Phase.values()) {
            t.gauge(MetricNames.MIGRATION_PHASE, "The latest switch's migration: 1 for its phase, 0 for the others "
                    + "(bookie_cluster: the switch's target)", labels("bookie_cluster", target, "phase", p.name()),
                    p == current ? 1 : 0);
        }
        if (s != null) {
            String help = "Metadata ledgers of the latest switch's migration, by state (planned, copied, promoted, "
                    + "failed, skipped, id_conflict, not_promoted, remaining: planned and not handled yet)";
            long handled = (long) s.promoted() + s.failed() + s.skipped() + s.collisions() + s.notPromoted();
            ledgers(t, help, target, "planned", s.planned());
            ledgers(t, help, target, "copied", s.copied());
            ledgers(t, help, target, "promoted", s.promoted());
            ledgers(t, help, target, "failed", s.failed());
            ledgers(t, help, target, "skipped", s.skipped());
            ledgers(t, help, target, "id_conflict", s.collisions());
            ledgers(t, help, target, "not_promoted", s.notPromoted());
            ledgers(t, help, target, "remaining", current.terminal() ? 0 : Math.max(0, s.planned() - handled));
            t.gauge(MetricNames.MIGRATION_REMAINING_BYTES, "Bytes of the latest switch's migration still to copy "
                    + "while it copies (BUILD), as far as the lengths of its ledgers are known; 0 in other phases",
                    with("bookie_cluster", target), current == Phase.BUILD ? s.bytesRemaining() : 0);
        }
        t.gauge(MetricNames.ROLLBACK_WINDOW_SECONDS, "Seconds left in the latest switch's rollback window (cleanup "
                + "refuses inside it; 0 once it is over, rolled back, or originals were deleted)",
                with("bookie_cluster", target), rollbackSecondsLeft(seen));
    }

    private long rollbackSecondsLeft(MigrationOrchestrator.Seen seen) {
        MigrationState s = seen.state();
        if (s != null && (s.phase() == Phase.ROLLED_BACK || s.phase() == Phase.ROLLING_BACK
                || s.phase() == Phase.SUPERSEDED || s.originalsDeleted() > 0)) {
            return 0;
        }
        long end = seen.directive().ts() + in.rollbackWindowHours() * 3_600_000L;
        return Math.max(0, (end - in.clock().millis()) / 1000);
    }

    private void ledgers(PrometheusText t, String help, String target, String state, long n) {
        t.gauge(MetricNames.MIGRATION_LEDGERS_NOW, help, labels("bookie_cluster", target, "state", state), n);
    }

    private void drain(PrometheusText t) {
        Map<String, DrainReports.Latest> reports = new TreeMap<>(in.drain().get());
        reports.values().removeIf(l -> l.report().active());
        reports.forEach((cluster, l) -> t.gauge(MetricNames.DRAIN_BYTES, "Bytes the brokers still reference on an "
                + "inactive bookie cluster, as of this broker's last drain report of it", with("bookie_cluster",
                cluster), l.report().bytes()));
        reports.forEach((cluster, l) -> t.gauge(MetricNames.DRAIN_LEDGERS, "Ledgers the brokers still reference on "
                + "an inactive bookie cluster, as of this broker's last drain report of it", with("bookie_cluster",
                cluster), l.report().ledgers()));
        reports.forEach((cluster, l) -> t.gauge(MetricNames.DRAIN_REPORT_TIMESTAMP, "When this broker made its last "
                + "drain report of the bookie cluster (Unix seconds)", with("bookie_cluster", cluster),
                l.at() / 1000));
    }

    private Map<String, String> with(String key, String value) {
        Map<String, String> m = new TreeMap<>(common);
        m.put(key, value);
        return m;
    }

    private Map<String, String> labels(String k1, String v1, String k2, String v2) {
        Map<String, String> m = with(k1, v1);
        m.put(k2, v2);
        return m;
    }
}
