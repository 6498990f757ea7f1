package io.bcswitch.adapter;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.client.LedgerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the routing client has handed out and may still be in use, per bookie cluster: ledger handles (opened or
 * created through it) and ledger creations in flight. Cleanup and close-client use it (through each broker's
 * record) never to delete a ledger, or close a cluster's client, that a broker may still read; the cutover uses
 * the creations in flight never to declare itself done while a ledger may still appear on the old cluster.
 *
 * <p>A handle counts as open until it is closed through a handle this client returned (read handles of the
 * builder API are proxies that see their close), until its ledger's metadata says closed (write handles: their
 * writer closed them), or until nothing references it any more (weakly held: Pulsar drops some handles without
 * closing them). Read handles of the callback API have no observable close: BookKeeper returns its own class and
 * its close only unregisters a metadata listener, which the routing client never asks for (see
 * {@link RoutingBookKeeper}). Pulsar uses such handles for short reads (schema versions, cursor recovery) and
 * keeps only a compacted topic's for long; so one counts as open for {@link #SHORT_READ_NANOS} after it was
 * opened, and after that only while its ledger is some topic's compacted view ({@code longLived}).
 *
 * <p>A handle on a ledger deleted through the routing client is done with, whatever still references it: nothing
 * can be read from or written to a deleted ledger. Pulsar deletes a cursor's previous ledger without closing its
 * handle, which would otherwise count as open until the garbage collector happened to clear it.
 */
final class LedgerHandleTracker {
    private static final Logger log = LoggerFactory.getLogger(LedgerHandleTracker.class);

    /** How long a read handle whose close cannot be seen counts as open unless its ledger is a compacted view. */
    static final long SHORT_READ_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    /** One handle handed out. */
    static final class Tracked {
        final String cluster;
        final long ledgerId;
        final boolean write;
        final boolean closeUnseen;
        final long openedAt = System.nanoTime();
        final WeakReference<Object> handle;
        /** The per-cluster client it was opened through (null: not known): that client must stay open for it. */
        final Object client;
        final AtomicBoolean closed = new AtomicBoolean();

        Tracked(String cluster, long ledgerId, boolean write, boolean closeUnseen, Object handle, Object client) {
            this.client = client;
            this.cluster = cluster;
            this.ledgerId = ledgerId;
            this.write = write;
            this.closeUnseen = closeUnseen;
            this.handle = new WeakReference<>(handle);
        }

        boolean open(java.util.function.LongPredicate longLived) {
            if (closed.get()) {
                return false;
            }
            Object h = handle.get();
            if (h == null) {
                return false;
            }
            if (write) {
                // a writer's handle is done with once its ledger is closed
                return !(h instanceof LedgerHandle lh && lh.isClosed());
            }
            return !closeUnseen || System.nanoTime() - openedAt < SHORT_READ_NANOS || longLived.test(ledgerId);
        }
    }

    /** Open handles on clusters other than the active one: how many, and their ids (at most {@code max} each). */
    record Snapshot(Map<String, Integer> counts, Map<String, List<Long>> idsOutside) {
    }

    private final Set<Tracked> handles = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> creating = new ConcurrentHashMap<>();
    private volatile java.util.function.Consumer<String> onOpen = c -> { };
    private volatile java.util.function.BiConsumer<String, Long> onPulsarDeleted = (c, id) -> { };

    /** Told the cluster of every handle handed out (must not block): the broker publishes new ones promptly. */
    void onOpen(java.util.function.Consumer<String> listener) {
        this.onOpen = listener;
    }

    /**
     * @param closeUnseen a read handle whose close this tracker cannot see (the callback API's)
     */
    Tracked opened(String cluster, long ledgerId, Object handle, boolean write, boolean closeUnseen) {
        return opened(cluster, null, ledgerId, handle, write, closeUnseen);
    }

    /**
     * @param client      the per-cluster client the handle was opened through
     * @param closeUnseen a read handle whose close this tracker cannot see (the callback API's)
     */
    Tracked opened(String cluster, Object client, long ledgerId, Object handle, boolean write, boolean closeUnseen) {
        Tracked t = new Tracked(cluster, ledgerId, write, closeUnseen, handle, client);
        handles.add(t);
        onOpen.accept(cluster);
        return t;
    }

