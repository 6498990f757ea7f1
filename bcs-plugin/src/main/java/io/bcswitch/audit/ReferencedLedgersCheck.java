package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.concurrent.Windows;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.registry.ClusterStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/** Invariant 1: every ledger Pulsar references exists on the cluster routing says holds it, closed where expected. */
final class ReferencedLedgersCheck {
    private final LedgerCopier copier;
    private final Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf;
    private final Supplier<CompletableFuture<List<LedgerReference>>> referencesNow;

    /**
     * @param compactedLedgerOf the compacted ledger a managed ledger's topic uses now, as its owning broker knows it
     *                          (the metadata store's copy lags behind; see {@link InvariantAuditor})
     * @param referencesNow     the references as they are now, read again to confirm that a ledger found missing is
     *                          still referenced
     */
    ReferencedLedgersCheck(LedgerCopier copier, Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf,
                           Supplier<CompletableFuture<List<LedgerReference>>> referencesNow) {
        this.copier = copier;
        this.compactedLedgerOf = compactedLedgerOf;
        this.referencesNow = referencesNow;
    }

    CompletableFuture<Void> check(AuditWorld w, Findings found) {
        Map<Long, LedgerReference> byId = new LinkedHashMap<>();
        // the newest data ledger of each managed ledger is the one it writes: the only one that may be open
        Map<String, Long> newestData = new HashMap<>();
        for (LedgerReference r : w.refs()) {
            if (r.kind() == LedgerKind.OTHER) {
                continue; // a cursor property that may or may not name a ledger
            }
            if (r.kind() == LedgerKind.DATA) {
                newestData.merge(r.referencedBy(), r.ledgerId(), Math::max);
            }
            // a data reference says the most (what it holds, who writes it)
            byId.merge(r.ledgerId(), r, (a, b) -> a.kind() == LedgerKind.DATA ? a : b);
        }
        Set<String> deprecated = new HashSet<>();
        w.clusters().stream().filter(c -> c.status() == ClusterStatus.DEPRECATED)
                .forEach(c -> deprecated.add(c.name()));
        List<LedgerReference> toRead = new ArrayList<>();
        for (LedgerReference r : byId.values()) {
            Optional<String> home = w.view().home(r.ledgerId());
            if (home.isEmpty()) {
                found.violation(new Violation("REFERENCED_MISSING", r.ledgerId(), null, r.referencedBy(),
                        "no range of the range table covers this id: it cannot be routed"));
                continue;
            }
            String cluster = home.get();
            if (deprecated.contains(cluster)) {
                // brokers have closed their clients to it: reads of this ledger fail
                found.violation(new Violation("HOME_DEPRECATED", r.ledgerId(), cluster, r.referencedBy(),
                        r.kind() + " ledger is read from " + cluster + ", which is DEPRECATED"));
            }
            if (!w.ledgers().containsKey(cluster)) {
                found.unchecked("ledger " + r.ledgerId() + " (" + r.referencedBy() + ") on '" + cluster + "': the "
                        + "cluster could not be listed");
                continue;
            }
            toRead.add(r);
        }
        List<Violation> missing = java.util.Collections.synchronizedList(new ArrayList<>());
        Map<String, Set<Long>> listed = new HashMap<>();
        w.ledgers().forEach((cluster, ids) -> listed.put(cluster, new HashSet<>(ids)));
        return Windows.map(toRead, InvariantAuditor.PARALLEL_CHECKS, r -> {
            String home = w.view().home(r.ledgerId()).orElseThrow();
            if (listed.get(home).contains(r.ledgerId()) && !mustBeClosed(r, newestData)) {
                return CompletableFuture.completedFuture(null); // there, and nothing more to know of it
            }
            // not listed is asked all the same: the listing may be one another verify began before these
            // references were read, which cannot know a ledger made since
            return check(r, home, newestData, w.unknown(), found, missing);
        }).thenCompose(x -> confirmMissing(missing, found));
    }

