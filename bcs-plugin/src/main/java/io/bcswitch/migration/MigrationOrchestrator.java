package io.bcswitch.migration;

import io.bcswitch.config.SwitchConfig;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.Versioned;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.pulsar.metadata.api.extended.CreateOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the small, closed metadata ledgers (cursor, schema, compacted-topic) off the clusters a switch
 * left behind: BUILD copies and verifies each onto the active cluster, PROMOTE makes each verified copy
 * the ledger's home in the relocation table (one compare-and-set per ledger, batches announced by the
 * relocation epoch; the next batch waits until every live broker has applied the last one, so no
 * broker routes more than one batch behind). Data ledgers are never copied: they stay where they are until retention removes
 * them.
 *
 * <p>Runs on one broker at a time: the one holding the ephemeral lock {@code <configPath>/orchestrator-lock}.
 * The broker that accepted the switch starts at once; any other broker takes over a migration that has
 * no lock holder (its broker died or restarted) on its next tick. Every step is idempotent, so a
 * resumed run replans from the inventory: copies found identical on the target count as done,
 * promotions found present count as done.
 */
public final class MigrationOrchestrator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);
    /** Other brokers leave a fresh switch to the broker that accepted it for this long. */
    static final long START_GRACE_MILLIS = 10_000;
    private static final int OPEN_RETRY_PASSES = 3;
    private static final long OPEN_RETRY_DELAY_MILLIS = 2_000;
    private static final long PERSIST_INTERVAL_MILLIS = 1_000;
    /** How long PROMOTE waits, after each batch, for every live broker to apply the batch's relocation epoch. */
    static final long APPLY_WAIT_MILLIS = 30_000;
    private static final long APPLY_POLL_MILLIS = 100;
    /**
     * A rollback's deletions wait for this relocation epoch until the rollback has announced its flip
     * (nothing is deleted meanwhile); a rollback interrupted before that is announced by the next pass.
     */
    private static final long FLIP_NOT_ANNOUNCED = Long.MAX_VALUE;

    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final SwitchConfig.Migration config;
    private final Supplier<String> brokerId;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final MigrationMetrics metrics;
    private final ByteRateLimiter limiter;
    private final long applyWaitNanos;
    private final AtomicBoolean running = new AtomicBoolean();
    private final Set<Long> acceptedHere = ConcurrentHashMap.newKeySet();
    private volatile ScheduledFuture<?> ticker;
    private volatile boolean closed;

    public MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                                 SwitchConfig.Migration config, Supplier<String> brokerId,
                                 ScheduledExecutorService scheduler, Clock clock, MigrationMetrics metrics) {
        this(registry, inventory, copier, config, brokerId, scheduler, clock, metrics, APPLY_WAIT_MILLIS);
    }

    MigrationOrchestrator(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                          SwitchConfig.Migration config, Supplier<String> brokerId, ScheduledExecutorService scheduler,
                          Clock clock, MigrationMetrics metrics, long applyWaitMillis) {
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
        this.config = config;
        this.brokerId = brokerId;
        this.scheduler = scheduler;
        this.clock = clock;
        this.metrics = metrics;
        this.limiter = new ByteRateLimiter(config.bytesPerSecond(), scheduler, System::nanoTime);
        this.applyWaitNanos = TimeUnit.MILLISECONDS.toNanos(applyWaitMillis);
    }

    /** Checks for work every {@code periodMillis}. */
    public void start(long periodMillis) {
        ticker = scheduler.scheduleWithFixedDelay(this::tick, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** This broker accepted switch {@code epoch}: it runs its migration without waiting for the grace period. */
    public void switchAccepted(long epoch) {
        acceptedHere.add(epoch);
        scheduler.execute(this::tick);
    }

    /** One pass: resume or start the latest switch's migration if nobody runs it, then due deletions. */
    public CompletableFuture<Void> tick() {
        if (closed || !running.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> pass;
        try {
            pass = step();
        } catch (RuntimeException e) {
            pass = CompletableFuture.failedFuture(e);
        }
        return pass.whenComplete((v, e) -> {
            running.set(false);
            if (e != null && !closed) {
                log.warn("migration pass failed on broker {} (will retry): {}", brokerId.get(), e.toString());
            }
        });
    }

    private CompletableFuture<Void> step() {
        // cheap reads every tick (directive, state); the relocation table only when there is work
        return registry.readDirective().thenCompose(directive -> {
            if (!directive.present()) {
                return CompletableFuture.completedFuture(null);
            }
            long epoch = directive.value().epoch();
            return readState(epoch).thenCompose(state -> {
                boolean work = !state.present() || !state.value().phase().terminal();
                if (!work && state.value().pendingDeletions().isEmpty()) {
                    return states().thenCompose(all -> all.stream().anyMatch(s -> !s.pendingDeletions().isEmpty())
                            ? locked(() -> processDeletions(all)) : CompletableFuture.completedFuture(null));
                }
                if (!state.present() && !acceptedHere.contains(epoch)
                        && clock.millis() - directive.value().ts() < START_GRACE_MILLIS) {
                    return CompletableFuture.completedFuture(null);
                }
                String owner = state.present() ? state.value().owner() : null;
                return ownerAlive(owner).thenCompose(alive -> {
                    if (work && alive && !owner.equals(brokerId.get())) {
                        return CompletableFuture.<Void>completedFuture(null); // its broker is running it
                    }
                    return locked(() -> (work ? run(epoch, directive.value().target(), directive.value().ts()) : CompletableFuture.<Void>completedFuture(null))
                            .thenCompose(v -> processDeletions()));
                });
            });
        });
    }

    /** Whether {@code broker} is live (its ephemeral progress record exists). */
    private CompletableFuture<Boolean> ownerAlive(String broker) {
        if (broker == null) {
            return CompletableFuture.completedFuture(false);
        }
        return registry.listBrokerProgress().thenApply(bs -> bs.stream().anyMatch(b -> b.broker().equals(broker)));
    }

    // ---- lock ----

    private CompletableFuture<Void> locked(Supplier<CompletableFuture<Void>> body) {
        String path = registry.paths().orchestratorLock();
        byte[] me = brokerId.get().getBytes(StandardCharsets.UTF_8);
        return registry.metadataStore().put(path, me, Optional.of(-1L), java.util.EnumSet.of(CreateOption.Ephemeral))
                .handle((stat, e) -> e == null)
                .thenCompose(acquired -> {
                    if (!acquired) {
                        return registry.metadataStore().get(path).thenCompose(cur -> {
                            // our own lock left behind by a pass whose unlock failed
                            if (cur.isPresent() && new String(cur.get().getValue(), StandardCharsets.UTF_8)
                                    .equals(brokerId.get())) {
                                return body.get();
                            }
                            return CompletableFuture.<Void>completedFuture(null);
                        });
                    }
                    return body.get().whenComplete((v, e) -> unlock(path));
                });
    }

    /** Deletes the lock if it is still this broker's (it may have expired with our session and been retaken). */
    private void unlock(String path) {
        registry.metadataStore().get(path).thenCompose(cur -> cur.isPresent()
                        && new String(cur.get().getValue(), StandardCharsets.UTF_8).equals(brokerId.get())
                        ? registry.metadataStore().delete(path, Optional.of(cur.get().getStat().getVersion()))
                        : CompletableFuture.completedFuture(null))
                .exceptionally(x -> null);
    }

    // ---- state ----

    private String statePath(long epoch) {
        return registry.paths().orchestrator(epoch);
    }

    public CompletableFuture<Versioned<MigrationState>> readState(long epoch) {
        return registry.read(statePath(epoch), MigrationState.class);
    }

    /** Latest switch's migration state, if any. */
    public CompletableFuture<Optional<MigrationState>> latest() {
        return registry.readDirective().thenCompose(d -> d.present()
                ? readState(d.value().epoch()).thenApply(v -> Optional.ofNullable(v.value()))
                : CompletableFuture.completedFuture(Optional.empty()));
    }

    /**
     * Writes {@code change} of the stored state unless it was rolled back or superseded meanwhile, or
     * another broker has taken the migration over (this one lost its lock: its metadata session expired
     * while it was cut off, say): completes with what is stored, so the caller sees when it must stop
     * ({@link #goOn}).
     */
    private CompletableFuture<MigrationState> persist(long epoch, java.util.function.UnaryOperator<MigrationState> change,
                                                      MigrationState initial) {
        String me = brokerId.get();
        return registry.update(statePath(epoch), MigrationState.class, cur -> {
            if (cur.isPresent() && (stopped(cur.get()) || !cur.get().owner().equals(me))) {
                return Optional.empty();
            }
            return Optional.of(change.apply(cur.orElse(initial)));
        });
    }

    /** Takes the migration over (under the lock): the stored owner becomes this broker. */
    private CompletableFuture<MigrationState> claim(long epoch, MigrationState initial) {
        String me = brokerId.get();
        return registry.update(statePath(epoch), MigrationState.class, cur -> cur.isPresent() && stopped(cur.get())
                ? Optional.empty() : Optional.of(cur.orElse(initial).withOwner(me, clock.millis())));
    }

    private static boolean stopped(MigrationState s) {
        return s.phase() == Phase.ROLLED_BACK || s.phase() == Phase.SUPERSEDED;
    }

    /** Whether this broker still runs the migration whose stored state is {@code s}. */
    private boolean goOn(MigrationState s) {
        return !closed && !s.phase().terminal() && s.owner().equals(brokerId.get());
    }

    // ---- the migration ----

    private record Item(long ledgerId, LedgerKind kind, String from, String referencedBy) {
    }

    private CompletableFuture<Void> run(long epoch, String target, long switchTs) {
        String me = brokerId.get();
        MigrationState initial = MigrationState.start(epoch, target, me, clock.millis());
        return claim(epoch, initial).thenCompose(s -> {
            if (s.phase().terminal()) {
                return CompletableFuture.completedFuture(null);
            }
            if (s.phase() == Phase.PENDING) {
                return cutoverComplete(epoch).thenCompose(complete -> {
                    if (!complete) {
                        log.info("switch epoch={} migration to bookie-cluster={} waits for every broker's cutover",
                                epoch, target);
                        return CompletableFuture.<Void>completedFuture(null);
                    }
                    return persist(epoch, x -> x.withPhase(Phase.BUILD, clock.millis()), initial)
                            .thenCompose(x -> goOn(x) ? build(epoch, target, initial)
                                    : CompletableFuture.<Void>completedFuture(null));
                });
            }
            return build(epoch, target, initial);
        });
    }

    private CompletableFuture<Boolean> cutoverComplete(long epoch) {
        return registry.listBrokerProgress().thenApply(bs -> !bs.isEmpty()
                && bs.stream().allMatch(b -> b.appliedEpoch() == epoch && b.done()));
    }

    /** BUILD then PROMOTE for the current plan; safe to re-run from the start at any point. */
    private CompletableFuture<Void> build(long epoch, String target, MigrationState initial) {
        long started = System.nanoTime();
        return RegistryView.read(registry).thenCompose(view -> plan(view, target).thenCompose(items -> {
            // a resumed run: what this migration already promoted counts as planned and promoted
            int prior = (int) view.relocations().values().stream()
                    .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).count();
            log.info("switch epoch={} migration BUILD on broker {}: {} ledger(s) to copy to bookie-cluster={}{}",
                    epoch, brokerId.get(), items.size(), target, prior > 0 ? " (" + prior + " promoted before)" : "");
            Tally tally = new Tally(items.size() + prior);
            tally.promoted.set(prior);
            return copyAll(epoch, target, items, tally, initial, 1).thenCompose(v -> {
                if (closed) {
                    // this broker is shutting down: keep the phase, another broker (or a restart) resumes
                    return persist(epoch, s -> tally.apply(s, clock.millis()), initial)
                            .thenApply(s -> s.withPhase(Phase.BUILD, clock.millis()));
                }
                double secs = Math.max(1e-3, (System.nanoTime() - started) / 1e9);
                log.info("switch epoch={} migration BUILD done: {} copied, {} already present, {} failed, {} skipped "
                        + "(open), {} collisions, {} bytes in {} s ({} ledgers/s, {} MB/s)", epoch, tally.copied.get(),
                        tally.present.get(), tally.failed.get(), tally.skipped.size(), tally.collisions.get(),
                        tally.bytes.get(), String.format("%.2f", secs),
                        String.format("%.1f", (tally.copied.get() + tally.present.get()) / secs),
                        String.format("%.2f", tally.bytes.get() / secs / 1e6));
                return persist(epoch, s -> tally.apply(s, clock.millis()).withPhase(Phase.PROMOTE, clock.millis()),
                        initial);
            }).thenCompose(s -> s.phase() != Phase.PROMOTE || !goOn(s) ? CompletableFuture.completedFuture(null)
                    : announce(epoch, view).thenCompose(v -> promote(epoch, target, tally, initial)));
        }));
    }

    /** Closed non-data ledgers whose home is not {@code target}, one item per ledger id. */
    private CompletableFuture<List<Item>> plan(RegistryView view, String target) {
        return inventory.references().thenApply(refs -> {
            Map<Long, Item> items = new LinkedHashMap<>();
            for (LedgerReference r : refs) {
                if (r.kind() == LedgerKind.DATA || r.kind() == LedgerKind.OTHER) {
                    continue;
                }
                Optional<String> home = view.home(r.ledgerId());
                if (home.isEmpty() || home.get().equals(target)) {
                    continue;
                }
                items.putIfAbsent(r.ledgerId(), new Item(r.ledgerId(), r.kind(), home.get(), r.referencedBy()));
            }
            return new ArrayList<>(items.values());
        });
    }

    /** Counts of one run, folded into the persisted state. */
    private static final class Tally {
        final int planned;
        final AtomicInteger copied = new AtomicInteger();
        final AtomicInteger present = new AtomicInteger();
        final AtomicInteger promoted = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger collisions = new AtomicInteger();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong unpersistedBytes = new AtomicLong();
        final List<LedgerIssue> issues = Collections.synchronizedList(new ArrayList<>());
        final List<Long> built = Collections.synchronizedList(new ArrayList<>());
        final List<Item> skipped = Collections.synchronizedList(new ArrayList<>());
        final Map<Long, Item> byId = new ConcurrentHashMap<>();
        volatile long lastPersist;

        Tally(int planned) {
            this.planned = planned;
        }

        MigrationState apply(MigrationState s, long now) {
            List<LedgerIssue> all;
            synchronized (issues) {
                all = new ArrayList<>(issues);
            }
            synchronized (skipped) {
                for (Item i : skipped) {
                    all.add(new LedgerIssue(i.ledgerId(), i.kind().name(), i.from(), "SKIPPED",
                            "still open on " + i.from() + " (" + i.referencedBy() + "); it is not copied while it may "
                                    + "be written: it moves when its topic rolls it over"));
                }
            }
            List<Long> b;
            synchronized (built) {
                b = new ArrayList<>(built);
            }
            long delta = unpersistedBytes.getAndSet(0);
            return s.withProgress(planned, copied.get(), present.get(), promoted.get(), failed.get(), skipped.size(),
                    collisions.get(), delta, all, b, now);
        }
    }

    private CompletableFuture<Void> copyAll(long epoch, String target, List<Item> items, Tally tally,
                                            MigrationState initial, int pass) {
        AtomicInteger next = new AtomicInteger();
        List<Item> stillOpen = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        int n = Math.min(config.concurrency(), Math.max(1, items.size()));
        for (int w = 0; w < n; w++) {
            workers.add(worker(epoch, target, items, next, tally, stillOpen, initial));
        }
        return CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            if (stillOpen.isEmpty() || pass >= OPEN_RETRY_PASSES || closed) {
                tally.skipped.addAll(stillOpen);
                return CompletableFuture.completedFuture(null);
            }
            // an open cursor ledger usually closes within seconds: the cutover rolls it over
            CompletableFuture<Void> later = new CompletableFuture<>();
            scheduler.schedule(() -> later.complete(null), OPEN_RETRY_DELAY_MILLIS, TimeUnit.MILLISECONDS);
            return later.thenCompose(x -> copyAll(epoch, target, new ArrayList<>(stillOpen), tally, initial, pass + 1));
        });
    }

    private CompletableFuture<Void> worker(long epoch, String target, List<Item> items, AtomicInteger next,
                                           Tally tally, List<Item> stillOpen, MigrationState initial) {
        int i = next.getAndIncrement();
        if (i >= items.size() || closed) {
            return CompletableFuture.completedFuture(null);
        }
        Item item = items.get(i);
        tally.byId.put(item.ledgerId(), item);
        return copier.copy(item.ledgerId(), item.from(), target, limiter::acquire)
                .exceptionally(e -> new LedgerCopier.Outcome(LedgerCopier.Result.FAILED, 0, String.valueOf(e)))
                .thenCompose(o -> {
                    record(epoch, target, item, o, tally, stillOpen);
                    long now = clock.millis();
                    if (now - tally.lastPersist >= PERSIST_INTERVAL_MILLIS) {
                        tally.lastPersist = now;
                        return persist(epoch, s -> tally.apply(s, now), initial).thenApply(this::goOn);
                    }
                    return CompletableFuture.completedFuture(true);
                })
                .thenCompose(go -> go ? worker(epoch, target, items, next, tally, stillOpen, initial)
                        : CompletableFuture.completedFuture(null));
    }

    private void record(long epoch, String target, Item item, LedgerCopier.Outcome o, Tally tally, List<Item> stillOpen) {
        switch (o.result()) {
            case COPIED -> {
                tally.copied.incrementAndGet();
                tally.bytes.addAndGet(o.bytes());
                tally.unpersistedBytes.addAndGet(o.bytes());
                tally.built.add(item.ledgerId());
                metrics.ledgerCopied(item.from(), target, o.bytes());
            }
            case ALREADY_PRESENT -> {
                tally.present.incrementAndGet();
                tally.built.add(item.ledgerId());
            }
            case NOT_CLOSED -> stillOpen.add(item);
            case SOURCE_MISSING -> log.info("switch epoch={} ledger={} bookie-cluster={} gone before it was copied "
                    + "(deleted meanwhile); nothing to move", epoch, item.ledgerId(), item.from());
            case COLLISION -> {
                tally.collisions.incrementAndGet();
                metrics.collision(target);
                tally.issues.add(new LedgerIssue(item.ledgerId(), item.kind().name(), item.from(), "COLLISION",
                        o.detail()));
                log.warn("switch epoch={} ledger={} COLLISION: bookie-cluster={} already holds a different ledger "
                        + "with this id; the ledger stays home on {}: {}", epoch, item.ledgerId(), target,
                        item.from(), o.detail());
            }
            case FAILED -> {
                tally.failed.incrementAndGet();
                metrics.verificationFailed(target);
                tally.issues.add(new LedgerIssue(item.ledgerId(), item.kind().name(), item.from(), "FAILED",
                        o.detail()));
                log.warn("switch epoch={} ledger={} copy from bookie-cluster={} to {} failed; it stays home on {}: {}",
                        epoch, item.ledgerId(), item.from(), target, item.from(), o.detail());
            }
        }
    }

    /**
     * Every PROMOTE run starts with an epoch that lists nothing, so that every broker re-reads the whole
     * table once: an interrupted run (this switch's or an earlier one's) may have stopped between its
     * compare-and-sets and the bump that lists them, and brokers otherwise re-read only what an epoch lists.
     */
    private CompletableFuture<Void> announce(long epoch, RegistryView view) {
        if (view.relocations().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return registry.bumpRelocationEpoch(clock.millis(), null).thenCompose(re -> {
            log.info("switch epoch={} PROMOTE starts: brokers re-read the relocation table ({} relocation(s)), "
                    + "relocation epoch={}", epoch, view.relocations().size(), re);
            return awaitApplied(epoch, re, System.nanoTime() + applyWaitNanos);
        });
    }

    private CompletableFuture<Void> promote(long epoch, String target, Tally tally, MigrationState initial) {
        List<Long> ids;
        synchronized (tally.built) {
            ids = new ArrayList<>(tally.built);
        }
        Collections.sort(ids);
        return promoteBatches(epoch, target, ids, 0, tally, initial).thenCompose(v -> persist(epoch, s -> {
            MigrationState t = tally.apply(s, clock.millis());
            if (closed) {
                return t; // interrupted: the phase stays PROMOTE until a resumed run finishes it
            }
            boolean clean = tally.failed.get() == 0 && tally.collisions.get() == 0 && tally.skipped.isEmpty();
            return t.withPhase(clean ? Phase.DONE : Phase.DONE_WITH_FAILURES, clock.millis());
        }, initial)).thenAccept(s -> log.info("switch epoch={} migration to bookie-cluster={} {}: {} promoted, {} failed, "
                + "{} skipped, {} collisions", epoch, target, s.phase(), s.promoted(), s.failed(), s.skipped(),
                s.collisions()));
    }

    private CompletableFuture<Void> promoteBatches(long epoch, String target, List<Long> ids, int from, Tally tally,
                                                   MigrationState initial) {
        if (from >= ids.size() || closed) {
            return CompletableFuture.completedFuture(null);
        }
        List<Long> batch = ids.subList(from, Math.min(ids.size(), from + config.promoteBatchSize()));
        // stop if the switch was rolled back or superseded while we copied
        return readState(epoch).thenCompose(st -> registry.readDirective().thenCompose(d -> {
            if (st.present() && !st.value().owner().equals(brokerId.get())) {
                log.warn("switch epoch={} migration: broker {} has taken it over; this broker ({}) stops promoting",
                        epoch, st.value().owner(), brokerId.get());
                return CompletableFuture.completedFuture(false);
            }
            if ((st.present() && st.value().phase().terminal()) || (d.present() && d.value().epoch() != epoch)) {
                log.info("switch epoch={} migration stops before promoting: {}", epoch,
                        d.present() && d.value().epoch() != epoch ? "a newer switch was made" : st.value().phase());
                if (d.present() && d.value().epoch() != epoch) {
                    return persist(epoch, s -> s.withPhase(Phase.SUPERSEDED, clock.millis()), initial)
                            .thenApply(s -> false);
                }
                return CompletableFuture.completedFuture(false);
            }
            List<CompletableFuture<Boolean>> each = new ArrayList<>();
            for (long id : batch) {
                Item item = tally.byId.get(id);
                Relocation r = new Relocation(Relocation.FORMAT_VERSION, id, target, item.from(), item.kind().name(),
                        epoch, clock.millis());
                each.add(registry.write(registry.paths().relocation(id), r, -1L).handle((v, e) -> {
                    if (e == null) {
                        return true;
                    }
                    if (RegistryStore.isVersionConflict(e)) {
                        return null; // exists: checked below
                    }
                    throw new java.util.concurrent.CompletionException(e);
                }).thenCompose(ok -> ok != null ? CompletableFuture.completedFuture(ok)
                        : registry.read(registry.paths().relocation(id), Relocation.class)
                        .thenApply(cur -> cur.present() && cur.value().home().equals(target))));
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                int ok = (int) each.stream().filter(CompletableFuture::join).count();
                tally.promoted.addAndGet(ok);
                metrics.promoted(target, ok);
                return registry.bumpRelocationEpoch(clock.millis(), batch).thenApply(re -> {
                    log.info("switch epoch={} promoted {} ledger(s) to bookie-cluster={}, relocation epoch={}", epoch,
                            ok, target, re);
                    return re;
                });
            }).thenCompose(re -> persist(epoch, s -> tally.apply(s, clock.millis()), initial)
                    .thenCompose(s -> !goOn(s) ? CompletableFuture.completedFuture(false)
                            : awaitApplied(epoch, re, System.nanoTime() + applyWaitNanos).thenApply(x -> true)));
        })).thenCompose(go -> go ? promoteBatches(epoch, target, ids, from + batch.size(), tally, initial)
                : CompletableFuture.completedFuture(null));
    }

    /**
     * Waits until every live broker routes with relocation epoch {@code re}, so that no broker falls more
     * than one batch behind the table; gives up waiting at {@code deadline} (a broker that is live but
     * stuck only slows PROMOTE down, and cleanup deletes nothing until it has caught up anyway).
     */
    private CompletableFuture<Void> awaitApplied(long epoch, long re, long deadlineNanos) {
        if (closed) {
            return CompletableFuture.completedFuture(null);
        }
        return registry.listRelocationApplied().thenCompose(applied -> {
            List<String> behind = applied.entrySet().stream().filter(e -> e.getValue() < re).map(Map.Entry::getKey)
                    .sorted().toList();
            if (behind.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                log.warn("switch epoch={} PROMOTE goes on although broker(s) {} have not applied relocation epoch={} "
                        + "within {} s; nothing is deleted until they have", epoch, behind, re,
                        TimeUnit.NANOSECONDS.toSeconds(applyWaitNanos));
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<Void> later = new CompletableFuture<>();
            scheduler.schedule(() -> later.complete(null), APPLY_POLL_MILLIS, TimeUnit.MILLISECONDS);
            return later.thenCompose(v -> awaitApplied(epoch, re, deadlineNanos));
        });
    }

    // ---- deletions scheduled by a rollback ----

    private CompletableFuture<List<MigrationState>> states() {
        String root = registry.paths().orchestrators();
        return registry.metadataStore().getChildren(root).thenCompose(names -> {
                    List<CompletableFuture<Versioned<MigrationState>>> reads = new ArrayList<>();
                    for (String n : names) {
                        reads.add(registry.read(root + "/" + n, MigrationState.class));
                    }
                    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v ->
                            reads.stream().map(CompletableFuture::join).filter(Versioned::present)
                                    .map(Versioned::value).toList());
                });
    }

    /**
     * Deletes the copies a rollback left on the rolled-back target, once every live broker routes with a
     * relocation epoch in which they are no longer home. A promotion that raced with the rollback is
     * flipped back here first.
     */
    private CompletableFuture<Void> processDeletions() {
        return states().thenCompose(this::processDeletions);
    }

    private CompletableFuture<Void> processDeletions(List<MigrationState> all) {
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (MigrationState s : all) {
            if (s.phase() == Phase.ROLLED_BACK && !s.pendingDeletions().isEmpty()) {
                chain = chain.thenCompose(v -> deleteCopies(s));
            }
        }
        return chain;
    }

    private CompletableFuture<Void> deleteCopies(MigrationState s) {
        return RegistryView.read(registry).thenCompose(view -> {
            List<Long> straggling = view.relocations().values().stream()
                    .filter(r -> r.switchEpoch() == s.switchEpoch() && r.home().equals(s.target()))
                    .map(Relocation::ledgerId).toList();
            if (!straggling.isEmpty() || s.deleteAfterRelocationEpoch() == FLIP_NOT_ANNOUNCED) {
                // promotions that raced with the rollback, or a rollback interrupted before it announced its
                // flip (its epoch is still the placeholder): announce every copy's id, so brokers re-read them
                java.util.Set<Long> ids = new java.util.TreeSet<>(s.pendingDeletions());
                ids.addAll(straggling);
                return unrelocate(straggling, List.copyOf(ids)).thenCompose(re -> persistDeletions(s, s.pendingDeletions(), re));
            }
            return registry.listRelocationApplied().thenCompose(applied -> {
                if (applied.isEmpty() || applied.values().stream().anyMatch(e -> e < s.deleteAfterRelocationEpoch())) {
                    return CompletableFuture.completedFuture(null); // a broker may still read the copies
                }
                List<CompletableFuture<Long>> dels = new ArrayList<>();
                for (long id : s.pendingDeletions()) {
                    dels.add(copier.delete(id, s.target()).thenApply(v -> id).exceptionally(e -> {
                        log.warn("ledger={} bookie-cluster={}: cannot delete rolled-back copy yet: {}", id, s.target(),
                                e.toString());
                        return null;
                    }));
                }
                return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                    List<Long> remaining = new ArrayList<>(s.pendingDeletions());
                    int deleted = 0;
                    for (var d : dels) {
                        if (d.join() != null) {
                            remaining.remove(d.join());
                            deleted++;
                        }
                    }
                    metrics.deleted(s.target(), deleted);
                    log.info("switch epoch={} rollback: deleted {} copy/copies from bookie-cluster={}, {} left", 
                            s.switchEpoch(), deleted, s.target(), remaining.size());
                    return persistDeletions(s, remaining, s.deleteAfterRelocationEpoch());
                });
            });
        });
    }

    private CompletableFuture<Void> persistDeletions(MigrationState s, List<Long> remaining, long afterEpoch) {
        return registry.update(statePath(s.switchEpoch()), MigrationState.class, cur -> cur.map(c ->
                c.withDeletions(remaining, c.deleteAfterRelocationEpoch() == FLIP_NOT_ANNOUNCED ? afterEpoch
                        : Math.max(afterEpoch, c.deleteAfterRelocationEpoch()), clock.millis())))
                .thenApply(x -> null);
    }

    /** Removes relocations (reads go back to the originals) and announces it; completes with the new epoch. */
    CompletableFuture<Long> unrelocate(List<Long> ids) {
        return unrelocate(ids, ids);
    }

    /** Removes the relocations of {@code ids} and announces {@code announced} (a superset) as changed. */
    private CompletableFuture<Long> unrelocate(List<Long> ids, List<Long> announced) {
        List<CompletableFuture<Void>> dels = new ArrayList<>();
        for (long id : ids) {
            dels.add(registry.metadataStore().delete(registry.paths().relocation(id), Optional.empty())
                    .exceptionally(e -> null));
        }
        return CompletableFuture.allOf(dels.toArray(CompletableFuture[]::new))
                .thenCompose(v -> registry.bumpRelocationEpoch(clock.millis(), announced));
    }

    /**
     * Rollback support: marks switch {@code epoch}'s migration rolled back (a running BUILD or PROMOTE on
     * any broker stops at its next step), flips its promotions back and schedules its copies for
     * deletion once every broker has applied the flip.
     */
    public CompletableFuture<MigrationState> rollBack(long epoch, String target) {
        return RegistryView.read(registry).thenCompose(view -> {
            List<Long> promoted = view.relocations().values().stream()
                    .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).map(Relocation::ledgerId).toList();
            MigrationState none = MigrationState.start(epoch, target, brokerId.get(), clock.millis());
            return registry.update(statePath(epoch), MigrationState.class, cur -> {
                MigrationState s = cur.orElse(none);
                java.util.Set<Long> copies = new java.util.TreeSet<>(s.built());
                copies.addAll(promoted);
                return Optional.of(s.rolledBack(new ArrayList<>(copies), FLIP_NOT_ANNOUNCED, clock.millis()));
            }).thenCompose(s -> unrelocate(promoted).thenCompose(re -> {
                metrics.rolledBack(target);
                log.info("switch epoch={} rolled back: {} promotion(s) flipped back (relocation epoch={}), {} copy/copies "
                        + "on bookie-cluster={} to delete once every broker has applied it", epoch, promoted.size(), re,
                        s.pendingDeletions().size(), target);
                // the placeholder epoch set above is replaced by the real one (not a max)
                return registry.update(statePath(epoch), MigrationState.class, cur -> cur.map(c ->
                        c.withDeletions(c.pendingDeletions(), re, clock.millis())));
            }));
        });
    }

    /**
     * Runs switch {@code epoch}'s finished migration again on this broker (after the operator fixed what
     * made ledgers fail, collide or stay open): it re-plans from the inventory, so finished copies count
     * as present and only what is still on an old cluster is copied and promoted. Refused (409) while it
     * runs, and when the switch was rolled back or superseded.
     */
    public CompletableFuture<MigrationState> retry(long epoch) {
        String me = brokerId.get();
        return readState(epoch).thenCompose(cur -> {
            if (!cur.present()) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " has not started yet; "
                        + "it starts by itself once every broker has finished its cutover");
            }
            MigrationState s = cur.value();
            if (s.phase() != Phase.DONE && s.phase() != Phase.DONE_WITH_FAILURES) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " is " + s.phase()
                        + (s.phase().terminal() ? "" : " on broker " + s.owner()) + "; only a finished migration "
                        + "(DONE or DONE_WITH_FAILURES) can be run again");
            }
            return registry.update(statePath(epoch), MigrationState.class, c -> c.filter(x -> x.phase() == s.phase())
                    .map(x -> x.withOwner(me, clock.millis()).withPhase(Phase.BUILD, clock.millis())));
        }).thenApply(s -> {
            if (s.phase() != Phase.BUILD || !s.owner().equals(me)) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " changed meanwhile ("
                        + s.phase() + " on broker " + s.owner() + ")");
            }
            log.info("switch epoch={} migration to bookie-cluster={} runs again on broker {} (operator request)",
                    epoch, s.target(), me);
            scheduler.execute(this::tick);
            return s;
        });
    }

    /** Cleanup deleted {@code n} originals after switch {@code epoch}: its rollback is no longer possible. */
    public CompletableFuture<Void> originalsDeleted(long epoch, int n) {
        return registry.update(statePath(epoch), MigrationState.class, cur -> cur.map(c ->
                c.withOriginalsDeleted(n, clock.millis()))).thenApply(x -> null);
    }

    @Override
    public void close() {
        closed = true;
        ScheduledFuture<?> t = ticker;
        if (t != null) {
            t.cancel(false);
        }
    }
}
