package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.concurrent.Windows;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.migration.LedgerCopier.LedgerFacts;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.LongFunction;
import java.util.stream.Collectors;

/**
 * Invariant 2: no ledger id exists on two clusters unless the relocation table explains it, every copy has its
 * home's content, and no copy the migration made is left where it is not home once its ledger is gone elsewhere.
 */
final class CopiesCheck {
    private final LedgerCopier copier;
    private final BiFunction<Long, String, CompletableFuture<Optional<LedgerFacts>>> afresh;
    private final LongFunction<CompletableFuture<Void>> pace;

    /**
     * @param afresh reads a ledger's metadata again (whether it is gone since), where {@code copier} may answer
     *               what this verify read of it before
     * @param pace   paces the entry reads of a deep check (the migration's rate limit)
     */
    CopiesCheck(LedgerCopier copier, BiFunction<Long, String, CompletableFuture<Optional<LedgerFacts>>> afresh,
                LongFunction<CompletableFuture<Void>> pace) {
        this.copier = copier;
        this.afresh = afresh;
        this.pace = pace;
    }

    /** Ids on several clusters are explained, and copies have their home's content. */
    CompletableFuture<Void> check(AuditWorld w, boolean deep, Findings found) {
        Map<Long, List<String>> holders = new TreeMap<>();
        w.ledgers().forEach((cluster, ids) -> ids.forEach(id -> holders.computeIfAbsent(id, k -> new ArrayList<>())
                .add(cluster)));
        Map<Long, String> refBy = new HashMap<>();
        w.refs().forEach(r -> refBy.putIfAbsent(r.ledgerId(), r.referencedBy()));
        List<Map.Entry<Long, List<String>>> several = holders.entrySet().stream().filter(h -> h.getValue().size() > 1)
                .toList();
        // an id held by one cluster that did not issue it: a copy of a ledger gone everywhere else; not on a retired
        // (DEPRECATED) cluster, which the brokers no longer reach on their own to delete copies: what is left there
        // goes with the cluster, or with a cleanup of it
        Set<String> retired = w.clusters().stream().filter(c -> c.status() == ClusterStatus.DEPRECATED)
                .map(BookieClusterRecord::name).collect(Collectors.toSet());
        List<Map.Entry<Long, List<String>>> alone = holders.entrySet().stream().filter(h -> h.getValue().size() == 1
                && !retired.contains(h.getValue().get(0))
                && !w.view().ranges().owner(h.getKey()).map(h.getValue().get(0)::equals).orElse(false)).toList();
        return Windows.map(several, InvariantAuditor.PARALLEL_CHECKS, h -> checkCopiesOf(h.getKey(), h.getValue(), w,
                deep, refBy, found)).thenCompose(x -> Windows.map(alone, InvariantAuditor.PARALLEL_CHECKS, h ->
                checkLeftOver(h.getKey(), h.getValue().get(0), w, refBy, found))).thenApply(x -> null);
    }

    /**
     * 2b: a copy the migration made, of a ledger no other cluster holds any more and nothing references: Pulsar
     * deleted the ledger while it was moved, and the copy is read by nothing and deleted by nothing. Where it is not
     * home, the delete came before the promotion; where it is home, the delete went to the original while the copy
     * was being promoted (a referenced one is named missing at its home instead). A copy that is home is only judged
     * on a complete picture of the references: one the inventory could not ask may be using it.
     */
    private CompletableFuture<Void> checkLeftOver(long id, String cluster, AuditWorld w, Map<Long, String> refBy,
                                                  Findings found) {
        boolean home = w.view().home(id).map(cluster::equals).orElse(false);
        if (refBy.containsKey(id) || (home && !w.unknown().isEmpty())) {
            return CompletableFuture.completedFuture(null);
        }
        if (!home && w.listedForDeletion().getOrDefault(cluster, Set.of()).contains(id)) {
            // still on a rollback's or an ended migration's list and not home: a pass deletes it once every broker
            // routes without it, since nothing references it (ListedCopies)
            return CompletableFuture.completedFuture(null);
        }
        return copier.facts(id, cluster).handle((f, e) -> {
            if (e != null) {
                unread(id, cluster, e, found); // whether it is an orphan is not known
                return null;
            }
            if (f.map(x -> x.copyOf() != null).orElse(false)) {
                found.violation(new Violation("ORPHAN_COPY", id, cluster, null, "a copy the migration made from "
                        + f.get().copyOf() + " of a ledger no other cluster holds and nothing references; "
                        + (home ? "it is the ledger's home, and Pulsar deleted the ledger through its old home while "
                        + "it was promoted" : "its home is " + w.view().home(id).orElse("(none)"))
                        + ", so nothing reads it and nothing deletes it"));
            }
            return null;
        });
    }

