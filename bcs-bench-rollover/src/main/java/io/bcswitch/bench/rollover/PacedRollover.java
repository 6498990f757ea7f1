package io.bcswitch.bench.rollover;

import io.bcswitch.adapter.ForcedRollover;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;

/**
 * The cutover benchmark's stock baseline on one broker: its managed ledgers whose names match rolled over to new
 * ledgers at a pace, with the plugin's own {@link ForcedRollover} (exactly what a switch's cutover does to each topic),
 * then a wait until each writes its new ledger. Used in-process by the bench and, on brokers that are processes of
 * their own, through {@link RolloverProtocolHandler}.
 */
public final class PacedRollover {
    private PacedRollover() {
    }

    /**
     * Rolls every managed ledger of {@code ledgers} (by name) whose name {@code matches}, {@code perSecond} of them a
     * second; returns how many, once each writes a ledger newer than the one it wrote before.
     *
     * @throws IllegalStateException one did not roll over within {@code deadline}
     */
    public static int rollAll(Map<String, ManagedLedger> ledgers, Predicate<String> matches, int perSecond,
                              Duration deadline) {
        Map<ManagedLedgerImpl, Long> before = new LinkedHashMap<>();
        ledgers.forEach((name, ml) -> {
            if (matches.test(name) && ml instanceof ManagedLedgerImpl impl) {
                before.put(impl, current(impl));
            }
        });
        long periodNanos = TimeUnit.SECONDS.toNanos(1) / Math.max(1, perSecond);
        long next = System.nanoTime();
        for (ManagedLedgerImpl ml : before.keySet()) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            next += periodNanos;
            ForcedRollover.roll(ml);
        }
        long end = System.nanoTime() + deadline.toNanos();
        for (Map.Entry<ManagedLedgerImpl, Long> e : before.entrySet()) {
            while (current(e.getKey()) == e.getValue()) {
                if (System.nanoTime() > end) {
                    throw new IllegalStateException(e.getKey().getName() + " did not roll over within " + deadline);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
        return before.size();
    }

    private static long current(ManagedLedgerImpl ml) {
        var ledgers = ml.getLedgersInfo();
        return ledgers.isEmpty() ? -1 : ledgers.lastKey();
    }
}
