package io.bcswitch.adapter;

import io.bcswitch.metrics.ClientOpStats;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.stats.Counter;
import org.apache.bookkeeper.stats.Gauge;
import org.apache.bookkeeper.stats.OpStatsData;
import org.apache.bookkeeper.stats.OpStatsLogger;
import org.apache.bookkeeper.stats.StatsLogger;

/**
 * The stats logger one bookie cluster's BookKeeper client is built with: everything goes to the broker's own logger
 * as before (Pulsar's unlabelled client stats, when the operator exposes them), and the client's operations are
 * also counted under the cluster's name ({@link ClientOpStats}), which Pulsar's logger cannot label.
 */
final class ClusterStatsLogger implements StatsLogger {
    private final StatsLogger delegate;
    private final String scope;
    private final String cluster;
    private final String pool;
    private final ClientOpStats sink;

    ClusterStatsLogger(StatsLogger delegate, String cluster, String pool, ClientOpStats sink) {
        this(delegate, "", cluster, pool, sink);
    }

    private ClusterStatsLogger(StatsLogger delegate, String scope, String cluster, String pool, ClientOpStats sink) {
        this.delegate = delegate;
        this.scope = scope;
        this.cluster = cluster;
        this.pool = pool;
        this.sink = sink;
    }

    @Override
    public OpStatsLogger getOpStatsLogger(String name) {
        OpStatsLogger d = delegate.getOpStatsLogger(name);
        return ClientOpStats.counted(scope, name) ? new Counting(d, name) : d;
    }

    @Override
    public OpStatsLogger getThreadScopedOpStatsLogger(String name) {
        return delegate.getThreadScopedOpStatsLogger(name);
    }

    @Override
    public Counter getCounter(String name) {
        return delegate.getCounter(name);
    }

    @Override
    public Counter getThreadScopedCounter(String name) {
        return delegate.getThreadScopedCounter(name);
    }

    @Override
    public <T extends Number> void registerGauge(String name, Gauge<T> gauge) {
        delegate.registerGauge(name, gauge);
    }

    @Override
    public <T extends Number> void unregisterGauge(String name, Gauge<T> gauge) {
        delegate.unregisterGauge(name, gauge);
    }

    @Override
    public StatsLogger scope(String name) {
        return new ClusterStatsLogger(delegate.scope(name), scope.isEmpty() ? name : scope + "_" + name, cluster, pool,
                sink);
    }

    @Override
    public StatsLogger scopeLabel(String labelName, String labelValue) {
        return new ClusterStatsLogger(delegate.scopeLabel(labelName, labelValue), scope, cluster, pool, sink);
    }

    @Override
    public void removeScope(String name, StatsLogger statsLogger) {
        delegate.removeScope(name, statsLogger instanceof ClusterStatsLogger c ? c.delegate : statsLogger);
    }

    /** Counts each event for the cluster, then hands it to the broker's logger. */
    private final class Counting implements OpStatsLogger {
        private final OpStatsLogger d;
        private final ClientOpStats.Op op;

        Counting(OpStatsLogger d, String op) {
            this.d = d;
            this.op = sink.op(cluster, pool, op);
        }

        @Override
        public void registerFailedEvent(long latency, TimeUnit unit) {
            op.record(false, unit.toNanos(latency));
            d.registerFailedEvent(latency, unit);
        }

        @Override
        public void registerSuccessfulEvent(long latency, TimeUnit unit) {
            op.record(true, unit.toNanos(latency));
            d.registerSuccessfulEvent(latency, unit);
        }

        @Override
        public void registerSuccessfulValue(long value) {
            op.record(true, 0);
            d.registerSuccessfulValue(value);
        }

        @Override
        public void registerFailedValue(long value) {
            op.record(false, 0);
            d.registerFailedValue(value);
        }

        @Override
        public OpStatsData toOpStatsData() {
            return d.toOpStatsData();
        }

        @Override
        public void clear() {
            d.clear();
        }
    }
}
