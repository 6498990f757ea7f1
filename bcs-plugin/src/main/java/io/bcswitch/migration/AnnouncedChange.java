package io.bcswitch.migration;

import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RelocationEpoch;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one way the migration changes the relocation table (PROMOTE's batches, a rollback's flip, the flip of promotions
 * that raced a rollback), since what it deletes afterwards relies on every broker routing by the changed table:
 * <ol>
 *   <li>the relocation epoch is marked {@link RelocationEpoch#unannounced};</li>
 *   <li>the table is changed;</li>
 *   <li>the epoch is bumped, which announces the change and clears the mark. It lists the ids changed, or none (every
 *       broker re-reads the whole table) when step 1 found a mark: an earlier change was never announced.</li>
 * </ol>
 * A deletion waits until every live broker applied the epoch that covers the table ({@link RelocationEpoch#covering},
 * which is what {@code RegistryView} reads): while a change is marked, an epoch no broker has applied yet. So a bump
 * lost after the change (or a broker stopped between the steps) holds every such deletion back instead of letting it
 * count on an epoch that does not announce the change; the next change announces it, or {@link #settle}, which the
 * deleting pass of rolled-back copies calls. The broker holding the orchestrator lock changes the table, so a mark
 * is cleared only by a bump that announces the change it stands for; the exception is a run that lost the lock while
 * paused in the middle of a change (its relocation writes carry no run token), whose table change can land after
 * the new holder's bump.
 */
final class AnnouncedChange {
    private AnnouncedChange() {
    }

    /** What a change completed with, and the relocation epoch that announced it. */
    record Announced<T>(T result, long epoch) {
    }

    /**
     * Marks, makes {@code change} (which changes the relocation table), and announces it.
     *
     * @param changed the ledger ids whose relocation the change created or removed, from its result (null: not
     *                known, every broker re-reads the whole table)
     */
    static <T> CompletableFuture<Announced<T>> make(RegistryStore registry, long nowMillis,
                                                    Supplier<CompletableFuture<T>> change,
                                                    Function<T, Collection<Long>> changed) {
        return registry.markRelocationChange(nowMillis).thenCompose(leftover -> change.get().thenCompose(result ->
                registry.bumpRelocationEpoch(nowMillis, leftover ? null : changed.apply(result))
                        .thenApply(epoch -> new Announced<>(result, epoch))));
    }

    /**
     * Announces a change of the table whose bump was lost (every broker re-reads the whole table); completes with the
     * relocation epoch that covers the table now, which every broker has to apply before anything relying on the
     * table is deleted.
     */
    static CompletableFuture<Long> settle(RegistryStore registry, long nowMillis) {
        return registry.readRelocationEpochRecord().thenCompose(rec -> rec.unannounced()
                ? registry.bumpRelocationEpoch(nowMillis, null) : CompletableFuture.completedFuture(rec.epoch()));
    }
}
