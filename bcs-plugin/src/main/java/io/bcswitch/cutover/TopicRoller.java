package io.bcswitch.cutover;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** What the cutover needs from the broker: the ledgers being written, and a way to roll one over. */
public interface TopicRoller {

    /**
     * A managed ledger open on this broker, the ledger it is writing (-1: none yet) and the metadata ledgers its
     * cursors write their positions to.
     */
    record OpenLedger(String name, long currentLedgerId, long currentLedgerEntries, List<Long> cursorLedgers) {
        public OpenLedger {
            cursorLedgers = cursorLedgers == null ? List.of() : List.copyOf(cursorLedgers);
        }

        public OpenLedger(String name, long currentLedgerId, long currentLedgerEntries) {
            this(name, currentLedgerId, currentLedgerEntries, List.of());
        }
    }

    /** Every managed ledger open on this broker. */
    List<OpenLedger> openLedgers();

    /** The ledger {@code name} is writing now, or -1 when it is not open or is between ledgers. */
    long currentLedgerId(String name);

    /**
     * Makes {@code name} stop writing its current ledger so that its next ledger is created (by the
     * routing client, on the active cluster). Publishes in flight are re-sent to the new ledger.
     * Completes once the roll was started; does nothing when the ledger is not writable right now.
     */
    CompletableFuture<RollMethod> roll(String name);

    /**
     * Makes every cursor of {@code name} whose metadata ledger satisfies {@code onOldCluster} start a new
     * metadata ledger (created on the active cluster). Cursors without a ledger (never persisted since
     * load) are left alone: their first ledger is created on the active cluster anyway.
     *
     * @return how many cursors were asked to roll over
     */
    default int rollCursors(String name, java.util.function.LongPredicate onOldCluster) {
        return 0;
    }

    /**
     * Ledger creations in flight on clusters other than {@code activeCluster}: a topic or cursor that was creating
     * a ledger when the switch arrived may still get one there, so the cutover is not over while any is.
     */
    default int createsInFlightOutside(String activeCluster) {
        return 0;
    }

    /** How a ledger was rolled over. */
    enum RollMethod { ROLLOVER, UNLOAD, SKIPPED }
}
