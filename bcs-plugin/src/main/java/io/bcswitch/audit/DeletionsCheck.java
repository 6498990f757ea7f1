package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.migration.CleanupService;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.migration.CleanupTarget;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * Invariant 5: nothing scheduled for deletion is a ledger's home: no copy a rollback will delete, and no cleanup
 * target (other than an unreferenced ledger, which cleanup deletes where it lies).
 */
final class DeletionsCheck {
    private final RegistryStore registry;
    private final CleanupService cleanup;
    private final LedgerCopier reads;

    /** @param reads how cleanup's plan reads the clusters here (verify's bounded reads) */
    DeletionsCheck(RegistryStore registry, CleanupService cleanup, LedgerCopier reads) {
        this.registry = registry;
        this.cleanup = cleanup;
        this.reads = reads;
    }

    CompletableFuture<Void> check(AuditWorld w, Findings found) {
        List<CompletableFuture<Void>> each = new ArrayList<>();
        for (MigrationState s : w.migrations()) {
            if (s.phase() != Phase.ROLLED_BACK || !s.deletionsPending()) {
                continue;
            }
            each.add(registry.readCopies(s.switchEpoch()).thenAccept(chunks -> {
                Set<Long> ids = new TreeSet<>(s.pendingDeletions());
                chunks.values().forEach(ids::addAll);
                for (long id : ids) {
                    if (w.view().home(id).map(s.target()::equals).orElse(false)) {
                        found.violation(new Violation("HOME_SCHEDULED_FOR_DELETION", id, s.target(), null,
                                "the rollback of switch epoch " + s.switchEpoch() + " lists it for deletion from "
                                        + s.target() + ", where it is home"));
                    }
                }
            }));
        }
        if (!w.unknown().isEmpty()) {
            // cleanup plans only on a complete picture: asking it would wait for the same topics again, for nothing
            found.unchecked("cleanup targets: not computed while the inventory is incomplete (cleanup refuses too)");
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
        }
        // on verify's own picture: what cleanup would plan at the moment verify read the world
        each.add(cleanup.targetsOnInactiveClusters(reads, w.view(), w.refs(), w.brokers()).handle((targets, e) -> {
            if (e != null) {
                found.unchecked("cleanup targets", e);
                return null;
            }
            for (CleanupTarget t : targets) {
                // an unreferenced ledger is deleted where it lies, its home: that is what cleanup is for (a leftover
                // whose metadata Pulsar deleted, the copy of a ledger deleted while it was migrated)
                if (!t.reason().equals("UNREFERENCED")
                        && w.view().home(t.ledgerId()).map(t.cluster()::equals).orElse(false)) {
                    found.violation(new Violation("HOME_IS_CLEANUP_TARGET", t.ledgerId(), t.cluster(), null,
                            "cleanup would delete it (" + t.reason() + ") where it is home"));
                }
            }
            return null;
        }));
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
    }
}
