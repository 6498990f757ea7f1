package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import java.util.ArrayList;
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

    /**
     * What undoing a switch's promotions did: the ids routed back, the ids that stay home on the target, and for those
     * a reason each ({@code NOT_REVERSED} issues, naming the target where the ledger stays).
     */
    record Unpromoted(List<Long> flipped, List<Long> stayed, List<LedgerIssue> notReversed) {
    }

    private final RegistryStore registry;
    private final LedgerCopier copier;

    PromotionReversal(RegistryStore registry, LedgerCopier copier) {
        this.registry = registry;
        this.copier = copier;
    }

    /** {@link #unpromote(long, String, RegistryView, boolean)} while a cluster that does not answer is waited for. */
    CompletableFuture<Unpromoted> unpromote(long epoch, String target, RegistryView listed) {
        return unpromote(epoch, target, listed, false);
    }

    /**
     * Undoes switch {@code epoch}'s promotions to {@code target}: each ledger goes back to the copy it was read from
     * before (its previous home when that was itself a copy, else its original) when that copy is still there. A
     * ledger stays home on the target (and its copy there is never deleted) when that copy is gone, or its cluster is
     * no longer registered or is DEPRECATED (its clients are closed): nothing is lost, and the reason is returned.
     * When a cluster does not answer whether it still holds the copy, it fails, unless {@code waitOver}: routing back
     * to a copy that may be gone would lose the ledger once the target's copy is deleted, so the rollback waits and
     * is resumed; once it has waited long enough ({@code waitOver}) such a ledger stays home on the target too.
     */
    CompletableFuture<Unpromoted> unpromote(long epoch, String target, RegistryView listed, boolean waitOver) {
        // every promoted ledger is among the copies the migration recorded before promoting: read those directly
        return registry.readCopies(epoch).thenCompose(chunks -> {
            Set<Long> ids = new TreeSet<>(listed.relocations().keySet());
            chunks.values().forEach(ids::addAll);
            return registry.readRelocations(ids);
        }).thenCompose(fresh -> registry.listClusters().thenCompose(clusters -> {
            Map<String, ClusterStatus> registered = new TreeMap<>();
            clusters.forEach(c -> registered.put(c.name(), c.status()));
            return unpromoteFrom(epoch, target, listed.withFresh(fresh), registered, waitOver);
        }));
    }

    private CompletableFuture<Unpromoted> unpromoteFrom(long epoch, String target, RegistryView view,
                                                        Map<String, ClusterStatus> registered, boolean waitOver) {
        List<Relocation> promoted = view.relocations().values().stream()
                .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).toList();
        // per ledger: empty when it goes back, else why it stays
        Map<Long, CompletableFuture<Optional<String>>> staysBecause = new TreeMap<>();
        Map<Long, String> kinds = new TreeMap<>();
        for (Relocation r : promoted) {
            String back = r.beforeThisSwitch().map(Relocation::home).orElse(r.from());
            staysBecause.put(r.ledgerId(), staysBecause(r.ledgerId(), back, registered.get(back), waitOver));
            kinds.put(r.ledgerId(), r.kind());
        }
        return CompletableFuture.allOf(staysBecause.values().toArray(CompletableFuture[]::new)).thenCompose(v ->
                registry.updateRelocations(staysBecause.keySet(), (id, cur) -> {
                    if (cur.isEmpty() || cur.get().switchEpoch() != epoch || !cur.get().home().equals(target)) {
                        return cur;
                    }
                    Optional<String> why = staysBecause.get(id).join();
                    if (why.isPresent()) {
                        log.warn("switch epoch={} rollback: ledger={} stays home on bookie-cluster={}: {}", epoch, id,
                                target, why.get());
                        return cur;
                    }
                    return cur.get().beforeThisSwitch();
                })).thenApply(stored -> {
                    Predicate<Optional<Relocation>> stays = r -> r.map(x -> x.switchEpoch() == epoch
                            && x.home().equals(target)).orElse(false);
                    List<Long> stayed = stored.entrySet().stream().filter(e -> stays.test(e.getValue()))
                            .map(Map.Entry::getKey).toList();
                    List<LedgerIssue> issues = new ArrayList<>();
                    for (long id : stayed) {
                        staysBecause.get(id).join().ifPresent(why -> issues.add(new LedgerIssue(id, kinds.get(id),
                                target, LedgerIssue.NOT_REVERSED, "stays home on " + target + ": " + why)));
                    }
                    return new Unpromoted(
                            stored.entrySet().stream().filter(e -> !stays.test(e.getValue())).map(Map.Entry::getKey)
                                    .toList(), stayed, List.copyOf(issues));
                });
    }

    /**
     * Why ledger {@code id} cannot go back to its copy on {@code back} (empty: it can); {@code status} is that cluster's
     * registration (null: not registered). Fails while a cluster that does not answer is still waited for.
     */
    private CompletableFuture<Optional<String>> staysBecause(long id, String back, ClusterStatus status,
                                                            boolean waitOver) {
        String before = "it was read from bookie-cluster " + back + " before the switch, and bookie-cluster " + back;
        if (status == null) {
            return CompletableFuture.completedFuture(Optional.of(before + " is no longer registered"));
        }
        if (status == ClusterStatus.DEPRECATED) {
            return CompletableFuture.completedFuture(Optional.of(before + " is DEPRECATED (its clients are closed)"));
        }
        return copier.facts(id, back).thenApply(f -> f.isPresent() ? Optional.<String>empty()
                : Optional.of(before + " no longer holds it")).exceptionallyCompose(e -> {
                    String cause = String.valueOf(Failures.unwrap(e).getMessage());
                    return waitOver ? CompletableFuture.completedFuture(Optional.of(before + " did not answer whether "
                            + "it still holds it within " + Rollback.UNANSWERED_WAIT_MILLIS / 1000 + " s of the "
                            + "rollback: " + cause))
                            : CompletableFuture.failedFuture(new IllegalStateException("cannot tell whether ledger "
                            + id + " is still on bookie-cluster " + back + ", where it would be read again: " + cause
                            + " (waited for up to " + Rollback.UNANSWERED_WAIT_MILLIS / 1000 + " s from the rollback "
                            + "on, then it stays home where it is)"));
                });
    }
}
