package io.bcswitch.registry;

import io.bcswitch.concurrent.Failures;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A change of one registry node that a command decided from what it read of other nodes (the switch directive, the
 * migration state a rollback writes its intent into), which stands only if none of those changed before it was made.
 * The metadata store has no transaction over several nodes, so it is done in four steps:
 * <ol>
 *   <li>the caller reads each node it decides under, with its version, then the node it changes, and decides;</li>
 *   <li>the change is written expecting the version read (a concurrent change of that node: nothing is done);</li>
 *   <li>each node it was decided under is confirmed ({@link RegistryStore#confirm}: rewritten with its own bytes,
 *       expecting the version read);</li>
 *   <li>if one of them changed meanwhile, the change is undone (unless it was overwritten already).</li>
 * </ol>
 *
 * <p>Why this is enough: a switch commits by a compare-and-set of the directive on the version it read, and reads the
 * target's record after reading the directive ({@code SwitchService}); a rollback records its intent by a
 * compare-and-set of the migration state and reads the record of the cluster it goes back to after reading that
 * state ({@code Rollback}). Of step 3 and such a commit, one goes first. The commit first: step 3 fails and the
 * change is undone. Step 3 first: the commit either expected the version before step 3 and fails (asked again, it
 * reads the directive, then the record, after this change), or it read the directive after step 3 and therefore the
 * record after step 2 (a metadata store server applies writes in order, so a server that shows step 3 shows step 2).
 * Either way no switch and no rollback commits on a record it read before the change, and no change stands on a
 * directive or intent it did not see. Until step 4 undoes a change that lost, it is visible for a moment: what the
 * brokers do on such a change is done only after this completes with {@link Outcome#STANDS}, and a broker never
 * closes the clients of the cluster it writes to.
 *
 * <p>Before the first switch there is no directive to rewrite, and a read that it is still absent proves nothing
 * (the first switch can create it just after). So the bootstrap record stands in for it: a command decides under
 * {@link #underSwitch}, which adds the bootstrap record when there is no directive, and the first switch rewrites that
 * record at the version it read (before it read its target) just before it creates the directive. The argument
 * above then holds with the bootstrap record's compare-and-set in place of the directive's.
 */
public final class ConfirmedChange {
    private static final Logger log = LoggerFactory.getLogger(ConfirmedChange.class);

    /** What happened to the change. */
    public enum Outcome {
        /** made, and everything it was decided under was still the same afterwards */
        STANDS,
        /** not made: the node itself changed after it was read */
        NODE_CHANGED,
        /** made, then undone: a node it was decided under changed (a switch, a rollback's intent) */
        OVERTAKEN
    }

    /** A node a decision was made under: its path and the version that was read (ABSENT: it did not exist). */
    public record Under(String path, long version) {
        public static Under of(String path, Versioned<?> read) {
            return new Under(path, read.version());
        }
    }

    private final RegistryStore registry;

    /**
     * What a command that read switch directive {@code d} decides under: the directive, and before the first switch
     * also the bootstrap record. Read right after the directive, before anything else the decision reads.
     */
    public static CompletableFuture<List<Under>> underSwitch(RegistryStore registry, Versioned<SwitchDirective> d) {
        Under directive = Under.of(registry.paths().switchTarget(), d);
        if (d.present()) {
            return CompletableFuture.completedFuture(List.of(directive));
        }
        return registry.read(registry.paths().bootstrap(), BootstrapRecord.class).thenApply(b -> List.of(directive,
                Under.of(registry.paths().bootstrap(), b)));
    }

    /**
     * The switch's side of {@link #underSwitch}: before the first switch (no directive read), rewrites what stands in
     * for the directive at the version read, just before the directive is created; fails with a version conflict if
     * a command changed it meanwhile. Nothing to do once there is a directive: its compare-and-set is the claim.
     */
    public static CompletableFuture<Void> claimFirstSwitch(RegistryStore registry, List<Under> underSwitch) {
        CompletableFuture<Void> claimed = CompletableFuture.completedFuture(null);
        for (Under u : underSwitch) {
            if (!u.path().equals(registry.paths().switchTarget())) {
                claimed = claimed.thenCompose(v -> registry.confirm(u.path(), u.version()));
            }
        }
        return claimed;
    }

    public ConfirmedChange(RegistryStore registry) {
        this.registry = registry;
    }

    /**
     * Replaces node {@code path}, read as {@code read}, by {@code next} (empty: deletes it), standing only if every
     * node of {@code under} still has the version read.
     */
    public <T> CompletableFuture<Outcome> change(String path, Versioned<T> read, Optional<T> next, List<Under> under) {
        // step 2, completing with how to undo it: put back what was read, unless the node changed again after our
        // write (that writer decided anew)
        CompletableFuture<Supplier<CompletableFuture<?>>> made = next.isPresent()
                ? registry.write(path, next.get(), read.version()).thenApply(written -> () -> read.present()
                        ? registry.write(path, read.value(), written) : registry.delete(path, written))
                : registry.delete(path, read.version()).thenApply(v -> () -> registry.write(path, read.value(),
                        MetadataPort.ABSENT));
        return made.handle((undo, e) -> {
            if (e == null) {
                return confirmAll(under, 0).thenCompose(ok -> ok ? CompletableFuture.completedFuture(Outcome.STANDS)
                        : undone(path, undo.get()).thenApply(v -> Outcome.OVERTAKEN));
            }
            if (RegistryStore.isLostRace(e)) {
                return CompletableFuture.completedFuture(Outcome.NODE_CHANGED);
            }
            return CompletableFuture.<Outcome>failedFuture(Failures.unwrap(e));
        }).thenCompose(f -> f);
    }

    /**
     * Completes with whether every node from {@code i} on still had the version read. One that cannot be read counts
     * as changed: the change is undone, which is never wrong.
     */
    private CompletableFuture<Boolean> confirmAll(List<Under> under, int i) {
        if (i >= under.size()) {
            return CompletableFuture.completedFuture(true);
        }
        Under u = under.get(i);
        return registry.confirm(u.path(), u.version()).handle((v, e) -> e == null)
                .thenCompose(same -> same ? confirmAll(under, i + 1) : CompletableFuture.completedFuture(false));
    }

    private static CompletableFuture<Void> undone(String path, CompletableFuture<?> undo) {
        return undo.handle((v, e) -> {
            if (e == null) {
                log.info("path={}: a change decided under a switch directive or migration state that changed "
                        + "meanwhile is undone", path);
                return null;
            }
            if (RegistryStore.isLostRace(e)) {
                log.info("path={}: a change decided under a switch directive or migration state that changed "
                        + "meanwhile was changed again since: left as that writer made it", path);
                return null;
            }
            throw new CompletionException(Failures.unwrap(e));
        });
    }
}
