package io.bcswitch.migration;

import io.bcswitch.concurrent.Windows;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the copies on the target of ledgers Pulsar deleted while they were being moved, so that none is left
 * there unreferenced for good (the target is the active cluster, which cleanup never sweeps). Copies that were
 * promoted although Pulsar deleted their ledger meanwhile are looked at too ({@link #discardPromoted}). Pulsar deletes a
 * ledger where it is home; until its copy is promoted that is the original, wherever the delete happens: before
 * the copy (an earlier, interrupted run may have made one already), between copy and promotion (it is then not
 * promoted), or while a broker still routes by the previous relocation table.
 *
 * <p>A copy is deleted only when all of this holds: it carries the migration's mark, the target is neither its
 * home nor the cluster that issued its id, and both its home and the cluster it was copied from answer that they
 * have no such ledger (a cluster that does not answer may be what the copy is for). Nothing routes to such a copy.
 */
final class DeletedLedgerCopies {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;

    DeletedLedgerCopies(MigrationOrchestrator o, long epoch, String target) {
        this.o = o;
        this.epoch = epoch;
        this.target = target;
    }

    /** @param token the run's: a run that lost the migration looks for nothing */
    CompletableFuture<Void> discard(long token) {
        return discard(token, Set.of());
    }

    /**
     * @param token the run's: a run that lost the migration looks for nothing
     * @param gone  the ledgers the run found gone from the cluster it copies them from (at BUILD or at PROMOTE): one
     *              whose copy is there and is not deleted here is said, with why (a finished migration's copies are
     *              looked at once more later)
     */
    CompletableFuture<Void> discard(long token, Set<Long> gone) {
        // every ledger on the target that it did not issue itself, and that is not home there, may be such a copy:
        // the run's own lists would miss one an interrupted run made but had not recorded yet
        return o.stillMine(epoch, token).thenCompose(mine -> !mine ? notMine(token)
                : RegistryView.read(o.registry()).thenCompose(view -> o.copier().list(target).thenCompose(ids -> {
                    List<Long> candidates = ids.stream().filter(id -> !view.home(id).map(target::equals).orElse(true)
                            && !view.ranges().owner(id).map(target::equals).orElse(false)).sorted().toList();
                    // (a ledger gone from its source before it was copied has no copy here: nothing to say)
                    Set<Long> looked = new HashSet<>(candidates);
                    Set<Long> there = new HashSet<>(ids);
                    for (long id : new java.util.TreeSet<>(gone)) {
                        if (!looked.contains(id) && there.contains(id)) {
                            log.info("switch epoch={} ledger={} bookie-cluster={}: its copy is not looked at here: "
                                    + "home {}, issued by {}", epoch, id, target, view.home(id).orElse("(none)"),
                                    view.ranges().owner(id).orElse("(none)"));
                        }
                    }
                    List<Long> promoted = ids.stream().filter(id -> view.home(id).map(target::equals).orElse(false)
                            && !view.ranges().owner(id).map(target::equals).orElse(false)
                            && view.relocations().get(id).switchEpoch() == epoch).sorted().toList();
                    return discardUnpromoted(view, candidates, gone).thenCompose(x -> discardPromoted(promoted));
                })).exceptionally(e -> {
                    log.warn("switch epoch={} bookie-cluster={}: copies of ledgers deleted meanwhile not looked for "
                            + "(they stay until the next run): {}", epoch, target, e.toString());
                    return null;
                }));
    }

    private CompletableFuture<Void> notMine(long token) {
        // said, because the copies of deleted ledgers are looked for only here, at the end of PROMOTE
        log.info("switch epoch={} bookie-cluster={}: run token {} no longer holds the migration; the copies of ledgers "
                + "deleted meanwhile are not looked for by it", epoch, target, token);
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Copies this switch made home on the target of ledgers Pulsar deleted through their old home while they were
     * promoted: right before the relocation was written, or by a broker still routing by the table before it. Looked
     * at once every broker has applied the last batch, so no delete goes to an old home any more (a delete already on
     * its way then is followed up by its broker, {@link OldHomeDeletes}). An old home that definitely has no such
     * ledger any more means Pulsar deleted it: nothing else deletes a ledger where it is home, and cleanup waits for
     * this migration to finish. Since such a copy is a home, it is deleted only when a complete picture of the
     * references names nothing that uses it.
     */
    private CompletableFuture<Void> discardPromoted(List<Long> promoted) {
        if (promoted.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return o.registry().readRelocations(promoted).thenCompose(fresh -> {
            List<CompletableFuture<Long>> orphans = new ArrayList<>();
            for (long id : promoted) {
                Optional<Relocation> r = fresh.getOrDefault(id, Optional.empty());
                if (r.isEmpty() || r.get().switchEpoch() != epoch || !r.get().home().equals(target)) {
                    continue;
                }
                String oldHome = r.get().beforeThisSwitch().map(Relocation::home).orElse(r.get().from());
                orphans.add(o.copier().facts(id, target).thenCompose(copy -> copy.map(LedgerCopier.LedgerFacts::copyOf)
                        .isEmpty() ? CompletableFuture.<Long>completedFuture(null)
                        : o.copier().facts(id, oldHome).thenApply(original -> original.isEmpty() ? id : null))
                        .exceptionally(e -> null)); // a cluster that does not answer proves nothing
            }
            return CompletableFuture.allOf(orphans.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                List<Long> gone = orphans.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList();
                return gone.isEmpty() ? CompletableFuture.<Void>completedFuture(null) : deleteUnreferenced(gone);
            });
        });
    }

    private CompletableFuture<Void> deleteUnreferenced(List<Long> gone) {
        return o.inventory().picture().thenCompose(picture -> {
            if (!picture.complete()) {
                log.warn("switch epoch={} bookie-cluster={}: ledger(s) {} were deleted on their old home while their "
                        + "copies here were promoted; the copies stay until the next run: not every reference could "
                        + "be learnt", epoch, target, gone);
                return CompletableFuture.<Void>completedFuture(null);
            }
            Set<Long> referenced = new HashSet<>();
            picture.references().forEach(ref -> referenced.add(ref.ledgerId()));
            List<CompletableFuture<Void>> deletes = new ArrayList<>();
            for (long id : gone) {
                if (referenced.contains(id)) {
                    log.warn("switch epoch={} ledger={} bookie-cluster={}: its old home no longer has it, but it is "
                            + "referenced: its copy here is its only copy and stays", epoch, id, target);
                    continue;
                }
                log.info("switch epoch={} ledger={} bookie-cluster={}: deleting its copy: Pulsar deleted the ledger "
                        + "through its old home while the copy was promoted", epoch, id, target);
                deletes.add(o.copier().delete(id, target));
            }
            return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
        });
    }

    /** Copies on the target, not home there, whose ledger is gone from its home and from where it was copied. */
    private CompletableFuture<Void> discardUnpromoted(RegistryView view, List<Long> candidates, Set<Long> gone) {
        if (candidates.isEmpty()) {
            return CompletableFuture.<Void>completedFuture(null);
        }
        return o.registry().readRelocations(candidates).thenApply(view::withFresh).thenCompose(fresh ->
                Windows.map(candidates, Math.max(1, o.concurrency()),
                        id -> discardIfDeleted(id, fresh, gone.contains(id)).exceptionally(e -> {
                            log.warn("switch epoch={} ledger={} bookie-cluster={}: could not tell whether "
                                    + "its copy is left over from a deleted ledger; it stays: {}", epoch,
                                    id, target, e.toString());
                            return false;
                        })).thenAccept(deleted -> {
                            long n = deleted.stream().filter(Boolean::booleanValue).count();
                            if (n > 0) {
                                log.info("switch epoch={} bookie-cluster={}: deleted {} copy/copies of "
                                        + "ledgers Pulsar deleted before they were moved", epoch, target,
                                        n);
                            }
                        }));
    }

    /** @param said whether to say why the copy stays, if it does (PROMOTE found its ledger deleted) */
    private CompletableFuture<Boolean> discardIfDeleted(long id, RegistryView view, boolean said) {
        Optional<String> home = view.home(id);
        if (home.isEmpty() || home.get().equals(target)
                || view.ranges().owner(id).map(target::equals).orElse(false)) {
            return stays(said, id, "home " + home.orElse("(none)") + " (read again)");
        }
        return o.copier().facts(id, target).thenCompose(copy -> {
            String copyOf = copy.map(LedgerCopier.LedgerFacts::copyOf).orElse(null);
            if (copyOf == null) {
                // no copy (or not ours): nothing to do
                return stays(said, id, copy.isEmpty() ? "no ledger there" : "not marked as a copy");
            }
            return o.copier().facts(id, home.get()).thenCombine(o.copier().facts(id, copyOf),
                    (atHome, atSource) -> atHome.isPresent() ? "still on its home " + home.get()
                            : atSource.isPresent() ? "still on " + copyOf + ", which it was copied from" : "")
                    .thenCompose(still -> {
                        if (!still.isEmpty()) {
                            return stays(said, id, still);
                        }
                        log.info("switch epoch={} ledger={} bookie-cluster={}: deleting its copy: Pulsar deleted "
                                + "the ledger (no longer on {}) before the copy became its home", epoch, id, target,
                                home.get().equals(copyOf) ? copyOf : home.get() + " nor on " + copyOf);
                        return o.copier().delete(id, target).thenApply(v -> true);
                    });
        });
    }

    private CompletableFuture<Boolean> stays(boolean said, long id, String why) {
        if (said) {
            log.info("switch epoch={} ledger={} bookie-cluster={}: its copy stays: {}", epoch, id, target, why);
        }
        return CompletableFuture.completedFuture(false);
    }
}
