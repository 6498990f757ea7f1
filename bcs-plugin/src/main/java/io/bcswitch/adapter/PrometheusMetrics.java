package io.bcswitch.adapter;

import java.util.function.Supplier;
import org.apache.pulsar.broker.stats.prometheus.PrometheusRawMetricsProvider;
import org.apache.pulsar.common.util.SimpleTextOutputStream;

/**
 * The plugin's metrics on the broker's own {@code /metrics} endpoint, beside Pulsar's (the broker's raw metrics
 * provider hook): what the Helm chart's monitors already scrape, with no OpenTelemetry exporter to enable.
 */
final class PrometheusMetrics implements PrometheusRawMetricsProvider {
    private final Supplier<String> text;

    /** @param text the metrics now, in Prometheus' text format (must not block: it runs on the scrape) */
    PrometheusMetrics(Supplier<String> text) {
        this.text = text;
    }

    @Override
    public void generate(SimpleTextOutputStream stream) {
        stream.write(text.get());
    }
}
