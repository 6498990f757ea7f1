package io.bcswitch.adapter;

import io.bcswitch.cutover.TopicRoller;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.mledger.impl.ManagedCursorImpl;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.common.naming.TopicName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TopicRoller} over the broker's managed-ledger factory, using public managed-ledger calls.
 *
 * <p>Forced rollover: {@code rollCurrentLedgerIfFull()} rolls a ledger that has entries once it counts
 * as full. For the length of that call the managed ledger's own config is made to say "full after one
 * entry, no minimum age", then restored; the check and the state change happen inside the call, and
 * adds are serialized on the managed ledger's monitor, which is held meanwhile. Each topic has its own
 * {@link ManagedLedgerConfig}, so no other topic sees the change. In-flight adds are re-sent by the
 * managed ledger to the new ledger: publishers see latency, not errors.
 *
 * <p>A ledger with no entries cannot be rolled that way; its topic is unloaded instead (clients
 * reconnect, the topic reopens and creates its next ledger on the active cluster). That needs the
 * broker; without it such ledgers move at their first write after their next normal rollover.
 */
final class ManagedLedgerRoller implements TopicRoller {
    private static final Logger log = LoggerFactory.getLogger(ManagedLedgerRoller.class);

    private final Supplier<ManagedLedgerFactory> factory;
    private final Supplier<PulsarService> broker;

    private final java.util.function.ToIntFunction<String> createsInFlightOutside;

    /**
     * @param createsInFlightOutside ledger creations in flight on clusters other than the given (active) one, as the
     *                               routing client counts them
     */
    ManagedLedgerRoller(Supplier<ManagedLedgerFactory> factory, Supplier<PulsarService> broker,
                        java.util.function.ToIntFunction<String> createsInFlightOutside) {
        this.factory = factory;
        this.broker = broker;
        this.createsInFlightOutside = createsInFlightOutside;
    }

    @Override
    public int createsInFlightOutside(String activeCluster) {
        return createsInFlightOutside.applyAsInt(activeCluster);
    }

    @Override
    public List<OpenLedger> openLedgers() {
        ManagedLedgerFactory f = factory.get();
        if (f == null) {
            return List.of();
        }
        List<OpenLedger> out = new ArrayList<>();
        for (Map.Entry<String, ManagedLedger> e : f.getManagedLedgers().entrySet()) {
            if (e.getValue() instanceof ManagedLedgerImpl ml && !(ml.getClass().getSimpleName().startsWith("Shadow"))) {
                List<Long> cursors = new ArrayList<>();
                for (ManagedCursor c : ml.getCursors()) {
                    if (c instanceof ManagedCursorImpl ci && ci.getCursorLedger() >= 0) {
                        cursors.add(ci.getCursorLedger());
                    }
                }
                out.add(new OpenLedger(e.getKey(), currentLedgerId(ml), ml.getCurrentLedgerEntries(), cursors));
            }
        }
        return out;
    }

    @Override
    public long currentLedgerId(String name) {
        ManagedLedgerFactory f = factory.get();
        ManagedLedger ml = f == null ? null : f.getManagedLedgers().get(name);
        return ml instanceof ManagedLedgerImpl impl ? currentLedgerId(impl) : -1L;
    }

    private static long currentLedgerId(ManagedLedgerImpl ml) {
        if (ml.getState() != ManagedLedgerImpl.State.LedgerOpened) {
            return -1L;
        }
        var ledgers = ml.getLedgersInfo();
        return ledgers.isEmpty() ? -1L : ledgers.lastKey();
    }

    @Override
    public CompletableFuture<RollMethod> roll(String name) {
        ManagedLedgerFactory f = factory.get();
        ManagedLedger ml = f == null ? null : f.getManagedLedgers().get(name);
        if (!(ml instanceof ManagedLedgerImpl impl) || impl.getState() != ManagedLedgerImpl.State.LedgerOpened) {
            return CompletableFuture.completedFuture(RollMethod.SKIPPED);
        }
        if (impl.getCurrentLedgerEntries() > 0) {
            ForcedRollover.roll(impl);
            return CompletableFuture.completedFuture(RollMethod.ROLLOVER);
        }
        return unload(name);
    }

