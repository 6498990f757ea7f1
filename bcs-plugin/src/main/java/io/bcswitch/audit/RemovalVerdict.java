package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** Whether the plugin can be taken out of the brokers now, judged from an audit's world and findings. */
final class RemovalVerdict {
    /** How many ledgers a "not on the active cluster" reason names before it only counts. */
    static final int REMOVAL_EXAMPLES = 5;

    private RemovalVerdict() {
    }

    /**
     * Whether stock Pulsar storage, pointed at the active cluster, would find every ledger the brokers reference: each
     * one's home is the active cluster (a relocated ledger's copy there has its own id), no migration is between its
     * start and its end, and nothing was found wrong or left unchecked.
     *
     * @param replaced compacted ledgers a stored compaction property still names though a newer compaction replaced
     *                 them and they are gone, each with the one its topic uses instead: such a name pins nothing once
     *                 that newer ledger is itself a reference the active cluster holds (one a compaction made after the
     *                 inventory was read is in no reference, so the old name keeps the verdict from calling it safe)
     */
    static VerifyReport.Removal of(AuditWorld w, List<Violation> violations, List<String> unchecked,
                                   Map<Long, Long> replaced) {
        Optional<BookieClusterRecord> active = w.clusters().stream().filter(c -> c.status() == ClusterStatus.ACTIVE)
                .findFirst();
        String name = active.map(BookieClusterRecord::name).orElse(null);
        List<String> because = new ArrayList<>();
        if (active.isEmpty()) {
            because.add("no bookie cluster is ACTIVE in the registry");
        }
        Map<Long, LedgerReference> elsewhere = new TreeMap<>();
        Set<Long> referenced = new TreeSet<>();
        Set<Long> ids = new TreeSet<>();
        w.refs().forEach(r -> ids.add(r.ledgerId()));
        for (LedgerReference r : w.refs()) {
            if (r.kind() == LedgerKind.OTHER) {
                continue;
            }
            Long newer = r.kind() == LedgerKind.COMPACTION ? replaced.get(r.ledgerId()) : null;
            if (newer != null && ids.contains(newer) && w.view().home(newer).map(h -> h.equals(name)).orElse(false)) {
                continue;
            }
            referenced.add(r.ledgerId());
            if (!w.view().home(r.ledgerId()).map(h -> h.equals(name)).orElse(false)) {
                elsewhere.putIfAbsent(r.ledgerId(), r);
            }
        }
        if (!elsewhere.isEmpty() && active.isPresent()) {
            List<String> examples = elsewhere.values().stream().limit(REMOVAL_EXAMPLES).map(r -> "ledger "
                    + r.ledgerId() + " on " + w.view().home(r.ledgerId()).orElse("(no cluster)") + " ("
                    + r.kind().name().toLowerCase(Locale.ROOT) + ", " + r.referencedBy() + ")").toList();
            because.add(elsewhere.size() + " referenced ledger(s) are not on " + name + ": " + String.join("; ",
                    examples) + (elsewhere.size() > examples.size() ? "; ..." : "") + " (see the drain report of "
                    + "each cluster: retention removes data ledgers, the migration moves the others)");
        }
        w.migrations().stream().filter(m -> !m.phase().terminal()).forEach(m -> because.add("the migration of switch "
                + "epoch " + m.switchEpoch() + " is in phase " + m.phase()));
        if (!violations.isEmpty()) {
            because.add(violations.size() + " violation(s) of the plugin's invariants (listed above)");
        }
        if (!unchecked.isEmpty()) {
            because.add(unchecked.size() + " item(s) could not be checked (listed above)");
        }
        boolean safe = because.isEmpty();
        if (safe) {
            because.add("all " + referenced.size() + " referenced ledgers are on " + name + "; set "
                    + "bookkeeperMetadataServiceUri=" + active.get().metadataServiceUri() + " and the default "
                    + "managedLedgerStorageClassName and schemaRegistryStorageClassName on every broker");
        }
        return new VerifyReport.Removal(safe, name, active.map(BookieClusterRecord::metadataServiceUri).orElse(null),
                List.copyOf(because));
    }
}
