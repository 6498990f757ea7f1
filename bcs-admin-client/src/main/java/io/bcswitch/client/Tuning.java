package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The pacing settings: what the answering broker uses now, its broker.conf's values, and what an operator stored at
 * run time (a null there: broker.conf's value).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Tuning(Values effective, Values brokerConf, Stored stored) {

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Values(long migrationBytesPerSecond, int migrationConcurrency, double cutoverTopicsPerSecond) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Stored(Long migrationBytesPerSecond, Integer migrationConcurrency, Double cutoverTopicsPerSecond,
                         long updatedAt) {
    }

    /**
     * A change for {@link BookieClustersAdmin#setTuning}: each setting is left as it is (the default), set to a
     * value, or reset to broker.conf's value.
     */
    public static final class Change {
        final java.util.Map<String, Object> fields = new java.util.LinkedHashMap<>();

        public Change migrationBytesPerSecond(long v) {
            fields.put("migrationBytesPerSecond", v);
            return this;
        }

        public Change migrationConcurrency(int v) {
            fields.put("migrationConcurrency", v);
            return this;
        }

        public Change cutoverTopicsPerSecond(double v) {
            fields.put("cutoverTopicsPerSecond", v);
            return this;
        }

        /** Back to broker.conf's value: {@code migrationBytesPerSecond}, {@code migrationConcurrency} or {@code cutoverTopicsPerSecond}. */
        public Change reset(String setting) {
            fields.put(setting, null);
            return this;
        }
    }
}
