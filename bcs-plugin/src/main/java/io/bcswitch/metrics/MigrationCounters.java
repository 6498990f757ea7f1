package io.bcswitch.metrics;

import io.bcswitch.migration.MigrationMetrics;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the migrations run by this broker did, counted since it started, for {@code /metrics}; every event is also
 * passed on to {@code next} (the OpenTelemetry instruments, for those who enable them).
 */
public final class MigrationCounters implements MigrationMetrics {
    private static final String LEDGERS = MetricNames.MIGRATION_LEDGERS;
    private static final String BYTES = MetricNames.MIGRATION_COPIED_BYTES;
    private static final String ROLLBACKS = MetricNames.ROLLBACKS;

    private final MigrationMetrics next;
    /** bookie cluster -> outcome -> count */
    private final Map<String, Map<String, LongAdder>> ledgers = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> bytes = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> rollbacks = new ConcurrentHashMap<>();
    private final LongAdder passFailures = new LongAdder();

    public MigrationCounters(MigrationMetrics next) {
        this.next = next;
    }

    private void add(String cluster, String outcome, long n) {
        ledgers.computeIfAbsent(cluster, c -> new ConcurrentHashMap<>()).computeIfAbsent(outcome, o -> new LongAdder())
                .add(n);
    }

    @Override
    public void ledgerCopied(String from, String to, long bytesCopied) {
        add(to, "copied", 1);
        bytes.computeIfAbsent(to, c -> new LongAdder()).add(bytesCopied);
        next.ledgerCopied(from, to, bytesCopied);
    }

    @Override
    public void verificationFailed(String cluster) {
        add(cluster, "verification_failed", 1);
        next.verificationFailed(cluster);
    }

    @Override
    public void alreadyPresent(String cluster) {
        add(cluster, "already_present", 1);
        next.alreadyPresent(cluster);
    }

    @Override
    public void collision(String cluster) {
        add(cluster, "id_conflict", 1);
        next.collision(cluster);
    }

    @Override
    public void promoted(String cluster, int n) {
        add(cluster, "promoted", n);
        next.promoted(cluster, n);
    }

    @Override
    public void rolledBack(String cluster) {
        rollbacks.computeIfAbsent(cluster, c -> new LongAdder()).increment();
        next.rolledBack(cluster);
    }

    @Override
    public void deleted(String cluster, int n) {
        add(cluster, "deleted", n);
        next.deleted(cluster, n);
    }

    @Override
    public void passFailed(Throwable cause) {
        passFailures.increment();
        next.passFailed(cause);
    }

    /** Writes the counters, each labelled with {@code common} plus its bookie cluster (and outcome). */
    public void write(PrometheusText text, Map<String, String> common) {
        new TreeMap<>(ledgers).forEach((cluster, byOutcome) -> new TreeMap<>(byOutcome).forEach((outcome, n) ->
                text.counter(LEDGERS, "Ledgers the migration handled on a bookie cluster, by outcome (copied to it, "
                        + "already_present: an identical copy was there already, promoted to home there, "
                        + "verification_failed, id_conflict: it holds a different ledger of that id, deleted from it)",
                        labels(common, cluster, outcome), n.sum())));
        new TreeMap<>(bytes).forEach((cluster, n) -> text.counter(BYTES, "Bytes the migration copied to a bookie "
                + "cluster", labels(common, cluster, null), n.sum()));
        new TreeMap<>(rollbacks).forEach((cluster, n) -> text.counter(ROLLBACKS, "Rollbacks of a switch to a bookie "
                + "cluster finished by this broker", labels(common, cluster, null), n.sum()));
        // always written (from 0): an alert on its increase needs the series before the first failure
        text.counter(MetricNames.MIGRATION_PASS_FAILURES, "Migration passes of this broker that failed (each is "
                + "retried at the next pass; see the broker's log)", common, passFailures.sum());
    }

    private static Map<String, String> labels(Map<String, String> common, String cluster, String outcome) {
        Map<String, String> l = new TreeMap<>(common);
        l.put("bookie_cluster", cluster);
        if (outcome != null) {
            l.put("outcome", outcome);
        }
        return l;
    }
}
