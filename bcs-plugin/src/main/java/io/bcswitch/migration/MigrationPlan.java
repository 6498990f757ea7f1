package io.bcswitch.migration;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What a run moves, and the parts of the inventory it could not learn. */
record MigrationPlan(List<Item> items, List<LedgerInventory.Unknown> unknown) {

    /**
     * One ledger to move.
     *
     * @param from       its home when planned
     * @param alternates other clusters that held the same closed ledger before it was relocated to its home (its
     *                   previous home, its original), read from when the home cannot be (its bookies died)
     */
    record Item(long ledgerId, LedgerKind kind, String from, String referencedBy, List<String> alternates) {
    }

    /**
     * Closed non-data ledgers whose home is not the target, one item per ledger id. A part of the inventory that
     * cannot be learnt now (a compacted topic its owner cannot load) does not hold up the rest: the run moves what
     * is known and ends with an issue for that part.
     */
    static MigrationPlan of(LedgerInventory.Picture picture, RegistryView view, String target) {
        Map<Long, Item> items = new LinkedHashMap<>();
        for (LedgerReference r : picture.references()) {
            if (r.kind() == LedgerKind.DATA || r.kind() == LedgerKind.OTHER) {
                continue;
            }
            Optional<String> home = view.home(r.ledgerId());
            if (home.isEmpty() || home.get().equals(target)) {
                continue;
            }
            List<String> alternates = new ArrayList<>();
            Relocation rel = view.relocations().get(r.ledgerId());
            if (rel != null) {
                for (String c : Arrays.asList(rel.previousHome(), rel.from())) {
                    if (c != null && !c.equals(home.get()) && !c.equals(target) && !alternates.contains(c)) {
                        alternates.add(c);
                    }
                }
            }
            items.putIfAbsent(r.ledgerId(), new Item(r.ledgerId(), r.kind(), home.get(), r.referencedBy(),
                    List.copyOf(alternates)));
        }
        return new MigrationPlan(new ArrayList<>(items.values()), picture.unknown());
    }
}
