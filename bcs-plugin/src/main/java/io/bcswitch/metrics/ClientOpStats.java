package io.bcswitch.metrics;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The BookKeeper client's own operations (add, read, create, open, recover, delete), counted per bookie cluster and
 * client pool: Pulsar keeps one unlabelled set of client stats for all clusters, which cannot tell the old cluster's
 * errors from the new one's. Written as a Prometheus summary without quantiles (count and sum), so that rates and
 * mean latencies come from {@code rate()} and nothing is reset on a scrape.
 */
public final class ClientOpStats {
    /** The BookKeeper client's scope and the operations of it that are counted. */
    public static final String CLIENT_SCOPE = "bookkeeper_client";
    public static final Set<String> OPS = Set.of("ADD_ENTRY", "READ_ENTRY", "LEDGER_CREATE", "LEDGER_OPEN",
            "LEDGER_RECOVER", "LEDGER_DELETE");

    private record Key(String cluster, String pool, String op, boolean success) {
    }

    private static final class Totals {
        final LongAdder count = new LongAdder();
        final LongAdder nanos = new LongAdder();
    }

    private final Map<Key, Totals> totals = new ConcurrentHashMap<>();

    /** Whether the operation {@code name} of the client scope {@code scope} is counted. */
    public static boolean counted(String scope, String name) {
        return CLIENT_SCOPE.equals(scope) && OPS.contains(name);
    }

    /** One finished operation; {@code nanos} is its latency (0 for an operation that measures a value). */
    public void record(String cluster, String pool, String op, boolean success, long nanos) {
        op(cluster, pool, op).record(success, nanos);
    }

    /** The totals of one operation of one cluster's client, resolved once (the client records on every entry). */
    public Op op(String cluster, String pool, String op) {
        return new Op(totals.computeIfAbsent(new Key(cluster, pool, op, true), k -> new Totals()),
                totals.computeIfAbsent(new Key(cluster, pool, op, false), k -> new Totals()));
    }

    /** Where one operation's outcomes are counted. */
    public static final class Op {
        private final Totals success;
        private final Totals failure;

        private Op(Totals success, Totals failure) {
            this.success = success;
            this.failure = failure;
        }

        public void record(boolean succeeded, long nanos) {
            Totals t = succeeded ? success : failure;
            t.count.increment();
            t.nanos.add(Math.max(0, nanos));
        }
    }

    /** Writes the totals, each labelled with {@code common} plus bookie cluster, pool, operation and outcome. */
    public void write(PrometheusText text, Map<String, String> common) {
        TreeMap<String, Map.Entry<Key, Totals>> sorted = new TreeMap<>();
        totals.forEach((k, v) -> sorted.put(k.cluster() + '\0' + k.pool() + '\0' + k.op() + '\0' + k.success(),
                Map.entry(k, v)));
        sorted.values().forEach(e -> {
            Key k = e.getKey();
            Map<String, String> labels = new TreeMap<>(common);
            labels.put("bookie_cluster", k.cluster());
            labels.put("pool", k.pool());
            labels.put("op", k.op());
            labels.put("outcome", k.success() ? "success" : "failure");
            text.summary(MetricNames.CLIENT_OP_SECONDS, "BookKeeper client operations of this broker on a bookie "
                    + "cluster (pool: the broker's clients, or migration), by operation and outcome", labels,
                    e.getValue().count.sum(), e.getValue().nanos.sum() / 1e9);
        });
    }
}
