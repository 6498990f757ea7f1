package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Undoes a switch's promotions in the relocation table, for its rollback and for promotions that raced with it:
 * each ledger is routed back only to a copy that is known to be there, since routing back to a copy that may be gone
 * would lose the ledger once the rolled-back copy is deleted.
 */
final class PromotionReversal {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    /** What undoing a switch's promotions did: the ids routed back, and the ids that stay home on the target. */
    record Unpromoted(List<Long> flipped, List<Long> stayed) {
    }

    private final RegistryStore registry;
    private final LedgerCopier copier;

    PromotionReversal(RegistryStore registry, LedgerCopier copier) {
        this.registry = registry;
        this.copier = copier;
    }

    /**
     * Undoes switch {@code epoch}'s promotions to {@code target}: each ledger goes back to its previous home when
     * that copy is still there, else to its original when that is there; a ledger with neither keeps its home on
     * the target (and its copy there is never deleted). Fails when it cannot tell whether a previous copy is
     * there (its cluster does not answer): routing back to a copy that may be gone would lose the ledger once the
     * target's copy is deleted, so the rollback waits and is resumed.
     */
    CompletableFuture<Unpromoted> unpromote(long epoch, String target, RegistryView listed) {
        // every promoted ledger is among the copies the migration recorded before promoting: read those directly
        return registry.readCopies(epoch).thenCompose(chunks -> {
            Set<Long> ids = new TreeSet<>(listed.relocations().keySet());
            chunks.values().forEach(ids::addAll);
            return registry.readRelocations(ids);
        }).thenCompose(fresh -> unpromoteFrom(epoch, target, listed.withFresh(fresh)));
    }

    private CompletableFuture<Unpromoted> unpromoteFrom(long epoch, String target, RegistryView view) {
        List<Relocation> promoted = view.relocations().values().stream()
                .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).toList();
        Map<Long, CompletableFuture<Boolean>> restorable = new TreeMap<>();
        for (Relocation r : promoted) {
            String back = r.beforeThisSwitch().map(Relocation::home).orElse(r.from());
            restorable.put(r.ledgerId(), copier.facts(r.ledgerId(), back).thenApply(Optional::isPresent)
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(new IllegalStateException(
                            "cannot tell whether ledger " + r.ledgerId() + " is still on bookie-cluster " + back
                                    + ", where it would be read again: " + Failures.unwrap(e).getMessage()))));
        }
        return CompletableFuture.allOf(restorable.values().toArray(CompletableFuture[]::new)).thenCompose(v ->
                registry.updateRelocations(restorable.keySet(), (id, cur) -> {
                    if (cur.isEmpty() || cur.get().switchEpoch() != epoch || !cur.get().home().equals(target)) {
                        return cur;
                    }
                    if (!restorable.get(id).join()) {
                        log.warn("switch epoch={} rollback: ledger={} stays home on bookie-cluster={}: the copy it was "
                                + "read from before is gone", epoch, id, target);
                        return cur;
                    }
                    return cur.get().beforeThisSwitch();
                })).thenApply(stored -> {
                    Predicate<Optional<Relocation>> stays = r -> r.map(x -> x.switchEpoch() == epoch
                            && x.home().equals(target)).orElse(false);
                    return new Unpromoted(
                            stored.entrySet().stream().filter(e -> !stays.test(e.getValue())).map(Map.Entry::getKey)
                                    .toList(),
                            stored.entrySet().stream().filter(e -> stays.test(e.getValue())).map(Map.Entry::getKey)
                                    .toList());
                });
    }
}
