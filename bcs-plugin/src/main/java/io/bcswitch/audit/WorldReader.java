package io.bcswitch.audit;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads the {@link AuditWorld} an audit checks against: the routing (each relocation read afresh), the ledgers
 * Pulsar references, every bookie cluster's ledger list, the brokers and the migrations. What cannot be read is
 * noted as unchecked rather than failing the whole audit.
 */
final class WorldReader {
    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;

    WorldReader(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier) {
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
    }

    CompletableFuture<AuditWorld> read(Findings found) {
        return RegistryView.read(registry).thenCompose(listed -> registry.readRelocations(
                listed.relocations().keySet()).thenApply(listed::withFresh)).thenCompose(view ->
                inventory.picture().thenCompose(picture -> registry.listClusters().thenCompose(clusters -> {
                    // a compacted topic its owner cannot load is checked as its stored compaction cursor names it
                    picture.unknown().forEach(u -> found.unchecked("the compacted ledger " + u.referencedBy()
                            + " uses now (checked as stored: ledger " + u.storedLedger() + "): " + u.reason()));
                    List<LedgerReference> refs = picture.references();
                    Map<String, CompletableFuture<List<Long>>> lists = new TreeMap<>();
                    for (BookieClusterRecord c : clusters) {
                        lists.put(c.name(), copier.list(c.name()).exceptionally(e -> {
                            found.unchecked("ledgers of bookie cluster '" + c.name() + "' could not be listed", e);
                            return null;
                        }));
                    }
                    return CompletableFuture.allOf(lists.values().toArray(CompletableFuture[]::new))
                            .thenCompose(v -> BrokerView.read(registry)).thenCompose(brokers -> registry
                                    .listMigrationStates().thenCompose(ms -> listedForDeletion(ms, found)
                                            .thenApply(listed -> {
                                        Map<String, List<Long>> ledgers = new TreeMap<>();
                                        lists.forEach((n, f) -> {
                                            if (f.join() != null) {
                                                ledgers.put(n, f.join());
                                            }
                                        });
                                        Set<String> unknown = new HashSet<>();
                                        picture.unknown().forEach(u -> unknown.add(u.referencedBy()));
                                        return new AuditWorld(view, refs, unknown, clusters, ledgers, brokers, ms,
                                                listed);
                                    })));
                })));
    }

    /**
     * The copies still on a deletion list, per cluster: a rolled-back switch's with deletions pending, an ended
     * (superseded or finished) migration's, whose copies that are not home the passes look at once more. A list that
     * cannot be read counts as empty (its copies are then judged like any other) and says so.
     */
    private CompletableFuture<Map<String, Set<Long>>> listedForDeletion(List<MigrationState> all, Findings found) {
        Map<String, Set<Long>> listed = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (MigrationState s : all) {
            if (!s.deletionsPending() && s.phase() != Phase.SUPERSEDED && s.phase() != Phase.DONE
                    && s.phase() != Phase.DONE_WITH_FAILURES) {
                continue;
            }
            Set<Long> ids = listed.computeIfAbsent(s.target(), t -> ConcurrentHashMap.newKeySet());
            ids.addAll(s.pendingDeletions()); // an earlier version's list, kept in the state
            reads.add(registry.readCopies(s.switchEpoch()).handle((chunks, e) -> {
                if (e != null) {
                    found.unchecked("the copies switch epoch " + s.switchEpoch() + " lists for deletion", e);
                } else {
                    chunks.values().forEach(ids::addAll);
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> listed);
    }
}
