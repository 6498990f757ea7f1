package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * Counter at {@code <configPath>/relocation-epoch}, incremented after each change of the relocation
 * table (a batch of promotions, a rollback), and, per live broker, the epoch it routes with
 * ({@code <configPath>/relocation-applied/<brokerId>}). Nothing moved by epoch n is deleted from its
 * old cluster before every live broker has applied n.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RelocationEpoch(int formatVersion, long epoch, long ts) {
    public static final int FORMAT_VERSION = 1;
}
