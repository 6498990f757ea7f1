package io.bcswitch.migration;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * Bookie clusters in memory, for unit tests of the migration and cleanup logic: each cluster holds ledgers
 * by id with a payload, a closed flag and custom metadata; {@link LedgerCopier} semantics as documented
 * (identical closed copy: ALREADY_PRESENT; anything else under the id: COLLISION; open source: NOT_CLOSED).
 */
final class FakeClusters implements LedgerCopier {

    /** One ledger on one cluster. */
    record Ledger(boolean closed, String payload, Map<String, byte[]> custom) {
    }

    private final Map<String, Map<Long, Ledger>> clusters = new ConcurrentHashMap<>();
    private final java.util.Set<String> unreachable = ConcurrentHashMap.newKeySet();
    private final Map<String, java.util.concurrent.atomic.AtomicInteger> failingCopies = new ConcurrentHashMap<>();
    private final Map<Long, java.util.concurrent.atomic.AtomicInteger> copyAttempts = new ConcurrentHashMap<>();

    /**
     * The next {@code copies} copies from {@code cluster} fail the way a copy fails while its bookies restart: as
     * worth trying again ({@link Outcome#retriable}).
     */
    FakeClusters restartingFor(String cluster, int copies) {
        failingCopies.put(cluster, new java.util.concurrent.atomic.AtomicInteger(copies));
        return this;
    }

    /** How often ledger {@code id} was asked to be copied, from any cluster. */
    int copyAttempts(long id) {
        java.util.concurrent.atomic.AtomicInteger n = copyAttempts.get(id);
        return n == null ? 0 : n.get();
    }

    /** Metadata reads of {@code cluster} fail (its metadata service or bookies do not answer) until set false. */
    FakeClusters unreachable(String cluster, boolean down) {
        if (down) {
            unreachable.add(cluster);
        } else {
            unreachable.remove(cluster);
        }
        return this;
    }

    /** A closed ledger Pulsar made ({@code component}: managed-ledger, schema, compacted-ledger). */
    FakeClusters put(String cluster, long id, String payload, String component) {
        Map<String, byte[]> custom = new TreeMap<>();
        custom.put("application", "pulsar".getBytes(StandardCharsets.UTF_8));
        custom.put("component", component.getBytes(StandardCharsets.UTF_8));
        return put(cluster, id, new Ledger(true, payload, custom));
    }

    FakeClusters put(String cluster, long id, Ledger ledger) {
        clusters.computeIfAbsent(cluster, c -> new ConcurrentHashMap<>()).put(id, ledger);
        return this;
    }

    boolean has(String cluster, long id) {
        return clusters.getOrDefault(cluster, Map.of()).containsKey(id);
    }

    Ledger get(String cluster, long id) {
        return clusters.getOrDefault(cluster, Map.of()).get(id);
    }

