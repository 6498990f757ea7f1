package io.bcswitch.switching;

import io.bcswitch.routing.Ownership;

/** Moves this broker's open ledgers onto the newly active cluster after a switch. */
@FunctionalInterface
public interface CutoverTrigger {
    /** Starts (asynchronously) the cutover for {@code ownership}'s active cluster; replaces a running one. */
    void start(Ownership ownership);
}
