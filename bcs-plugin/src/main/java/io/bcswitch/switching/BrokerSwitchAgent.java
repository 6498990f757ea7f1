package io.bcswitch.switching;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.config.SwitchConfig;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import io.bcswitch.routing.Ownership;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One per broker: decides the active cluster at start-up, follows the switch directive, the range table and the
 * relocation table, and applies each new directive (advance this broker's routing view, recreate the target's
 * clients, start the cutover). Everything runs one step at a time, in order, on the agent's own thread.
 *
 * <p>Change notifications are only a fast path. ZooKeeper does not replay what changed while a broker was
 * disconnected or its session expired, so the agent also re-reads everything when the metadata session is
 * re-established or reconnected, and re-reads the directive, the range table and the relocation epoch every
 * {@code resyncIntervalSeconds} as a safety net. An activation that fails (the target's client cannot be built) is
 * retried with backoff until it works or a newer directive replaces it; the error is published in this broker's
 * record, so status shows it.
 */
public class BrokerSwitchAgent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerSwitchAgent.class);
    static final long FIRST_RETRY_MILLIS = 1_000;
    static final long MAX_RETRY_MILLIS = 30_000;

    private final RegistryStore registry;
    private final SwitchConfig config;
    private final ClientActivation activation;
    private final CutoverTrigger cutover;
    private final BrokerPresence presence;
    private final Clock clock;
    private final ScheduledExecutorService events = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bcs-switch-agent");
        t.setDaemon(true);
        return t;
    });
    private final AtomicReference<CompletableFuture<Ownership>> refreshing = new AtomicReference<>();
    private volatile Ownership ownership;
    private CompletableFuture<Void> applyTail = CompletableFuture.completedFuture(null);
    private int failedActivations;
    /** Waits between activation attempts; used on the events thread only. */
    private final io.bcswitch.concurrent.RetryDelays activationDelays;
    private ScheduledFuture<?> activationRetry;
    private volatile boolean closed;
    private final Listener listener;
    private final FirstActivation firstActivation;
    private final RelocationReader relocationReader;

    /** @param retries the waits between attempts to activate a switch's client (the adapter's: Pulsar's back-off) */
    public BrokerSwitchAgent(RegistryStore registry, SwitchConfig config, ClientActivation activation,
                             CutoverTrigger cutover, BrokerPresence presence, Clock clock,
                             io.bcswitch.concurrent.RetryDelays.Factory retries) {
        this(registry, config, activation, cutover, presence, clock, retries, Listener.NONE);
    }

    /** @param listener told when a cluster is retired and when a relocation epoch is applied */
    public BrokerSwitchAgent(RegistryStore registry, SwitchConfig config, ClientActivation activation,
                             CutoverTrigger cutover, BrokerPresence presence, Clock clock,
                             io.bcswitch.concurrent.RetryDelays.Factory retries, Listener listener) {
        this.listener = listener;
        this.activationDelays = retries.between(FIRST_RETRY_MILLIS, MAX_RETRY_MILLIS);
        this.registry = registry;
        this.config = config;
        this.activation = activation;
        this.cutover = cutover;
        this.presence = presence;
        this.clock = clock;
        this.firstActivation = new FirstActivation(registry, config, clock);
        this.relocationReader = new RelocationReader(registry, e -> relocationEpochSeen.accumulateAndGet(e, Math::max));
    }

    /** This broker's current routing view. Never null after {@link #start}. */
    public Ownership ownership() {
        return ownership;
    }

    /**
     * Decides the active cluster (PIP-477 order: directive / ACTIVE record, else the configured
     * {@code currentClusterName}, else a name derived from the broker's own metadata service URI,
     * registered ACTIVE), writes the one-time bootstrap record and range table on first activation,
     * and starts following the registry.
     *
     * @param brokerUri the broker's own {@code bookkeeperMetadataServiceUri} (or its implicit default)
     */
    public CompletableFuture<Ownership> start(String brokerUri) {
        registry.onAnyChange(path -> {
            if (closed) {
                return;
            }
            if (path.equals(registry.paths().switchTarget())) {
                events.execute(this::applyLatest);
            } else if (path.equals(registry.paths().switchPrepare())) {
                events.execute(this::prepareLatest);
            } else if (path.equals(registry.paths().relocationEpoch())) {
                events.execute(() -> reloadRelocations(false));
            } else if (path.equals(registry.paths().ranges())) {
                events.execute(() -> resync(false));
            }
        });
        registry.onSessionChange(change -> {
            if (closed) {
                return;
            }
            if (change == MetadataPort.SessionChange.RECONNECTED
                    || change == MetadataPort.SessionChange.SESSION_REESTABLISHED) {
                log.info("metadata session {}: re-reading the switch directive, the range table and the relocation "
                        + "table, re-creating this broker's records", change);
                events.execute(() -> resync(true));
                presence.ensurePresent();
            } else {
                log.warn("metadata session {}: this broker may miss registry changes until it is connected again",
                        change);
            }
        });
        return firstActivation.decide(brokerUri)
                .thenCompose(o -> activation.activate(o.activeCluster()).thenApply(v -> o))
          .thenCompose(o -> relocationReader.read(null).thenApply(r -> o.withRelocations(r.homes(), r.epoch())))
          .thenCompose(o -> registry.listClusters().thenApply(o::withRetiredOf).exceptionally(e -> o))
          .thenApply(o -> {
              ownership = o;
              log.info("bookie-cluster={} active at start-up, epoch={}, ranges={}", o.activeCluster(),
                      o.activeEpoch(), o.ranges().ranges());
              // a directive written while we were starting is picked up here
              events.execute(this::applyLatest);
              long period = config.resyncIntervalSeconds();
              events.scheduleWithFixedDelay(() -> {
                  resync(false);
                  presence.ensurePresent();
              }, period, period, TimeUnit.SECONDS);
              return o;
          });
    }

    /**
     * The latest ranges, for an id this broker cannot place yet: re-reads the range table and the directive and
     * adds every range it did not know (without activating anything: that is {@link #applyLatest}'s job).
     * Concurrent callers share one read. Fails when either cannot be read: the caller must not guess.
     */
    public CompletableFuture<Ownership> refresh() {
        CompletableFuture<Ownership> mine = new CompletableFuture<>();
        CompletableFuture<Ownership> running = refreshing.compareAndExchange(null, mine);
        if (running != null) {
            return running;
        }
        registry.readRanges().thenCombine(registry.readDirective(), this::merge).whenComplete((o, e) -> {
            refreshing.set(null);
            if (e != null) {
                log.warn("Cannot read the range table or the switch directive: ledgers of ranges this broker does "
                        + "not know yet cannot be routed until they can be read ({})", e.toString());
                mine.completeExceptionally(e);
            } else {
                mine.complete(o);
            }
        });
        return mine;
    }

    /** Adds the ranges of {@code table} and {@code d} this broker does not know yet to its view. */
    private synchronized Ownership merge(Optional<RangeTable> table, Versioned<SwitchDirective> d) {
        Ownership o = ownership;
        RangeTable merged = o.ranges();
        for (IdRange r : table.map(RangeTable::ranges).orElse(List.of())) {
            merged = merged.with(r);
        }
        if (d.present()) {
            merged = merged.with(d.value().range());
        }
        if (!merged.equals(o.ranges())) {
            o = o.withRanges(merged);
            ownership = o;
        }
        return o;
    }

    /**
     * Builds this broker's clients for the announced switch (see {@link io.bcswitch.registry.SwitchPreparation})
     * and then says so in its record, which the switch waits for (boundedly) before committing. Runs beside the
     * directive's application, not in its queue: a preparation never holds up a switch, and a directive that
     * arrives first just builds the clients itself (or takes the ones being prepared).
     */
    private void prepareLatest() {
        registry.read(registry.paths().switchPrepare(), io.bcswitch.registry.SwitchPreparation.class)
                .thenAcceptAsync(vp -> { // building clients may block: never on the metadata store's thread
                    Ownership o = ownership;
                    if (closed || o == null || !vp.present() || vp.value().epoch() <= o.activeEpoch()
                            || o.retired().contains(vp.value().target())) { // retired: its precheck refuses it
                        return;
                    }
                    var p = vp.value();
                    long started = System.nanoTime();
                    log.info("bookie-cluster={} switch epoch={} announced (first ledger id {}): preparing this "
                            + "broker's clients", p.target(), p.epoch(), p.firstLedgerId());
                    activation.prepare(p.target(), p.firstLedgerId()).whenComplete((v, e) -> {
                        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                        if (e != null) {
                            log.warn("bookie-cluster={} switch epoch={}: cannot prepare clients ({} ms), they will be "
                                    + "built when the switch is applied: {}", p.target(), p.epoch(), ms,
                                    rootMessage(e));
                        } else {
                            log.info("bookie-cluster={} switch epoch={}: clients prepared in {} ms", p.target(),
                                    p.epoch(), ms);
                            presence.prepared(p.firstLedgerId());
                        }
                    });
                }, events).exceptionally(e -> {
                    log.warn("Cannot read the announced switch; its clients will be built when it is applied: {}",
                            e.toString());
                    return null;
                });
    }

    /** Applies the newest directive if this broker has not yet; runs on the agent thread. */
    private void applyLatest() {
        applyTail = applyTail.exceptionally(e -> null).thenCompose(v -> closed
                ? CompletableFuture.completedFuture(null)
                : registry.readDirective().thenCompose(this::apply));
    }

    /**
     * Re-reads the range table and the directive (applying a newer one), then the relocation table: all of it
     * when {@code full}, else only when its epoch moved. Runs on the agent thread, in order.
     */
    private void resync(boolean full) {
        applyTail = applyTail.exceptionally(e -> null).thenCompose(v -> closed || ownership == null
                ? CompletableFuture.completedFuture(null)
                : registry.readRanges().thenCombine(registry.readDirective(), (t, d) -> {
                    merge(t, d);
                    return d;
                }).thenCompose(this::apply).exceptionally(e -> {
                    log.warn("Cannot re-read the switch directive and the range table (will retry): {}", e.toString());
                    return null;
                }));
        reloadRelocations(full);
    }

    private CompletableFuture<Void> apply(Versioned<SwitchDirective> vd) {
        if (ownership == null) {
            return CompletableFuture.completedFuture(null); // start() applies the latest directive itself
        }
        if (!vd.present() || vd.value().epoch() <= ownership.activeEpoch()) {
            return CompletableFuture.completedFuture(null);
        }
        SwitchDirective d = vd.value();
        merge(Optional.empty(), vd);
        log.info("bookie-cluster={} switch directive epoch={} from {}: activating", d.target(), d.epoch(), d.origin());
        return activation.activate(d.target(), d.firstLedgerId()).thenRun(() -> {
            synchronized (this) {
                ownership = ownership.withActive(ownership.ranges().with(d.range()), d.target(), d.epoch());
            }
            if (failedActivations > 0) {
                log.info("bookie-cluster={} epoch={} activated after {} failed attempt(s)", d.target(), d.epoch(),
                        failedActivations);
            }
            failedActivations = 0;
            activationDelays.reset();
            presence.activation(null, 0);
            log.info("bookie-cluster={} active on this broker, epoch={}, first ledger id of its range={}",
                    d.target(), d.epoch(), d.firstLedgerId());
            cutover.start(ownership);
            repairRegistry(d);
        }).exceptionally(e -> {
            failedActivations++;
            long delay = activationDelays.nextMillis();
            String why = rootMessage(e);
            presence.activation("cannot activate bookie-cluster=" + d.target() + " (epoch " + d.epoch() + "): "
                    + why, failedActivations);
            log.error("bookie-cluster={} cannot activate switch epoch={} (attempt {}): {}; retrying in {} ms",
                    d.target(), d.epoch(), failedActivations, why, delay);
            scheduleActivationRetry(delay);
            return null;
        });
    }

    private void scheduleActivationRetry(long delayMillis) {
        if (closed) {
            return;
        }
        if (activationRetry != null) {
            activationRetry.cancel(false);
        }
        activationRetry = events.schedule(this::applyLatest, delayMillis, TimeUnit.MILLISECONDS);
    }

    private static String rootMessage(Throwable e) {
        Throwable t = Failures.unwrap(e);
        while (t.getCause() != null && t.getCause() != t && t.getMessage() == null) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    /**
     * Re-reads the relocation table (all of it when {@code full}; else only if its epoch moved, by what the epoch
     * lists); runs on the agent thread, in order.
     */
    private void reloadRelocations(boolean full) {
        applyTail = applyTail.exceptionally(e -> null).thenCompose(v -> closed || ownership == null
                ? CompletableFuture.completedFuture(null)
                : registry.readRelocationEpochRecord().thenCompose(rec -> {
                    relocationEpochSeen.accumulateAndGet(rec.epoch(), Math::max);
                    if (!full && rec.epoch() == ownership.relocationEpoch()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    // what the listeners do may block (closing a retired cluster's clients): on the agent's
                    // thread, never on the metadata store's
                    return relocationReader.read(full ? null : ownership).thenAcceptAsync(r -> {
                        synchronized (this) {
                            if (full || r.epoch() >= ownership.relocationEpoch()) {
                                ownership = ownership.withRelocations(r.homes(), r.epoch());
                            }
                        }
                        log.info("relocation epoch={} applied: {} relocated ledger(s) ({} read)", r.epoch(),
                                r.homes().size(), r.read());
                        listener.relocationsApplied(r.epoch());
                    }, events).thenCompose(x -> registry.listClusters()).thenAcceptAsync(clusters -> {
                        Set<String> retired;
                        synchronized (this) {
                            ownership = ownership.withRetiredOf(clusters);
                            retired = ownership.retired();
                        }
                        retired.forEach(listener::deprecated);
                    }, events);
                }).exceptionally(e -> {
                    log.warn("Cannot read the relocation table; routing with the previous one: {}", e.toString());
                    return null;
                }));
    }

    /** The newest relocation epoch this broker has read from the table's epoch record. */
    private final AtomicLong relocationEpochSeen = new AtomicLong();

    /**
     * How many relocation epochs this broker routes behind the newest one it has read (0 when it is up to date, or
     * before it routes at all): a broker that stays behind keeps reading ledgers where they were.
     */
    public long relocationEpochLag() {
        Ownership o = ownership;
        return o == null ? 0 : Math.max(0, relocationEpochSeen.get() - o.relocationEpoch());
    }

    /** What the broker does when the agent has changed its routing; told on the agent's thread. */
    public interface Listener {
        Listener NONE = new Listener() { };

        /** A cluster (never the active one) is DEPRECATED: its clients can close. Must not block for long. */
        default void deprecated(String cluster) {
        }

        /** This broker now routes with relocation epoch {@code epoch}. */
        default void relocationsApplied(long epoch) {
        }
    }

    /** Tells the listener again (on the agent thread) the relocation epoch this broker routes with now. */
    public void retellRelocationEpoch() {
        try {
            events.execute(() -> {
                Ownership o = ownership;
                if (o != null) {
                    listener.relocationsApplied(o.relocationEpoch());
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the agent is closed: nothing to tell
        }
    }

    /** Idempotent completion of a switch's follow-up writes, in case the broker that switched died. */
    CompletableFuture<Void> repairRegistry(SwitchDirective d) {
        return RegistryFollowUp.afterSwitch(registry, d).exceptionally(e -> {
            log.warn("bookie-cluster={} epoch={} registry follow-up failed (will be retried): {}", d.target(),
                    d.epoch(), e.toString());
            return null;
        });
    }

    @Override
    public void close() {
        closed = true;
        events.shutdownNow();
    }
}
