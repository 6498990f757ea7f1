package io.bcswitch.adapter;

import io.bcswitch.concurrent.Windows;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The stored inventory plus, for every compacted topic, the compacted ledger its owning broker uses now. The
 * metadata store's copy of the compaction cursor's properties is only rewritten when the cursor's own ledger
 * rolls over, so it can name an older compacted ledger than the one in use (a compaction that finished while
 * the broker's cutover ran leaves its ledger on the old cluster, known only to the cursor's ledger). Without
 * this, that ledger would be neither copied nor counted by the drain report.
 *
 * <p>A topic that no longer exists answers empty; any other failure fails the read (the caller retries), so
 * nothing is planned or reported drained on a partial picture. At most {@link #PARALLEL} brokers are asked at once.
 */
final class LiveCompactionInventory implements LedgerInventory {
    static final int PARALLEL = 8;

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(LiveCompactionInventory.class);

    private final LedgerInventory stored;
    private final Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf;
    private final boolean bestEffort;

    /**
     * @param compactedLedgerOf the compacted ledger the topic of a managed ledger uses now (empty: none, or the
     *                          topic is gone)
     */
    LiveCompactionInventory(LedgerInventory stored,
                            Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf) {
        this(stored, compactedLedgerOf, false);
    }

    /**
     * @param bestEffort a topic whose owner cannot answer (it cannot load the topic: the active cluster's bookies
     *                   are down, say) is taken as the stored metadata names it, with a warning, instead of failing
     *                   the read: for the auditor, which reports rather than acts
     */
    LiveCompactionInventory(LedgerInventory stored,
                            Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf, boolean bestEffort) {
        this.stored = stored;
        this.compactedLedgerOf = compactedLedgerOf;
        this.bestEffort = bestEffort;
    }

    private CompletableFuture<Optional<Long>> ask(String managedLedger) {
        CompletableFuture<Optional<Long>> answer = compactedLedgerOf.apply(managedLedger);
        return !bestEffort ? answer : answer.exceptionally(e -> {
            log.warn("ledger-name={}: its owning broker cannot say which compacted ledger it uses ({}); taking the "
                    + "one its stored compaction cursor names", managedLedger, e.toString());
            return Optional.empty();
        });
    }

    @Override
    public CompletableFuture<List<LedgerReference>> references() {
        return stored.references().thenCompose(refs -> {
            Set<String> compacted = new LinkedHashSet<>();
            Set<Long> known = new HashSet<>();
            for (LedgerReference r : refs) {
                if (r.kind() == LedgerKind.COMPACTION) {
                    // "<managed ledger>/<cursor>#<property>": managed-ledger names hold '/', cursor names do not
                    compacted.add(r.referencedBy().substring(0, r.referencedBy().lastIndexOf('/')));
                    known.add(r.ledgerId());
                }
            }
            List<String> managedLedgers = new ArrayList<>(compacted);
            return Windows.map(managedLedgers, PARALLEL, this::ask).thenApply(answers -> {
                List<LedgerReference> all = new ArrayList<>(refs);
                for (int i = 0; i < managedLedgers.size(); i++) {
                    Optional<Long> current = answers.get(i);
                    if (current.isPresent() && known.add(current.get())) {
                        all.add(new LedgerReference(current.get(), LedgerKind.COMPACTION, managedLedgers.get(i)
                                + "/__compaction#in-use"));
                    }
                }
                return all;
            });
        });
    }
}
