package io.bcswitch.migration;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.migration.MigrationPlan.Item;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.RegistryView;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every ledger a run planned must now be home on the target, have an issue, or be gone (deleted by Pulsar
 * meanwhile); anything else gets a NOT_PROMOTED issue, so the migration cannot end DONE with a ledger left
 * behind silently.
 */
final class HomeVerifier {
    // MigrationRun's logger: the run's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;

    HomeVerifier(MigrationOrchestrator o, long epoch, String target) {
        this.o = o;
        this.epoch = epoch;
        this.target = target;
    }

    CompletableFuture<Void> verify(MigrationTally tally) {
        // the planned ledgers' relocations read one by one, and the homes of the compacted ledgers of topics that
        // could not be asked at planning: the whole table's listing is not needed
        return o.inventory().picture().thenCompose(picture -> RegistryView.readOf(o.registry(),
                homesToKnow(tally, picture)).thenAccept(view -> {
            Set<Long> referenced = new HashSet<>();
            picture.references().forEach(r -> referenced.add(r.ledgerId()));
            if (picture.complete()) {
                // a topic that could not be asked when the run planned can be now: done if every compacted ledger
                // it names is home on the target
                for (LedgerInventory.Unknown u : List.copyOf(tally.unknown.keySet())) {
                    boolean home = compactedOf(u, picture).allMatch(r ->
                            view.home(r.ledgerId()).map(target::equals).orElse(false));
                    if (home) {
                        tally.unknown.remove(u);
                        log.info("switch epoch={} {}: its compacted ledgers are home on bookie-cluster={} after all",
                                epoch, u.referencedBy(), target);
                    }
                }
            }
            Set<Long> skipped = new HashSet<>();
            tally.skipped.forEach(s -> skipped.add(s.ledgerId()));
            for (Item item : tally.byId.values()) {
                long id = item.ledgerId();
                // on a partial picture, "no longer referenced" cannot be told from "not known now"
                boolean unreferenced = picture.complete() && !referenced.contains(id);
                if (tally.issues.containsKey(id) || tally.gone.contains(id) || unreferenced || skipped.contains(id)) {
                    continue;
                }
                String home = view.home(id).orElse("(none)");
                if (!home.equals(target)) {
                    tally.issues.put(id, new LedgerIssue(id, item.kind().name(), item.from(), "NOT_PROMOTED",
                            "home is still " + home + " (" + item.referencedBy() + "); run the migration again"));
                    log.warn("switch epoch={} ledger={} planned for bookie-cluster={} is still home on {}", epoch, id,
                            target, home);
                }
            }
        }));
    }

    /** The ledgers whose home {@link #verify} asks: every planned one, and the compacted ledgers of unknown topics. */
    private static Set<Long> homesToKnow(MigrationTally tally, LedgerInventory.Picture picture) {
        Set<Long> ids = new HashSet<>(tally.byId.keySet());
        for (LedgerInventory.Unknown u : tally.unknown.keySet()) {
            compactedOf(u, picture).forEach(r -> ids.add(r.ledgerId()));
        }
        return ids;
    }

    /** The compacted ledgers {@code picture} names for the topic that could not be asked at planning. */
    private static java.util.stream.Stream<io.bcswitch.inventory.LedgerReference> compactedOf(
            LedgerInventory.Unknown u, LedgerInventory.Picture picture) {
        return picture.references().stream().filter(r -> r.kind() == LedgerKind.COMPACTION
                && r.referencedBy().startsWith(u.referencedBy() + "/"));
    }
}
