package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The switch directive at {@code <configPath>/switch-target}. Written by compare-and-set with
 * {@code epoch} incremented; this write is the commit point of a switch. It carries the ledger-id
 * range given to the target so that a broker can route the target's ids as soon as it sees the
 * directive, before the range table is updated.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SwitchDirective(int formatVersion, String target, String origin, long epoch, long ts,
                              long firstLedgerId) {
    public static final int FORMAT_VERSION = 1;

    public IdRange range() {
        return new IdRange(target, firstLedgerId, epoch, ts);
    }
}
