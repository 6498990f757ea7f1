package io.bcswitch.metrics;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.migration.DrainReport;
import io.bcswitch.migration.DrainReports;
import io.bcswitch.migration.MigrationOrchestrator;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What {@code /metrics} says, computed from what the broker holds: migration progress, rollback window, drain. */
class BrokerMetricsTest {
    private static final long SWITCHED_AT = 1_000_000_000L;
    private final Clock clock = Clock.fixed(Instant.ofEpochMilli(SWITCHED_AT + 3_600_000L), ZoneOffset.UTC);
    private final AtomicReference<MigrationOrchestrator.Seen> seen = new AtomicReference<>();
    private final AtomicReference<Map<String, DrainReports.Latest>> drain = new AtomicReference<>(Map.of());
    private final ClientOpStats ops = new ClientOpStats();
    private final SwitchDirective directive = new SwitchDirective(1, "b", "a", 1, SWITCHED_AT, 1L << 32);

    private String scrape() {
        Ownership o = new Ownership(RangeTable.bootstrap("a", 0), "b", 1);
        return new BrokerMetrics("p", new BrokerMetrics.Sources(() -> o, Optional::empty, active -> Map.of(),
                () -> 2, () -> Optional.ofNullable(seen.get()), drain::get, null, ops, 24, clock,
                () -> 1)).text();
    }

    private static void has(String text, String line) {
        assertTrue(text.lines().anyMatch(line::equals), "expected\n  " + line + "\nin\n" + text);
    }

    @Test
    void migrationPhaseRemainingLedgersAndTheRollbackWindowAreShown() {
        MigrationState build = MigrationState.start(1, "b", "broker-1", SWITCHED_AT).moveTo(Phase.BUILD, SWITCHED_AT)
                .edit().progress(10, 4, 1, 3, 1, 1, 0, 0).bytesRemaining(123_456).build();
        seen.set(new MigrationOrchestrator.Seen(directive, build));
        String text = scrape();
        has(text, "pulsar_bookie_switch_migration_remaining_bytes{bookie_cluster=\"b\",cluster=\"p\"} 123456");
        has(text, "pulsar_bookie_switch_migration_phase{bookie_cluster=\"b\",cluster=\"p\",phase=\"BUILD\"} 1");
        has(text, "pulsar_bookie_switch_migration_phase{bookie_cluster=\"b\",cluster=\"p\",phase=\"DONE\"} 0");
        has(text, "pulsar_bookie_switch_migration_plan_ledgers{bookie_cluster=\"b\",cluster=\"p\",state=\"remaining\"} 5");
        has(text, "pulsar_bookie_switch_migration_plan_ledgers{bookie_cluster=\"b\",cluster=\"p\",state=\"planned\"} 10");
        has(text, "pulsar_bookie_switch_rollback_window_seconds{bookie_cluster=\"b\",cluster=\"p\"} 82800");
        has(text, "pulsar_bookie_switch_relocation_epoch_lag{cluster=\"p\"} 2");
        has(text, "pulsar_bookie_switch_brokers_without_plugin{cluster=\"p\"} 1");

        seen.set(new MigrationOrchestrator.Seen(directive, build.edit().originalsDeleted(3).build()));
        has(scrape(), "pulsar_bookie_switch_rollback_window_seconds{bookie_cluster=\"b\",cluster=\"p\"} 0");
        seen.set(new MigrationOrchestrator.Seen(directive, build.moveTo(Phase.PROMOTE, SWITCHED_AT)
                .moveTo(Phase.DONE_WITH_FAILURES, SWITCHED_AT)));
        String done = scrape();
        has(done, "pulsar_bookie_switch_migration_plan_ledgers{bookie_cluster=\"b\",cluster=\"p\",state=\"remaining\"} 0");
        has(done, "pulsar_bookie_switch_migration_remaining_bytes{bookie_cluster=\"b\",cluster=\"p\"} 0");
        has(done, "pulsar_bookie_switch_rollback_window_seconds{bookie_cluster=\"b\",cluster=\"p\"} 82800");
        seen.set(new MigrationOrchestrator.Seen(directive, null)); // not started: PENDING, whole window
        has(scrape(), "pulsar_bookie_switch_migration_phase{bookie_cluster=\"b\",cluster=\"p\",phase=\"PENDING\"} 1");
    }

    @Test
    void drainIsShownForInactiveClustersOnlyWithWhenItWasMeasured() {
        DrainReport onA = new DrainReport("a", false, "DEPRECATED", false, 3, 4096, List.of(), 0, List.of(), null,
                "n", Map.of());
        DrainReport onB = new DrainReport("b", true, "ACTIVE", false, 9, 9999, List.of(), 0, List.of(), null, "n",
                Map.of());
        drain.set(Map.of("a", new DrainReports.Latest(onA, 5_000), "b", new DrainReports.Latest(onB, 5_000)));
        String text = scrape();
        has(text, "pulsar_bookie_switch_drain_bytes{bookie_cluster=\"a\",cluster=\"p\"} 4096");
        has(text, "pulsar_bookie_switch_drain_ledgers{bookie_cluster=\"a\",cluster=\"p\"} 3");
        has(text, "pulsar_bookie_switch_drain_report_timestamp_seconds{bookie_cluster=\"a\",cluster=\"p\"} 5");
        assertFalse(text.contains("bookie_cluster=\"b\",cluster=\"p\"} 9999"), "the active cluster is not drained");
    }

    @Test
    void clientOperationsAreASummaryPerClusterPoolOperationAndOutcome() {
        ops.record("a", "default", "READ_ENTRY", true, 2_000_000);
        ops.record("a", "default", "READ_ENTRY", true, 4_000_000);
        ops.record("a", "default", "READ_ENTRY", false, 1_000_000);
        String text = scrape();
        has(text, "# TYPE pulsar_bookie_switch_client_op_seconds summary");
        has(text, "pulsar_bookie_switch_client_op_seconds_count{bookie_cluster=\"a\",cluster=\"p\",op=\"READ_ENTRY\","
                + "outcome=\"success\",pool=\"default\"} 2");
        has(text, "pulsar_bookie_switch_client_op_seconds_sum{bookie_cluster=\"a\",cluster=\"p\",op=\"READ_ENTRY\","
                + "outcome=\"success\",pool=\"default\"} 0.006");
        has(text, "pulsar_bookie_switch_client_op_seconds_count{bookie_cluster=\"a\",cluster=\"p\",op=\"READ_ENTRY\","
                + "outcome=\"failure\",pool=\"default\"} 1");
    }
}