    /**
     * Names the ledgers found missing that are referenced still. The references were read before the ledgers were
     * looked at, and Pulsar deletes a ledger right after it drops it from its managed ledger (retention trims a
     * consumed data ledger, a cursor moves to a new ledger): such a ledger is gone because nothing references it any
     * more, not lost. Read again, a reference that stands is a ledger lost; a read that fails confirms nothing away.
     */
    private CompletableFuture<Void> confirmMissing(List<Violation> missing, Findings found) {
        if (missing.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return referencesNow.get().handle((now, e) -> {
            Set<String> standing = new HashSet<>();
            if (now != null) {
                now.forEach(r -> standing.add(r.ledgerId() + " " + r.referencedBy()));
            }
            for (Violation v : missing) {
                if (e != null || standing.contains(v.ledgerId() + " " + v.referencedBy())) {
                    found.violation(v);
                }
            }
            return null;
        });
    }

    private CompletableFuture<Void> check(LedgerReference r, String cluster, Map<String, Long> newestData,
                                          Set<String> unknown, Findings found, List<Violation> missing) {
        return copier.facts(r.ledgerId(), cluster).handle((f, e) -> {
            if (e != null) {
                found.unchecked("ledger " + r.ledgerId() + " on '" + cluster + "'", e);
                return CompletableFuture.<Void>completedFuture(null);
            }
            return judge(r, cluster, f, newestData, unknown, found, missing);
        }).thenCompose(x -> x);
    }

    /** Judges {@code r} by what its home holds of it ({@code f}: its metadata, empty when it is not there). */
    private CompletableFuture<Void> judge(LedgerReference r, String cluster, Optional<LedgerCopier.LedgerFacts> f,
                                          Map<String, Long> newestData, Set<String> unknown, Findings found,
                                          List<Violation> missing) {
        if (f.isEmpty() && r.kind() == LedgerKind.COMPACTION && unknown.contains(managedLedger(r))) {
            // its owner could not say which compacted ledger it uses: asking again would only wait again
            found.unchecked("compacted ledger " + r.ledgerId() + " of " + managedLedger(r) + " is not on "
                    + cluster + ", and its topic's owner cannot say whether it is still the one in use");
            return CompletableFuture.<Void>completedFuture(null);
        }
        if (f.isEmpty() && r.kind() == LedgerKind.COMPACTION) {
            return replacedBy(r).thenAccept(newer -> {
                if (newer.isEmpty()) {
                    found.violation(new Violation("REFERENCED_MISSING", r.ledgerId(), cluster, r.referencedBy(),
                            "the compacted ledger is not on " + cluster + ", where routing sends its reads"));
                } else {
                    found.replacedCompactedLedger(r.ledgerId(), newer.get());
                }
            });
        }
        if (f.isEmpty()) {
            missing.add(new Violation("REFERENCED_MISSING", r.ledgerId(), cluster, r.referencedBy(),
                    r.kind() + " ledger is not on " + cluster + ", where routing sends its reads"));
        } else if (!f.get().closed() && mustBeClosed(r, newestData)) {
            found.violation(new Violation("NOT_CLOSED", r.ledgerId(), cluster, r.referencedBy(),
                    r.kind() + " ledger is open on " + cluster + " although "
                            + (r.kind() == LedgerKind.DATA ? "its managed ledger closed it" : "it is written "
                            + "once and closed")));
        }
        return CompletableFuture.<Void>completedFuture(null);
    }

    /**
     * The compacted ledger that replaced {@code r} (a compaction cursor's ledger property, as the metadata store has
     * it), or empty while {@code r} may still be the one its topic uses (also when its owner cannot say): the stored
     * copy lags behind the cursor's own ledger, so a ledger a newer compaction replaced (and Pulsar deleted) stays
     * named there for a while.
     */
    private CompletableFuture<Optional<Long>> replacedBy(LedgerReference r) {
        return compactedLedgerOf.apply(managedLedger(r)).handle((current, e) -> e != null || current.isEmpty()
                || current.get() == r.ledgerId() ? Optional.<Long>empty() : current);
    }

    /** The managed ledger of a compaction reference ({@code "<managed ledger>/<cursor>#<property>"}). */
    private static String managedLedger(LedgerReference r) {
        return r.referencedBy().substring(0, r.referencedBy().lastIndexOf('/'));
    }

    private static boolean mustBeClosed(LedgerReference r, Map<String, Long> newestData) {
        return switch (r.kind()) {
            case DATA -> r.ledgerId() != newestData.get(r.referencedBy());
            case SCHEMA, COMPACTION -> true;
            default -> false;
        };
    }
}
