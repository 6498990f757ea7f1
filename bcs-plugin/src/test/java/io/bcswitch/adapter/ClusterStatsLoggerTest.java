package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.metrics.ClientOpStats;
import io.bcswitch.metrics.PrometheusText;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.stats.OpStatsLogger;
import org.apache.bookkeeper.stats.StatsLogger;
import org.junit.jupiter.api.Test;

/** A cluster's client counts its operations under the cluster's name and still reports to the broker's logger. */
class ClusterStatsLoggerTest {

    @Test
    void theClientsOperationsAreCountedPerClusterAndPassedOn() {
        int[] passedOn = {0};
        StatsLogger broker = new ForwardingNull() {
            @Override
            public OpStatsLogger getOpStatsLogger(String name) {
                OpStatsLogger d = super.getOpStatsLogger(name);
                return new org.apache.bookkeeper.stats.OpStatsLogger() {
                    public void registerFailedEvent(long l, TimeUnit u) {
                        passedOn[0]++;
                    }

                    public void registerSuccessfulEvent(long l, TimeUnit u) {
                        passedOn[0]++;
                    }

                    public void registerSuccessfulValue(long v) {
                    }

                    public void registerFailedValue(long v) {
                    }

                    public org.apache.bookkeeper.stats.OpStatsData toOpStatsData() {
                        return d.toOpStatsData();
                    }

                    public void clear() {
                    }
                };
            }
        };
        ClientOpStats stats = new ClientOpStats();
        StatsLogger client = new ClusterStatsLogger(broker, "old", "default", stats).scope("bookkeeper_client");
        client.getOpStatsLogger("ADD_ENTRY").registerSuccessfulEvent(3, TimeUnit.MILLISECONDS);
        client.scopeLabel("x", "y").getOpStatsLogger("ADD_ENTRY").registerFailedEvent(1, TimeUnit.MILLISECONDS);
        client.getOpStatsLogger("LAC_UPDATE_HITS").registerSuccessfulEvent(1, TimeUnit.MILLISECONDS); // not counted
        client.scope("per_channel_bookie_client").getOpStatsLogger("ADD_ENTRY")
                .registerSuccessfulEvent(1, TimeUnit.MILLISECONDS); // another scope: not counted
        assertEquals(4, passedOn[0], "the broker's logger sees every event");
        PrometheusText t = new PrometheusText();
        stats.write(t, Map.of());
        String text = t.toString();
        assertTrue(text.contains("pulsar_bookie_switch_client_op_seconds_count{bookie_cluster=\"old\",op=\"ADD_ENTRY\","
                + "outcome=\"success\",pool=\"default\"} 1\n"), text);
        assertTrue(text.contains("pulsar_bookie_switch_client_op_seconds_count{bookie_cluster=\"old\",op=\"ADD_ENTRY\","
                + "outcome=\"failure\",pool=\"default\"} 1\n"), text);
        assertEquals(4, text.lines().filter(l -> l.startsWith("pulsar_")).count(), "two label sets, count and sum: "
                + text);
    }

    /** The null logger, whose scopes stay this class (so the test's override applies in every scope). */
    private static class ForwardingNull implements StatsLogger {
        private final StatsLogger d = NullStatsLogger.INSTANCE;

        public OpStatsLogger getOpStatsLogger(String name) {
            return d.getOpStatsLogger(name);
        }

        public OpStatsLogger getThreadScopedOpStatsLogger(String name) {
            return d.getThreadScopedOpStatsLogger(name);
        }

        public org.apache.bookkeeper.stats.Counter getCounter(String name) {
            return d.getCounter(name);
        }

        public org.apache.bookkeeper.stats.Counter getThreadScopedCounter(String name) {
            return d.getThreadScopedCounter(name);
        }

        public <T extends Number> void registerGauge(String name, org.apache.bookkeeper.stats.Gauge<T> gauge) {
        }

        public <T extends Number> void unregisterGauge(String name, org.apache.bookkeeper.stats.Gauge<T> gauge) {
        }

        public StatsLogger scope(String name) {
            return this;
        }

        public StatsLogger scopeLabel(String name, String value) {
            return this;
        }

        public void removeScope(String name, StatsLogger logger) {
        }
    }
}