    /**
     * Cursor metadata ledgers, with public calls only: {@code periodicRollover()} starts a new ledger when
     * the current one has at least {@code metadataMaxEntriesPerLedger} entries; for the length of the
     * call that limit is 0 in the managed ledger's own config (only cursors read it). Runs on the managed
     * ledger's executor, where Pulsar itself runs periodic rollovers.
     */
    @Override
    public int rollCursors(String name, java.util.function.LongPredicate onOldCluster) {
        ManagedLedgerFactory f = factory.get();
        ManagedLedger ml = f == null ? null : f.getManagedLedgers().get(name);
        if (!(ml instanceof ManagedLedgerImpl impl)) {
            return 0;
        }
        List<ManagedCursorImpl> toRoll = new ArrayList<>();
        for (ManagedCursor c : impl.getCursors()) {
            if (c instanceof ManagedCursorImpl ci && ci.getCursorLedger() >= 0 && onOldCluster.test(ci.getCursorLedger())) {
                toRoll.add(ci);
            }
        }
        if (toRoll.isEmpty()) {
            return 0;
        }
        impl.getExecutor().execute(() -> {
            List<ManagedCursorImpl> empty = rollNow(impl, name, toRoll);
            if (empty.isEmpty()) {
                return;
            }
            // Pulsar rolls only a cursor ledger that holds a position. An idle cursor whose ledger is still
            // empty gets its current position written again (same position, same properties: nothing is
            // acknowledged), then is rolled once that write is through.
            for (ManagedCursorImpl c : empty) {
                c.asyncMarkDelete(c.getMarkDeletedPosition(), c.getProperties(),
                        new org.apache.bookkeeper.mledger.AsyncCallbacks.MarkDeleteCallback() {
                            @Override
                            public void markDeleteComplete(Object ctx) {
                            }

                            @Override
                            public void markDeleteFailed(org.apache.bookkeeper.mledger.ManagedLedgerException e,
                                                         Object ctx) {
                                log.warn("ledger-name={} cursor={} cannot write its position before rolling it: {}",
                                        name, c.getName(), e.toString());
                            }
                        }, null);
            }
            java.util.concurrent.CompletableFuture.delayedExecutor(EMPTY_CURSOR_RETRY_MS, TimeUnit.MILLISECONDS,
                    impl.getExecutor()).execute(() -> {
                        List<ManagedCursorImpl> still = rollNow(impl, name, empty.stream()
                                .filter(c -> c.getCursorLedger() >= 0 && onOldCluster.test(c.getCursorLedger()))
                                .toList());
                        if (!still.isEmpty()) {
                            log.info("ledger-name={} {} cursor ledger(s) on a previous cluster still empty; they move "
                                    + "at the next acknowledgement or topic unload", name, still.size());
                        }
                    });
        });
        return toRoll.size();
    }

    /** How long to wait for an idle cursor's position write before rolling its ledger. */
    private static final long EMPTY_CURSOR_RETRY_MS = 1_500;

    /** Rolls each cursor's ledger now; returns the ones that could not be rolled (their ledger is empty). */
    private static List<ManagedCursorImpl> rollNow(ManagedLedgerImpl impl, String name, List<ManagedCursorImpl> cursors) {
        List<ManagedCursorImpl> notRolled = new ArrayList<>();
        ManagedLedgerConfig cfg = impl.getConfig();
        int limit = cfg.getMetadataMaxEntriesPerLedger();
        cfg.setMetadataMaxEntriesPerLedger(0);
        try {
            for (ManagedCursorImpl c : cursors) {
                try {
                    if (!c.periodicRollover()) {
                        notRolled.add(c);
                    }
                } catch (RuntimeException e) {
                    log.warn("ledger-name={} cursor={} rollover failed: {}", name, c.getName(), e.toString());
                }
            }
        } finally {
            cfg.setMetadataMaxEntriesPerLedger(limit);
        }
        return notRolled;
    }

    /** The compacted view (the compaction cursor's ledger property) of every open managed ledger, by ledger id. */
    Map<Long, List<String>> compactedViews() {
        ManagedLedgerFactory f = factory.get();
        if (f == null) {
            return Map.of();
        }
        Map<Long, List<String>> out = new java.util.HashMap<>();
        for (Map.Entry<String, ManagedLedger> e : f.getManagedLedgers().entrySet()) {
            for (ManagedCursor c : e.getValue().getCursors()) {
                if (c.getName().equals(org.apache.pulsar.compaction.Compactor.COMPACTION_SUBSCRIPTION)) {
                    Long id = c.getProperties().get(org.apache.pulsar.compaction.Compactor.COMPACTED_TOPIC_LEDGER_PROPERTY);
                    if (id != null) {
                        out.computeIfAbsent(id, k -> new ArrayList<>()).add(e.getKey());
                    }
                }
            }
        }
        return out;
    }

    /** Unloads the topic of {@code managedLedgerName} (it reloads on its next use); SKIPPED when it is not loaded. */
    CompletableFuture<RollMethod> unloadTopic(String managedLedgerName) {
        return unload(managedLedgerName);
    }

    private CompletableFuture<RollMethod> unload(String managedLedgerName) {
        PulsarService pulsar = broker.get();
        if (pulsar == null) {
            return CompletableFuture.completedFuture(RollMethod.SKIPPED);
        }
        String topic;
        try {
            topic = TopicName.fromPersistenceNamingEncoding(managedLedgerName);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(RollMethod.SKIPPED);
        }
        return pulsar.getBrokerService().getTopicIfExists(topic).thenCompose(t -> {
            if (t.isEmpty()) {
                return CompletableFuture.completedFuture(RollMethod.SKIPPED);
            }
            log.info("topic={} has an empty ledger on the previous bookie cluster: unloading it", topic);
            return t.get().close(false).thenApply(v -> RollMethod.UNLOAD);
        });
    }
}