    @Override
    public CompletableFuture<Outcome> copy(long id, String from, String to, LongFunction<CompletableFuture<Void>> pace) {
        copyAttempts.computeIfAbsent(id, x -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
        java.util.concurrent.atomic.AtomicInteger restarting = failingCopies.get(from);
        if (restarting != null && restarting.getAndDecrement() > 0) {
            return CompletableFuture.completedFuture(new Outcome(Result.FAILED, 0, "reading ledger " + id + " from "
                    + from + ": Bookie handle is not available", true));
        }
        if (unreachable.contains(from)) {
            return done(Result.FAILED, "reading ledger " + id + " from " + from + ": its bookies do not answer");
        }
        Ledger src = get(from, id);
        if (src == null) {
            return done(Result.SOURCE_MISSING, "no ledger " + id + " on " + from);
        }
        if (!src.closed()) {
            return done(Result.NOT_CLOSED, "open");
        }
        Ledger dst = get(to, id);
        if (dst != null) {
            return dst.closed() && dst.payload().equals(src.payload())
                    ? done(Result.ALREADY_PRESENT, "identical copy on " + to)
                    : done(Result.COLLISION, "different ledger " + id + " on " + to);
        }
        put(to, id, new Ledger(true, src.payload(), copyMetadata(src.custom(), from)));
        return CompletableFuture.completedFuture(new Outcome(Result.COPIED, src.payload().length(), "copied"));
    }

    /** The custom metadata a copy gets: the source's plus the mark naming where it was copied from. */
    Map<String, byte[]> copyMetadata(Map<String, byte[]> source, String from) {
        Map<String, byte[]> m = new TreeMap<>(source);
        m.put(COPY_OF, from.getBytes(StandardCharsets.UTF_8));
        return m;
    }

    static final String COPY_OF = "bookie-cluster-switch/copy-of";

    @Override
    public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
        if (unreachable.contains(cluster)) {
            return CompletableFuture.failedFuture(new java.io.IOException("bookie cluster " + cluster
                    + " does not answer"));
        }
        Ledger l = get(cluster, id);
        if (l == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        byte[] app = l.custom().get("application");
        byte[] comp = l.custom().get("component");
        String component = app != null && comp != null && new String(app, StandardCharsets.UTF_8).equals("pulsar")
                ? new String(comp, StandardCharsets.UTF_8) : null;
        byte[] copyOf = l.custom().get(COPY_OF);
        return CompletableFuture.completedFuture(Optional.of(new LedgerFacts(l.closed(), l.payload().length(),
                l.payload().length() - 1, component, copyOf == null ? null : new String(copyOf, StandardCharsets.UTF_8),
                false)));
    }

    @Override
    public CompletableFuture<List<Long>> list(String cluster) {
        return CompletableFuture.completedFuture(new ArrayList<>(clusters.getOrDefault(cluster, Map.of()).keySet()));
    }

    @Override
    public CompletableFuture<Boolean> sameEntries(long id, String a, String b, LongFunction<CompletableFuture<Void>> pace) {
        Ledger x = get(a, id);
        Ledger y = get(b, id);
        return CompletableFuture.completedFuture(x != null && y != null && x.closed() && y.closed()
                && x.payload().equals(y.payload()));
    }

    @Override
    public CompletableFuture<Void> delete(long id, String cluster) {
        Map<Long, Ledger> c = clusters.get(cluster);
        if (c != null) {
            c.remove(id);
        }
        return CompletableFuture.completedFuture(null);
    }

    /**
     * These clusters answering every call a few milliseconds later, on another thread, as bookie clusters do: a
     * component that starts work without waiting for it completes before the work is done, which a test then sees
     * (with answers given at once, work it did not wait for was done anyway).
     */
    LedgerCopier answeringLater() {
        return new Delegating(this) {
            @Override
            public CompletableFuture<Outcome> copy(long id, String from, String dst,
                                                   LongFunction<CompletableFuture<Void>> pace) {
                return later().thenCompose(v -> super.copy(id, from, dst, pace));
            }

            @Override
            public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
                return later().thenCompose(v -> super.facts(id, cluster));
            }

            @Override
            public CompletableFuture<List<Long>> list(String cluster) {
                return later().thenCompose(v -> super.list(cluster));
            }

            @Override
            public CompletableFuture<Boolean> sameEntries(long id, String a, String b,
                                                          LongFunction<CompletableFuture<Void>> pace) {
                return later().thenCompose(v -> super.sameEntries(id, a, b, pace));
            }

            @Override
            public CompletableFuture<Void> delete(long id, String cluster) {
                return later().thenCompose(v -> super.delete(id, cluster));
            }
        };
    }

    private static CompletableFuture<Void> later() {
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(2, java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    /** Passes every call to another copier; tests override what they interfere with. */
    static class Delegating implements LedgerCopier {
        private final LedgerCopier to;

        Delegating(LedgerCopier to) {
            this.to = to;
        }

        @Override
        public CompletableFuture<Outcome> copy(long id, String from, String dst,
                                               LongFunction<CompletableFuture<Void>> pace) {
            return to.copy(id, from, dst, pace);
        }

        @Override
        public CompletableFuture<Optional<LedgerFacts>> facts(long id, String cluster) {
            return to.facts(id, cluster);
        }

        @Override
        public CompletableFuture<List<Long>> list(String cluster) {
            return to.list(cluster);
        }

        @Override
        public CompletableFuture<Boolean> sameEntries(long id, String a, String b,
                                                      LongFunction<CompletableFuture<Void>> pace) {
            return to.sameEntries(id, a, b, pace);
        }

        @Override
        public CompletableFuture<Void> delete(long id, String cluster) {
            return to.delete(id, cluster);
        }
    }

    private static CompletableFuture<Outcome> done(Result r, String detail) {
        return CompletableFuture.completedFuture(new Outcome(r, 0, detail));
    }
}
