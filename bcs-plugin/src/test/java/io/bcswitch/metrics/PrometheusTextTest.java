package io.bcswitch.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bcswitch.migration.MigrationMetrics;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

    @Test
    void aFamilyIsDeclaredOnceAndLabelsAreSortedAndEscaped() {
        String text = new PrometheusText()
                .gauge("g", "a gauge", Map.of("state", "moved", "cluster", "c\"1"), 3)
                .gauge("g", "a gauge", Map.of("state", "failed", "cluster", "c\"1"), 0.5)
                .counter("n_total", "a counter", Map.of(), 7)
                .toString();
        assertEquals("""
                # HELP g a gauge
                # TYPE g gauge
                g{cluster="c\\"1",state="moved"} 3
                g{cluster="c\\"1",state="failed"} 0.5
                # HELP n_total a counter
                # TYPE n_total counter
                n_total 7
                """, text);
    }

    @Test
    void aCounterIsNamedAsPrometheusNamesCounters() {
        assertThrows(IllegalArgumentException.class, () -> new PrometheusText().counter("n", "x", Map.of(), 1));
    }

    @Test
    void migrationEventsAreCountedByClusterAndOutcomeAndPassedOn() {
        int[] passedOn = {0};
        MigrationCounters c = new MigrationCounters(new MigrationMetrics() {
            @Override
            public void ledgerCopied(String from, String to, long bytes) {
                passedOn[0]++;
            }

            @Override
            public void collision(String cluster) {
                passedOn[0]++;
            }

            @Override
            public void alreadyPresent(String cluster) {
                passedOn[0]++;
            }

            @Override
            public void passFailed(Throwable cause) {
                passedOn[0]++;
            }
        });
        c.ledgerCopied("a", "b", 100);
        c.ledgerCopied("a", "b", 50);
        c.collision("b");
        c.alreadyPresent("b");
        c.alreadyPresent("b");
        c.promoted("b", 2);
        c.rolledBack("b");
        PrometheusText none = new PrometheusText();
        c.write(none, Map.of("cluster", "p"));
        assertEquals(true, none.toString().contains("pulsar_bookie_switch_migration_pass_failures_total{cluster=\"p\"} 0\n"),
                "written from 0, before any failure:\n" + none);
        c.passFailed(new IllegalStateException("the store did not answer"));
        c.passFailed(new IllegalStateException("the store did not answer"));
        PrometheusText t = new PrometheusText();
        c.write(t, Map.of("cluster", "p"));
        assertEquals(7, passedOn[0]);
        String text = t.toString();
        for (String line : new String[] {
                "pulsar_bookie_switch_migration_ledgers_total{bookie_cluster=\"b\",cluster=\"p\",outcome=\"copied\"} 2",
                "pulsar_bookie_switch_migration_ledgers_total{bookie_cluster=\"b\",cluster=\"p\",outcome=\"id_conflict\"} 1",
                "pulsar_bookie_switch_migration_ledgers_total{bookie_cluster=\"b\",cluster=\"p\",outcome=\"already_present\"} 2",
                "pulsar_bookie_switch_migration_ledgers_total{bookie_cluster=\"b\",cluster=\"p\",outcome=\"promoted\"} 2",
                "pulsar_bookie_switch_migration_copied_bytes_total{bookie_cluster=\"b\",cluster=\"p\"} 150",
                "pulsar_bookie_switch_rollbacks_total{bookie_cluster=\"b\",cluster=\"p\"} 1",
                "pulsar_bookie_switch_migration_pass_failures_total{cluster=\"p\"} 2"}) {
            assertEquals(true, text.contains(line + "\n"), line + " in:\n" + text);
        }
    }
}
