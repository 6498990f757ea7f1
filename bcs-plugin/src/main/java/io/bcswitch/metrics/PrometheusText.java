package io.bcswitch.metrics;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Metrics in Prometheus' text exposition format, as the broker's {@code /metrics} endpoint serves them. Samples of
 * one metric must be written one after the other (the format groups a family under its {@code # TYPE} line); the
 * first sample of a name declares it.
 */
public final class PrometheusText {
    private final StringBuilder out = new StringBuilder();
    private final Set<String> declared = new HashSet<>();

    public PrometheusText gauge(String name, String help, Map<String, String> labels, double value) {
        return sample(name, "gauge", help, labels, value);
    }

    /** {@code name} ends in {@code _total}, as Prometheus names counters. */
    public PrometheusText counter(String name, String help, Map<String, String> labels, double value) {
        if (!name.endsWith("_total")) {
            throw new IllegalArgumentException("a counter's name ends in _total: " + name);
        }
        return sample(name, "counter", help, labels, value);
    }

    /**
     * A summary without quantiles: {@code name_count} and {@code name_sum} (in the base unit its name ends with) of
     * the observations so far.
     */
    public PrometheusText summary(String name, String help, Map<String, String> labels, long count, double sum) {
        declare(name, "summary", help);
        line(name + "_count", labels, count);
        return line(name + "_sum", labels, sum);
    }

    private PrometheusText sample(String name, String type, String help, Map<String, String> labels, double value) {
        declare(name, type, help);
        return line(name, labels, value);
    }

    private void declare(String name, String type, String help) {
        if (declared.add(name)) {
            out.append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", "\\n"))
                    .append('\n');
            out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        }
    }

    private PrometheusText line(String name, Map<String, String> labels, double value) {
        out.append(name);
        if (!labels.isEmpty()) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, String> l : new java.util.TreeMap<>(labels).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append(l.getKey()).append("=\"").append(escape(l.getValue())).append('"');
            }
            out.append('}');
        }
        out.append(' ').append(value == Math.rint(value) && !Double.isInfinite(value) ? Long.toString((long) value)
                : Double.toString(value)).append('\n');
        return this;
    }

    private static String escape(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
