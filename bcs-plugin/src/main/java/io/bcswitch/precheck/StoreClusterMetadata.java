package io.bcswitch.precheck;

import io.bcswitch.registry.IdSpace;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.StoreFailure;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link ClusterMetadata} over the metadata store that holds the cluster's ledgers root.
 * Both BookKeeper's ZooKeeper driver and Pulsar's metadata-store driver keep the same znodes:
 * {@code LAYOUT}, {@code idgen}, {@code idgen-long/HOB-%010d}, {@code available[/readonly]}.
 */
public class StoreClusterMetadata implements ClusterMetadata {
    private static final String HOB_PREFIX = "HOB-";

    private final MetadataPort store;
    private final String root;
    private final long timeoutMillis;

    public StoreClusterMetadata(MetadataPort store, String ledgersRoot, long timeoutMillis) {
        this.store = store;
        this.root = ledgersRoot;
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public CompletableFuture<ClusterFacts> facts() {
        CompletableFuture<String> layout = store.get(root + "/LAYOUT").thenApply(r -> r
                .map(g -> new String(g.value(), StandardCharsets.UTF_8))
                .orElseThrow(() -> new IllegalStateException("no " + root + "/LAYOUT: the bookie cluster is not "
                        + "initialised (run 'bookkeeper shell initnewcluster' or start its bookies once)")));
        CompletableFuture<List<String>> hobs = store.children(root + "/idgen-long");
        CompletableFuture<List<String>> available = store.children(root + "/available");
        CompletableFuture<List<String>> readonly = store.children(root + "/available/readonly");
        CompletableFuture<String> instance = store.get(root + "/INSTANCEID").thenApply(r -> r
                .map(g -> new String(g.value(), StandardCharsets.UTF_8).trim()).filter(x -> !x.isEmpty())
                .orElse(null));
        return CompletableFuture.allOf(layout, hobs, available, readonly, instance).thenCompose(v -> {
            String factory = layoutFactory(layout.join());
            long maxHob = hobs.join().stream().filter(h -> h.startsWith(HOB_PREFIX))
                    .mapToLong(h -> parseLong(h.substring(HOB_PREFIX.length()))).max().orElse(0L);
            int writable = (int) available.join().stream().filter(n -> !n.equals("readonly")).count();
            return maxLedgerIds().thenApply(l -> new ClusterFacts(factory, supportsLongIds(factory), maxHob, l[0],
                    writable, readonly.join().size(), instance.join(), l[1]));
        }).orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public CompletableFuture<Void> advanceHighOrderBits(long highOrderBits) {
        if (highOrderBits < 1 || !IdSpace.fits(highOrderBits)) {
            // the precheck never proposes such a value: reaching here is a bug, refused before anything is written
            return CompletableFuture.failedFuture(new IllegalArgumentException("high-order bits " + highOrderBits
                    + " are outside the ranges a switch can start (1 to " + IdSpace.MAX_RANGE_BITS + ")"));
        }
        String idgen = root + "/idgen-long";
        String hob = idgen + "/" + HOB_PREFIX + String.format("%010d", highOrderBits);
        return createIfAbsent(idgen).thenCompose(v -> createIfAbsent(hob))
                .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    private CompletableFuture<Void> createIfAbsent(String path) {
        return store.put(path, new byte[0], Optional.of(MetadataPort.ABSENT), false).<Void>thenApply(s -> null)
                .exceptionally(e -> {
                    Throwable t = e.getCause() != null ? e.getCause() : e;
                    if (t instanceof StoreFailure.VersionConflict) {
                        return null; // created meanwhile: what was asked for
                    }
                    throw new java.util.concurrent.CompletionException(t);
                });
    }

    /**
     * The largest existing ledger id below the probe band ({@link IdSpace#PROBE_FIRST_ID}), and the largest in it
     * (each -1 when there is none): a probe ledger left behind is nobody's id.
     */
    CompletableFuture<long[]> maxLedgerIds() {
        return maxLedgerIdBelow(null).thenCompose(top -> !IdSpace.isProbeId(top)
                ? CompletableFuture.completedFuture(new long[] {top, -1L})
                : maxLedgerIdBelow(String.format("%019d", IdSpace.PROBE_FIRST_ID)).thenApply(l -> new long[] {l, top}));
    }

    /** Largest existing ledger id, probe ledgers included ({@link #maxLedgerIds} tells them apart). */
    CompletableFuture<Long> maxLedgerId() {
        return maxLedgerIdBelow(null);
    }

    /**
     * Largest existing ledger id below {@code bound} (19 digits; null: no bound), found by walking down the ledger tree
     * along the largest child at each level (backing off from empty branches): hierarchical layouts keep long ids
     * under {@code 3/4/4/4/L4}-digit paths and short ids (all below any bound) under {@code 2/4/L4}-digit paths.
     */
    private CompletableFuture<Long> maxLedgerIdBelow(String bound) {
        return store.children(root).thenCompose(top -> {
            List<String> longTop = numericDesc(top, 3, "");
            List<String> shortTop = numericDesc(top, 2, "");
            return firstPresent(longTop, 0, name -> descend(root + "/" + name, name, LONG_WIDTHS, 0, bound))
                    .thenCompose(l -> l.isPresent() ? CompletableFuture.completedFuture(l)
                            : firstPresent(shortTop, 0, name -> descend(root + "/" + name, name, new int[] {4, 4}, 0,
                                    null)));
        }).thenApply(o -> o.orElse(-1L));
    }

    /** Widths of the levels below the top one of a long id's path (the last one is the {@code L}-prefixed leaf). */
    private static final int[] LONG_WIDTHS = {4, 4, 4, 4};

    /**
     * The largest id under {@code path} (whose digits so far are {@code digits}) below {@code bound}; a bound whose
     * prefix differs from {@code digits} no longer constrains (the prefix is already smaller).
     */
    private CompletableFuture<Optional<Long>> descend(String path, String digits, int[] widths, int level,
                                                      String bound) {
        String tight = bound != null && bound.startsWith(digits) ? bound : null;
        if (bound != null && tight == null && digits.compareTo(bound.substring(0, digits.length())) > 0) {
            return CompletableFuture.completedFuture(Optional.empty()); // the whole branch is at or above it
        }
        return store.children(path).thenCompose(children -> {
            boolean leaf = level == widths.length - 1;
            int width = widths[level];
            String limit = tight == null ? null : tight.substring(digits.length(), digits.length() + width);
            List<String> names = numericDesc(children, width, leaf ? "L" : "").stream()
                    .filter(n -> limit == null || (leaf ? n.substring(1).compareTo(limit) < 0
                            : n.compareTo(limit) <= 0))
                    .toList();
            if (leaf) {
                return CompletableFuture.completedFuture(names.isEmpty() ? Optional.<Long>empty()
                        : Optional.of(Long.parseLong(digits + names.get(0).substring(1))));
            }
            return firstPresent(names, 0, name -> descend(path + "/" + name, digits + name, widths, level + 1,
                    tight));
        });
    }

    private static CompletableFuture<Optional<Long>> firstPresent(List<String> names, int i,
            java.util.function.Function<String, CompletableFuture<Optional<Long>>> f) {
        if (i >= names.size()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return f.apply(names.get(i)).thenCompose(r -> r.isPresent() ? CompletableFuture.completedFuture(r)
                : firstPresent(names, i + 1, f));
    }

    private static List<String> numericDesc(List<String> names, int width, String prefix) {
        return names.stream()
                .filter(n -> n.length() == width + prefix.length() && n.startsWith(prefix)
                        && n.substring(prefix.length()).chars().allMatch(Character::isDigit))
                .sorted(java.util.Comparator.reverseOrder())
                .toList();
    }

    static String layoutFactory(String layout) {
        String[] lines = layout.split("\n");
        String line = lines.length > 1 ? lines[1] : lines[0];
        int colon = line.indexOf(':');
        return (colon > 0 ? line.substring(0, colon) : line).trim();
    }

    /** Ledger managers whose id generator is BookKeeper's or Pulsar's 63-bit (HOB) generator. */
    static boolean supportsLongIds(String factoryClass) {
        String simple = factoryClass.substring(factoryClass.lastIndexOf('.') + 1);
        return simple.equals("HierarchicalLedgerManagerFactory")
                || simple.equals("LongHierarchicalLedgerManagerFactory")
                || simple.equals("PulsarLedgerManagerFactory");
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0L;
        }
    }
}