    private CompletableFuture<Void> checkCopiesOf(long id, List<String> holderClusters, AuditWorld w, boolean deep,
                                                  Map<Long, String> refBy, Findings found) {
        Optional<String> home = w.view().home(id);
        Optional<String> issuer = w.view().ranges().owner(id);
        Map<String, CompletableFuture<Optional<LedgerFacts>>> facts = new TreeMap<>();
        Set<String> unread = ConcurrentHashMap.newKeySet();
        holderClusters.forEach(c -> facts.put(c, copier.facts(id, c).exceptionally(e -> {
            unread(id, c, e, found); // judged on nothing, it would look absent
            unread.add(c);
            return Optional.empty();
        })));
        return CompletableFuture.allOf(facts.values().toArray(CompletableFuture[]::new)).thenCompose(v -> {
            Optional<LedgerFacts> homeFacts = home.flatMap(c -> facts.containsKey(c) ? facts.get(c).join()
                    : Optional.empty());
            List<CompletableFuture<Void>> checks = new ArrayList<>();
            for (String c : holderClusters) {
                if (home.map(c::equals).orElse(false) || unread.contains(c)) {
                    continue;
                }
                Optional<LedgerFacts> f = facts.get(c).join();
                boolean explained = issuer.map(c::equals).orElse(false)
                        || f.map(x -> x.copyOf() != null || x.probe()).orElse(false);
                if (!explained) {
                    found.violation(new Violation("UNEXPLAINED_COPY", id, c, refBy.get(id), "ledger id also "
                            + "exists on " + holderClusters + "; its home is " + home.orElse("(none)")
                            + ", and the one on " + c + " is neither the original nor a copy the migration made"));
                    continue;
                }
                if (f.isEmpty() || homeFacts.isEmpty() || !f.get().closed() || !refBy.containsKey(id)) {
                    continue; // a copy being written, or a copy of a ledger nothing references: cleanup's
                }
                if (!homeFacts.get().sameClosedContent(f.get())) {
                    found.violation(new Violation("COPY_DIFFERS", id, c, refBy.get(id), "the copy on " + c
                            + " has last entry " + f.get().lastEntryId() + " and length " + f.get().length()
                            + ", its home on " + home.get() + " " + homeFacts.get().lastEntryId() + " and "
                            + homeFacts.get().length()));
                } else if (deep) {
                    checks.add(compareEntries(id, home.get(), c, refBy.get(id), found));
                }
            }
            return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new));
        });
    }

    /** Not read is not absent: what the ledger's metadata would have shown is unchecked. */
    private static void unread(long id, String cluster, Throwable e, Findings found) {
        found.unchecked("ledger " + id + " on '" + cluster + "': its metadata could not be read", e);
    }

    /** Deep: the copy's entries against its home's; one that cannot be compared is unchecked, never skipped. */
    private CompletableFuture<Void> compareEntries(long id, String home, String copyCluster, String referencedBy,
                                                   Findings found) {
        return copier.sameEntries(id, home, copyCluster, pace).handle((same, e) -> {
            if (e == null) {
                if (!same) {
                    found.violation(new Violation("COPY_DIFFERS", id, copyCluster, referencedBy, "the entries on "
                            + copyCluster + " differ from those of its home on " + home + " (CRC32C of the payloads)"));
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            // Pulsar may delete the ledger while its entries are read (a trimmed data ledger, a compacted ledger a
            // newer compaction replaced): then there is nothing left to check
            return bothStillThere(id, home, copyCluster).thenAccept(both -> {
                if (both) {
                    found.unchecked("the entries of ledger " + id + " on '" + copyCluster + "' could not be compared "
                            + "with those of its home on '" + home + "'", e);
                }
            });
        }).thenCompose(x -> x);
    }

    /** Whether both still hold the ledger; true when that cannot be read (not read is not gone). */
    private CompletableFuture<Boolean> bothStillThere(long id, String a, String b) {
        return afresh.apply(id, a).thenCombine(afresh.apply(id, b), (x, y) -> x.isPresent() && y.isPresent())
                .exceptionally(t -> true);
    }
}
