package io.bcswitch.adapter;

import io.bcswitch.migration.MigrationMetrics;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongGauge;
import java.util.function.Supplier;

/**
 * The migration's counters and the active cluster as OpenTelemetry instruments on the broker's own
 * {@link OpenTelemetry} (exported wherever the broker exports its metrics). Every instrument carries the
 * attribute {@code pulsar.bookie_cluster.name}.
 */
final class OpenTelemetryMigrationMetrics implements MigrationMetrics, AutoCloseable {
    static final String PREFIX = "pulsar.broker.bookie_cluster_switch.";
    private static final AttributeKey<String> CLUSTER = AttributeKey.stringKey("pulsar.bookie_cluster.name");

    private final LongCounter ledgersCopied;
    private final LongCounter bytesCopied;
    private final LongCounter verificationFailures;
    private final LongCounter collisions;
    private final LongCounter alreadyPresent;
    private final LongCounter promotions;
    private final LongCounter rollbacks;
    private final LongCounter deletions;
    private final LongCounter passFailures;
    private final ObservableLongGauge active;

    OpenTelemetryMigrationMetrics(OpenTelemetry otel, Supplier<String> activeCluster) {
        Meter meter = otel.getMeter("io.bcswitch.bookie-cluster-switch");
        ledgersCopied = counter(meter, "migration.ledger.copied", "Ledgers copied and verified onto the active cluster",
                "{ledger}");
        bytesCopied = counter(meter, "migration.bytes.copied", "Bytes copied onto the active cluster", "By");
        verificationFailures = counter(meter, "migration.verification.failed", "Copies that failed or did not verify",
                "{ledger}");
        collisions = counter(meter, "migration.collision",
                "Ledgers whose id the target already held with different content", "{ledger}");
        alreadyPresent = counter(meter, "migration.ledger.already_present",
                "Copies that found an identical ledger already on the target (PIP-477's "
                + "migration_ledger_id_conflict_total)", "{ledger}");
        promotions = counter(meter, "migration.ledger.promoted", "Verified copies made the ledger's home", "{ledger}");
        rollbacks = counter(meter, "rollback", "Switches rolled back", "{switch}");
        deletions = counter(meter, "ledger.deleted", "Ledgers deleted by cleanup or after a rollback", "{ledger}");
        passFailures = counter(meter, "migration.pass.failed",
                "Migration passes of this broker that failed (retried at the next pass)", "{pass}");
        active = meter.gaugeBuilder(PREFIX + "active").ofLongs()
                .setDescription("1 for the bookie cluster new ledgers are created on")
                .buildWithCallback(m -> {
                    String a = activeCluster.get();
                    if (a != null) {
                        m.record(1, Attributes.of(CLUSTER, a));
                    }
                });
    }

    private static LongCounter counter(Meter meter, String name, String description, String unit) {
        return meter.counterBuilder(PREFIX + name).setDescription(description).setUnit(unit).build();
    }

    @Override
    public void ledgerCopied(String from, String to, long bytes) {
        ledgersCopied.add(1, Attributes.of(CLUSTER, to));
        bytesCopied.add(bytes, Attributes.of(CLUSTER, to));
    }

    @Override
    public void verificationFailed(String cluster) {
        verificationFailures.add(1, Attributes.of(CLUSTER, cluster));
    }

    @Override
    public void alreadyPresent(String cluster) {
        alreadyPresent.add(1, Attributes.of(CLUSTER, cluster));
    }

    @Override
    public void collision(String cluster) {
        collisions.add(1, Attributes.of(CLUSTER, cluster));
    }

    @Override
    public void promoted(String cluster, int ledgers) {
        promotions.add(ledgers, Attributes.of(CLUSTER, cluster));
    }

    @Override
    public void passFailed(Throwable cause) {
        passFailures.add(1);
    }

    @Override
    public void rolledBack(String cluster) {
        rollbacks.add(1, Attributes.of(CLUSTER, cluster));
    }

    @Override
    public void deleted(String cluster, int ledgers) {
        deletions.add(ledgers, Attributes.of(CLUSTER, cluster));
    }

    @Override
    public void close() {
        active.close();
    }
}
