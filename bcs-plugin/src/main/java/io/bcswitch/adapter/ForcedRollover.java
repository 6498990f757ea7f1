package io.bcswitch.adapter;

import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;

/**
 * Rolls a managed ledger that has entries over to a new ledger now, with public managed-ledger calls: for the length
 * of one {@code rollCurrentLedgerIfFull()} call the managed ledger's own config says "full after one entry, no
 * minimum age", then it is restored. The check and the state change happen inside the call, and adds are serialized
 * on the managed ledger's monitor, which is held meanwhile; each topic has its own config, so no other topic sees
 * the change. What the cutover does to each topic (and the benchmark's stock baseline does the same way).
 */
public final class ForcedRollover {
    private ForcedRollover() {
    }

    @SuppressWarnings("deprecation")
    public static void roll(ManagedLedgerImpl ml) {
        synchronized (ml) {
            ManagedLedgerConfig cfg = ml.getConfig();
            int maxEntries = cfg.getMaxEntriesPerLedger();
            int minRolloverMs = cfg.getMinimumRolloverTimeMs();
            cfg.setMinimumRolloverTime(0, TimeUnit.MILLISECONDS);
            cfg.setMaxEntriesPerLedger(1);
            try {
                ml.rollCurrentLedgerIfFull();
            } finally {
                cfg.setMaxEntriesPerLedger(maxEntries);
                cfg.setMinimumRolloverTime(minRolloverMs, TimeUnit.MILLISECONDS);
            }
        }
    }
}
