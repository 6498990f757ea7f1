package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A ledger-id range handed to a cluster when it became active. Every ledger id from
 * {@code firstLedgerId} up to (not including) the next range's first id was issued by {@code cluster}.
 *
 * @param cluster       owning cluster name
 * @param firstLedgerId first id of the range ({@code highOrderBits << 32}; 0 for the bootstrap range)
 * @param epoch         switch epoch that created the range (0 for the bootstrap range)
 * @param since         epoch millis the range was allocated
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record IdRange(String cluster, long firstLedgerId, long epoch, long since) {

    /** High-order bits ({@code idgen-long/HOB-n} node) the range starts at. */
    public long highOrderBits() {
        return firstLedgerId >>> 32;
    }
}
