package io.bcswitch.registry;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A consistent-enough snapshot of the registry for planning: the range table (with the latest
 * directive's range), the relocation table and the epoch a broker must have applied to route by it
 * ({@link RelocationEpoch#covering}), the active cluster. Read fresh from the
 * metadata store, not from this broker's routing view, so planning never acts on a stale view.
 */
public record RegistryView(RangeTable ranges, Map<Long, Relocation> relocations, long relocationEpoch,
                           Versioned<SwitchDirective> directive, String activeCluster) {

    public static CompletableFuture<RegistryView> read(RegistryStore registry) {
        return read(registry, registry::listRelocations);
    }

    /**
     * A view whose relocations are those of {@code ids} only, each read on its own (so as new as a read can be): its
     * {@link #home} is right for those ids and no other. Cheaper than {@link #read} when a decision is about a known
     * set of ledgers, since the table's listing is not read.
     */
    public static CompletableFuture<RegistryView> readOf(RegistryStore registry, java.util.Collection<Long> ids) {
        return read(registry, () -> registry.readRelocations(ids).thenApply(fresh -> {
            Map<Long, Relocation> rel = new java.util.TreeMap<>();
            fresh.forEach((id, r) -> r.ifPresent(x -> rel.put(id, x)));
            return rel;
        }));
    }

    private static CompletableFuture<RegistryView> read(RegistryStore registry,
            java.util.function.Supplier<CompletableFuture<Map<Long, Relocation>>> relocations) {
        var directive = registry.readDirective();
        var ranges = registry.readRanges();
        var bootstrap = registry.readBootstrap();
        // the epoch is read before the table: the table is then at least as new as the epoch; while a change of the
        // table is unannounced, the view's epoch is the one that will announce it (see RelocationEpoch#covering)
        return registry.readRelocationEpochRecord().thenApply(RelocationEpoch::covering).thenCompose(epoch ->
                relocations.get().thenCompose(rel ->
                CompletableFuture.allOf(directive, ranges, bootstrap).thenApply(v -> {
                    Versioned<SwitchDirective> d = directive.join();
                    RangeTable table = ranges.join().orElseGet(() -> RangeTable.bootstrap(
                            bootstrap.join().map(b -> b.cluster()).orElse("unknown"), 0));
                    if (d.present()) {
                        table = table.with(d.value().range());
                    }
                    String active = d.present() ? d.value().target()
                            : bootstrap.join().map(b -> b.cluster()).orElse(null);
                    return new RegistryView(table, rel, epoch, d, active);
                })));
    }

    /**
     * This view with the relocations of some ledgers as just read one by one: decisions that delete something use
     * them rather than the table's listing, which may lag behind a change by the time its notification takes.
     */
    public RegistryView withFresh(Map<Long, Optional<Relocation>> fresh) {
        Map<Long, Relocation> rel = new java.util.TreeMap<>(relocations);
        fresh.forEach((id, r) -> {
            if (r.isPresent()) {
                rel.put(id, r.get());
            } else {
                rel.remove(id);
            }
        });
        return new RegistryView(ranges, rel, relocationEpoch, directive, activeCluster);
    }

    /** The cluster a ledger is read from: its relocation home, else the cluster that issued its id. */
    public Optional<String> home(long ledgerId) {
        Relocation r = relocations.get(ledgerId);
        return r != null ? Optional.of(r.home()) : ranges.owner(ledgerId);
    }

    public long switchEpoch() {
        return directive.present() ? directive.value().epoch() : 0L;
    }
}
