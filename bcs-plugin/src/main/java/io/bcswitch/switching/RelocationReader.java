package io.bcswitch.switching;

import io.bcswitch.registry.RegistryStore;
import io.bcswitch.routing.Ownership;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/** Reads the relocation table as a broker routes with it: the whole table, or only what the new epoch changed. */
final class RelocationReader {
    private final RegistryStore registry;
    private final LongConsumer epochSeen;

    /** @param epochSeen told every relocation epoch read (the agent's lag metric) */
    RelocationReader(RegistryStore registry, LongConsumer epochSeen) {
        this.registry = registry;
        this.epochSeen = epochSeen;
    }

    record Relocations(Map<Long, String> homes, long epoch, int read) {
    }

    /**
     * Reads the epoch first: a table read after it is at least as new as that epoch. One epoch behind,
     * with the epoch listing what it changed (a PROMOTE batch, a rollback), only those ledgers' entries
     * are read; otherwise (and with no {@code current}, at start-up and after a session change) the whole table.
     */
    CompletableFuture<Relocations> read(Ownership current) {
        return registry.readRelocationEpochRecord().thenCompose(rec -> {
            epochSeen.accept(rec.epoch());
            if (current != null && rec.changed() != null && rec.epoch() == current.relocationEpoch() + 1) {
                return registry.readRelocations(rec.changed()).thenApply(changes -> {
                    Map<Long, String> homes = new HashMap<>(current.relocations());
                    changes.forEach((id, r) -> {
                        if (r.isPresent()) {
                            homes.put(id, r.get().home());
                        } else {
                            homes.remove(id);
                        }
                    });
                    return new Relocations(homes, rec.epoch(), changes.size());
                });
            }
            return registry.listRelocations().thenApply(all -> {
                Map<Long, String> homes = new HashMap<>();
                all.forEach((id, r) -> homes.put(id, r.home()));
                return new Relocations(homes, rec.epoch(), all.size());
            });
        });
    }
}
