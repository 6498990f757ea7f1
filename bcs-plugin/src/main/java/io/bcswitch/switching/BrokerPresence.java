package io.bcswitch.switching;

import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RelocationEpoch;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This broker's ephemeral records in the registry: {@code brokers/<id>} (cutover progress, activation errors, open
 * ledger handles) and {@code relocation-applied/<id>} (the relocation epoch it routes with). It keeps the latest
 * value of each, so it can write them again whenever they may be gone: after the metadata session was
 * re-established (ZooKeeper deletes a session's ephemeral nodes with it, and nothing re-creates them by itself),
 * and on every periodic check, which also replaces a node still owned by an older session of this broker.
 *
 * <p>Writes are coalesced: at most one is in flight, and a change made meanwhile is written right after it.
 * Nothing is written before the broker has its id (late in its start-up): a record under a stand-in id would
 * outlive the start-up as a broker that never advances, which deletions and the next promotions would wait for.
 * Every record is stamped with the id at the time it is written.
 */
public final class BrokerPresence {
    private static final Logger log = LoggerFactory.getLogger(BrokerPresence.class);

    private final RegistryStore registry;
    private final Supplier<String> brokerId;
    private final Clock clock;
    private final Object lock = new Object();
    private BrokerCutoverRecord cutover;
    private String activationError;
    private int activationAttempts;
    private Map<String, Integer> handleCounts = Map.of();
    private Map<String, List<Long>> handleIds = Map.of();
    private long relocationEpoch = -1;
    private long preparedFirstLedgerId;
    private final AtomicBoolean writing = new AtomicBoolean();
    private volatile boolean again;
    private volatile boolean closed;

    /** @param brokerId this broker's id, null while it has none yet */
    public BrokerPresence(RegistryStore registry, Supplier<String> brokerId, Clock clock) {
        this.registry = registry;
        this.brokerId = brokerId;
        this.clock = clock;
    }

    /** The cutover's latest progress; the broker record is first written with it. */
    public void cutover(BrokerCutoverRecord record) {
        synchronized (lock) {
            cutover = record;
        }
        publish();
    }

    /** The latest activation failure (null: the latest directive is active on this broker). */
    public void activation(String error, int attempts) {
        synchronized (lock) {
            if (java.util.Objects.equals(error, activationError) && attempts == activationAttempts) {
                return;
            }
            activationError = error;
            activationAttempts = attempts;
        }
        publish();
    }

    /** This broker has its clients ready for the announced switch whose range starts at {@code firstLedgerId}. */
    public void prepared(long firstLedgerId) {
        synchronized (lock) {
            if (firstLedgerId == preparedFirstLedgerId) {
                return;
            }
            preparedFirstLedgerId = firstLedgerId;
        }
        publish();
    }

    /** Ledger handles this broker holds open, by cluster, and the ids of those on non-active clusters. */
    public void handles(Map<String, Integer> counts, Map<String, List<Long>> ids) {
        synchronized (lock) {
            if (counts.equals(handleCounts) && ids.equals(handleIds)) {
                return;
            }
            handleCounts = Map.copyOf(counts);
            handleIds = Map.copyOf(ids);
        }
        publish();
    }

    /**
     * The relocation epoch this broker now routes with. The broker record (with the handles it holds open) is
     * written first: whoever sees the epoch applied, and then reads the record, sees every handle opened before
     * (cleanup relies on it never to delete a ledger a broker still reads where it was).
     */
    public void relocationApplied(long epoch) {
        synchronized (lock) {
            relocationEpoch = epoch;
        }
        BrokerCutoverRecord r = record();
        CompletableFuture<Void> first = r == null || closed ? CompletableFuture.completedFuture(null)
                : registry.writeEphemeral(registry.paths().broker(r.broker()), r).exceptionally(e -> null);
        first.thenCompose(v -> writeRelocationApplied(false));
    }

    /**
     * The record as it is written now, under this broker's id; null before the cutover published its first one or
     * while the broker has no id yet.
     */
    public BrokerCutoverRecord record() {
        String id = brokerId.get();
        synchronized (lock) {
            return cutover == null || id == null ? null : cutover.withActivation(activationError, activationAttempts)
                    .withHandles(handleCounts, handleIds).withPrepared(preparedFirstLedgerId).withBroker(id);
        }
    }

    /**
     * Writes both records again if they are not this session's (gone with an expired session, or left by an older
     * session of this broker that will soon be reaped). Completes when checked (and rewritten).
     */
    public CompletableFuture<Void> ensurePresent() {
        BrokerCutoverRecord r = record();
        String id = brokerId.get();
        if (id == null) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> broker = r == null ? CompletableFuture.completedFuture(null)
                : registry.ownsEphemeral(registry.paths().broker(id)).thenCompose(own -> {
                    if (own) {
                        return CompletableFuture.completedFuture(null);
                    }
                    log.info("broker {}: re-creating its registry record (metadata session changed)", id);
                    return registry.putOwnEphemeral(registry.paths().broker(id), record());
                });
        return broker.thenCompose(v -> writeRelocationApplied(true)).exceptionally(e -> {
            log.warn("broker {}: cannot re-create its registry records yet (will retry): {}", id, e.toString());
            return null;
        });
    }

    private CompletableFuture<Void> writeRelocationApplied(boolean onlyIfMissing) {
        long epoch;
        synchronized (lock) {
            epoch = relocationEpoch;
        }
        String id = brokerId.get();
        if (epoch < 0 || closed || id == null) {
            return CompletableFuture.completedFuture(null);
        }
        String path = registry.paths().relocationApplied(id);
        RelocationEpoch rec = new RelocationEpoch(RelocationEpoch.FORMAT_VERSION, epoch, clock.millis());
        CompletableFuture<Boolean> needed = onlyIfMissing ? registry.ownsEphemeral(path).thenApply(own -> !own)
                : CompletableFuture.completedFuture(true);
        return needed.thenCompose(write -> write ? registry.putOwnEphemeral(path, rec)
                : CompletableFuture.<Void>completedFuture(null)).exceptionally(e -> {
                    log.warn("broker {}: cannot publish applied relocation epoch {}: {}", id, epoch, e.toString());
                    return null;
                });
    }

    private void publish() {
        if (closed) {
            return;
        }
        again = true;
        if (!writing.compareAndSet(false, true)) {
            return; // the write in flight writes again when done
        }
        again = false;
        BrokerCutoverRecord r = record();
        if (r == null) {
            writing.set(false);
            return;
        }
        registry.writeEphemeral(registry.paths().broker(r.broker()), r).whenComplete((v, e) -> {
            if (e != null) {
                log.warn("broker {}: cannot publish its registry record: {}", r.broker(), e.toString());
            }
            writing.set(false);
            if (again) {
                publish();
            }
        });
    }

    public void close() {
        closed = true;
    }
}
