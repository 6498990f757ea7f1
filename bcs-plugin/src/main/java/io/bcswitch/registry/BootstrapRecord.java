package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * Written once, at the first activation of the plugin in a broker cluster, and never rewritten:
 * every ledger id below the first switch's range belongs to this cluster.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BootstrapRecord(int formatVersion, String cluster, long ts) {
    public static final int FORMAT_VERSION = 1;
}