    /** Told each ledger Pulsar deleted and the cluster it was deleted on (must not block). */
    void onPulsarDeleted(java.util.function.BiConsumer<String, Long> listener) {
        this.onPulsarDeleted = listener;
    }

    /** Pulsar deleted {@code ledgerId} on {@code cluster}, where it routed the delete. */
    void pulsarDeleted(String cluster, long ledgerId) {
        deleted(cluster, ledgerId);
        try {
            onPulsarDeleted.accept(cluster, ledgerId);
        } catch (RuntimeException e) {
            // called on the BookKeeper callback that still has to answer Pulsar's delete: nothing may escape
            log.warn("bookie-cluster={} ledger={}: follow-up of Pulsar's delete failed: {}", cluster, ledgerId,
                    e.toString());
        }
    }

    /** The ledger {@code ledgerId} was deleted on {@code cluster}: no handle on it there is open any more. */
    void deleted(String cluster, long ledgerId) {
        for (Tracked t : handles) {
            if (t.ledgerId == ledgerId && t.cluster.equals(cluster)) {
                t.closed.set(true);
            }
        }
    }

    void createStarted(String cluster) {
        creating.computeIfAbsent(cluster, c -> new AtomicInteger()).incrementAndGet();
    }

    void createDone(String cluster) {
        creating.get(cluster).decrementAndGet();
    }

    int createsOutside(String active) {
        int n = 0;
        for (Map.Entry<String, AtomicInteger> e : creating.entrySet()) {
            if (!e.getKey().equals(active)) {
                n += e.getValue().get();
            }
        }
        return n;
    }

    /**
     * The handles opened through {@code client} that are open ({@link Tracked#open}: the judgement cleanup and
     * close-client rely on too), described ("2 handle(s): ledger 5 (write),
     * ledger 7 (read)"), or null when there is none (forgets the handles done with meanwhile).
     */
    String openThrough(Object client, java.util.function.LongPredicate longLived) {
        List<String> open = new ArrayList<>();
        for (Tracked t : handles) {
            if (t.client == client) {
                if (t.open(longLived)) {
                    open.add("ledger " + t.ledgerId + (t.write ? " (write)" : " (read)"));
                } else if (t.closed.get() || t.handle.get() == null) {
                    handles.remove(t);
                }
            }
        }
        return open.isEmpty() ? null : open.size() + " handle(s) open through it: "
                + String.join(", ", open.subList(0, Math.min(5, open.size()))) + (open.size() > 5 ? ", ..." : "");
    }

    /** Open handles on a cluster that is not where {@code home} now says their ledger is read from. */
    List<Tracked> openOutsideHome(java.util.function.LongFunction<java.util.Optional<String>> home,
                                  java.util.function.LongPredicate longLived) {
        List<Tracked> out = new ArrayList<>();
        for (Tracked t : handles) {
            if (t.open(longLived) && !home.apply(t.ledgerId).map(t.cluster::equals).orElse(true)) {
                out.add(t);
            }
        }
        return out;
    }

    /** Forgets what is no longer open and describes the rest. */
    Snapshot snapshot(String active, int max, java.util.function.LongPredicate longLived) {
        Map<String, Integer> counts = new TreeMap<>();
        Map<String, Set<Long>> ids = new TreeMap<>();
        for (Tracked t : handles) {
            if (!t.open(longLived)) {
                handles.remove(t);
                continue;
            }
            if (!t.cluster.equals(active)) {
                counts.merge(t.cluster, 1, Integer::sum);
                Set<Long> s = ids.computeIfAbsent(t.cluster, c -> new TreeSet<>());
                if (s.size() < max) {
                    s.add(t.ledgerId);
                }
            }
        }
        Map<String, List<Long>> out = new TreeMap<>();
        ids.forEach((c, s) -> out.put(c, new ArrayList<>(s)));
        return new Snapshot(counts, out);
    }
}
