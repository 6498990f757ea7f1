package io.bcswitch.bench;

import io.bcswitch.adapter.ForcedRollover;
import io.bcswitch.testkit.TestBroker;
import io.bcswitch.testkit.TestCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;

/**
 * The baseline of the cutover: stock Pulsar rolling the same topics over to new ledgers, with no switch. Pulsar has
 * no admin call for it, so each broker's managed ledgers are rolled in-process with the plugin's own
 * {@link ForcedRollover}, at the cutover's pace.
 */
final class StockRollover {
    private StockRollover() {
    }

    /**
     * Rolls every managed ledger whose name {@code matches}, on every broker, each broker at
     * {@code topicsPerSecond}; completes when each of them writes a new ledger.
     */
    static CompletableFuture<Void> rollAll(TestCluster cluster, Predicate<String> matches, int topicsPerSecond) {
        List<CompletableFuture<Void>> each = new ArrayList<>();
        for (int i = 0; i < cluster.brokerCount(); i++) {
            TestBroker b = cluster.broker(i);
            each.add(CompletableFuture.runAsync(() -> rollOn(b, matches, topicsPerSecond)));
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
    }

    private static void rollOn(TestBroker broker, Predicate<String> matches, int topicsPerSecond) {
        Map<ManagedLedgerImpl, Long> before = new HashMap<>();
        for (Map.Entry<String, ManagedLedger> e : broker.pulsar().getDefaultManagedLedgerFactory().getManagedLedgers()
                .entrySet()) {
            if (matches.test(e.getKey()) && e.getValue() instanceof ManagedLedgerImpl ml) {
                before.put(ml, current(ml));
            }
        }
        long periodNanos = 1_000_000_000L / Math.max(1, topicsPerSecond);
        long next = System.nanoTime();
        for (ManagedLedgerImpl ml : before.keySet()) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
            next += periodNanos;
            ForcedRollover.roll(ml); // exactly what the plugin's cutover does to each topic
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        for (Map.Entry<ManagedLedgerImpl, Long> e : before.entrySet()) {
            while (current(e.getKey()) == e.getValue()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(e.getKey().getName() + " did not roll over within 2 minutes");
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
    }

    private static long current(ManagedLedgerImpl ml) {
        var ledgers = ml.getLedgersInfo();
        return ledgers.isEmpty() ? -1 : ledgers.lastKey();
    }
}
