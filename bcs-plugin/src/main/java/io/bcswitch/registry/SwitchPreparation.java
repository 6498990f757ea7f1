package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The announcement, at {@code <configPath>/switch-prepare}, of the switch about to be committed: the target has
 * already been given the range that starts at {@code firstLedgerId}, so each broker can build its clients of the
 * target now (a client of BookKeeper's ZooKeeper id generator keeps the range it first finds for its whole life)
 * instead of in the first second after the commit, while its topics start rolling onto the target.
 *
 * <p>Only a hint: it never makes anything route to the target. The directive written after it stays the one commit
 * point; a preparation whose directive never comes (the switch lost its compare-and-set, or the broker serving it
 * died) is simply replaced by the next one, and the clients built for it are closed then.
 *
 * @param epoch         the epoch the directive will have
 * @param firstLedgerId first id of the target's new range; it identifies the preparation
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SwitchPreparation(int formatVersion, String target, long epoch, long firstLedgerId, long ts) {
    public static final int FORMAT_VERSION = 1;
}
