package io.bcswitch.migration;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.registry.RegistryStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one judgement of a copy that a deletion list names (the copies a rollback left on its target, and those a
 * superseded migration made and never promoted), once the caller has ruled out what is no copy to delete there (a
 * ledger's home, one the cluster issued) and what a broker holds open. A copy whose home holds the same closed ledger
 * is deleted. A copy whose home does not (Pulsar deleted the ledger while it was being moved, or the home holds other
 * content) is deleted only when a complete inventory says nothing references it: nothing can ever read it, and left
 * there it would stay for good; when something may reference it, it may be the last one, and it leaves the list for
 * cleanup to decide about. One rule for both lists, so that a leftover of one kind is never kept where the same
 * leftover of the other is deleted.
 */
final class ListedCopies {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);

    /** What one listed id is, looked at right now. */
    enum Look {
        /** no copy there any more, or none the migration made: off the list, never deleted here */
        NOT_ONE,
        /** it could not be looked at (a cluster does not answer), or a broker holds it open: listed still */
        LATER,
        /** its home holds the same closed ledger: deleted */
        DUPLICATE,
        /** a copy the migration made whose home holds no such ledger, or another: deleted only if unreferenced */
        ALONE
    }

    /** What was done with one listed id. */
    enum Settled {
        DELETED,
        /** off the list, the ledger stays */
        DROPPED,
        /** stays listed, for a later pass */
        LATER
    }

    /** How far one list got: copies deleted, ids still listed. */
    record Worked(int deleted, int remaining) {
    }

    private final RegistryStore registry;
    private final LedgerCopier copier;
    private final LedgerInventory inventory;

    ListedCopies(RegistryStore registry, LedgerCopier copier, LedgerInventory inventory) {
        this.registry = registry;
        this.copier = copier;
        this.inventory = inventory;
    }

    /**
     * Settles every id of switch {@code epoch}'s list ({@code chunks}; a negative key is a list kept elsewhere, never
     * written here) as {@code looks} says, then takes the ids decided on off their chunk (ids appended meanwhile
     * stay); {@code what} names the list in log lines.
     */
    CompletableFuture<Worked> workOff(long epoch, String target, Map<Integer, List<Long>> chunks,
                                      Map<Long, CompletableFuture<Look>> looks, String what) {
        return workOff(epoch, target, chunks, looks, what, id -> CompletableFuture.completedFuture(true));
    }

    /**
     * As {@link #workOff(long, String, Map, Map, String)}, asking {@code mayDelete} right before each delete: a copy
     * it says no to is not deleted and stays listed, for a later pass.
     */
    CompletableFuture<Worked> workOff(long epoch, String target, Map<Integer, List<Long>> chunks,
                                      Map<Long, CompletableFuture<Look>> looks, String what,
                                      java.util.function.Function<Long, CompletableFuture<Boolean>> mayDelete) {
        AtomicInteger deleted = new AtomicInteger();
        return CompletableFuture.allOf(looks.values().toArray(CompletableFuture[]::new))
                .thenCompose(v -> unreferencedAlone(looks)).thenCompose(unreferenced -> {
            List<CompletableFuture<Integer>> each = new ArrayList<>();
            for (Map.Entry<Integer, List<Long>> chunk : chunks.entrySet()) {
                List<CompletableFuture<Long>> kept = new ArrayList<>();
                for (long id : chunk.getValue()) {
                    kept.add(settle(epoch, id, target, looks.get(id).join(), unreferenced, what, mayDelete)
                            .thenApply(s -> {
                                if (s == Settled.DELETED) {
                                    deleted.incrementAndGet();
                                }
                                return s == Settled.LATER ? (Long) id : null;
                            }));
                }
                each.add(CompletableFuture.allOf(kept.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                    List<Long> rest = kept.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList();
                    List<Long> done = chunk.getValue().stream().filter(id -> !rest.contains(id)).toList();
                    return chunk.getKey() < 0 || done.isEmpty() ? CompletableFuture.completedFuture(rest.size())
                            : registry.removeCopies(epoch, chunk.getKey(), done).thenApply(x -> rest.size());
                }));
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> new Worked(
                    deleted.get(), each.stream().mapToInt(CompletableFuture::join).sum()));
        });
    }

    /**
     * Looks at the copy of {@code id} on {@code target} and at the ledger on its {@code home} (null: none);
     * {@code what} names the list in log lines.
     */
    CompletableFuture<Look> look(long id, String target, String home, String what) {
        CompletableFuture<Optional<LedgerCopier.LedgerFacts>> there = copier.facts(id, target);
        CompletableFuture<Optional<LedgerCopier.LedgerFacts>> atHome = home == null
                ? CompletableFuture.completedFuture(Optional.empty()) : copier.facts(id, home);
        return there.thenCombine(atHome, (copy, original) -> {
            if (copy.isEmpty() || copy.get().copyOf() == null) {
                return Look.NOT_ONE; // already gone, or not a copy the migration made: never deleted here
            }
            return original.isPresent() && original.get().sameClosedContent(copy.get()) ? Look.DUPLICATE : Look.ALONE;
        }).exceptionally(e -> {
            log.warn("ledger={} bookie-cluster={}: cannot look at the {} yet: {}", id, target, what,
                    Failures.unwrap(e).toString());
            return Look.LATER;
        });
    }

    /**
     * The ids among {@code looks} that are ALONE and that a complete inventory says nothing references; empty when
     * none is ALONE (the inventory is not read then) or when the inventory cannot be read completely now.
     */
    private CompletableFuture<Set<Long>> unreferencedAlone(Map<Long, CompletableFuture<Look>> looks) {
        Set<Long> alone = new TreeSet<>();
        looks.forEach((id, l) -> {
            if (l.join() == Look.ALONE) {
                alone.add(id);
            }
        });
        if (alone.isEmpty()) {
            return CompletableFuture.completedFuture(alone);
        }
        return inventory.references().thenApply(refs -> {
            refs.forEach(r -> alone.remove(r.ledgerId()));
            return alone;
        }).exceptionally(e -> {
            // not asked again every pass (an inventory that stays incomplete, a topic that cannot load, would be read
            // in full every two seconds): cleanup deletes such a copy once nothing references it
            log.warn("the listed copies whose home does not hold the same ledger stay for cleanup: the inventory is "
                    + "incomplete: {}", Failures.unwrap(e).toString());
            return Set.of(); // none known to be unreferenced
        });
    }

    /**
     * Deletes, keeps or leaves listed the copy of {@code id} on {@code target} as {@code look} and {@code unreferenced}
     * (from {@link #unreferencedAlone}) say; {@code what} names the list in log lines ("rollback", "superseded").
     */
    private CompletableFuture<Settled> settle(long epoch, long id, String target, Look look, Set<Long> unreferenced,
                                      String what,
                                      java.util.function.Function<Long, CompletableFuture<Boolean>> mayDelete) {
        switch (look) {
            case NOT_ONE:
                return CompletableFuture.completedFuture(Settled.DROPPED);
            case LATER:
                return CompletableFuture.completedFuture(Settled.LATER);
            case ALONE:
                if (!unreferenced.contains(id)) {
                    // referenced (or not known not to be) while its home has no such ledger: it may be the last one
                    log.warn("switch epoch={} {}: ledger={} is kept on bookie-cluster={}: its home does not hold the "
                            + "same ledger and it may be referenced (cleanup decides about it)", epoch, what, id,
                            target);
                    return CompletableFuture.completedFuture(Settled.DROPPED);
                }
                break;
            default:
                break;
        }
        return mayDelete.apply(id).thenCompose(may -> !may ? CompletableFuture.completedFuture(Settled.LATER)
                : copier.delete(id, target).thenApply(v -> Settled.DELETED)).exceptionally(e -> {
            log.warn("switch epoch={} {}: ledger={} bookie-cluster={}: cannot delete its copy yet: {}", epoch, what,
                    id, target, Failures.unwrap(e).toString());
            return Settled.LATER;
        });
    }
}
