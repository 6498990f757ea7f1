package io.bcswitch.migration;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One BUILD-then-PROMOTE run of the migration after switch {@code epoch} to {@code target}, on the broker that
 * holds the orchestrator lock. Safe to start again from the beginning at any point (a resumed run replans from the
 * inventory: copies found identical on the target count as present, promotions found done count as promoted).
 *
 * <p>It ends DONE only when every ledger it planned is home on the target, or has an issue saying why not.
 */
final class MigrationRun {
    private static final Logger log = LoggerFactory.getLogger(MigrationRun.class);
    private static final int OPEN_RETRY_PASSES = 3;
    private static final long OPEN_RETRY_DELAY_MILLIS = 2_000;
    private static final long PERSIST_INTERVAL_MILLIS = 1_000;

    private final MigrationOrchestrator o;
    private final long epoch;
    private final String target;

    /** Set once the run must stop (rolled back, superseded, taken over): copies in flight stop at their next batch. */
    private volatile boolean stopped;
    /** How often a run in BUILD re-reads its state, so that a long copy stops within about this long. */
    private static final long WATCH_MILLIS = 1_000;
    /** Lengths learnt at once for the bytes-remaining figure: few, the copies read the same metadata. */
    private static final int SIZE_CONCURRENCY = 4;
    /** A home whose metadata does not answer within this leaves that ledger's length out. */
    private static final long SIZE_TIMEOUT_SECONDS = 10;

    MigrationRun(MigrationOrchestrator orchestrator, long epoch, String target) {
        this.o = orchestrator;
        this.epoch = epoch;
        this.target = target;
    }

    /**
     * One ledger to move.
     *
     * @param from       its home when planned
     * @param alternates other clusters that held the same closed ledger before it was relocated to its home (its
     *                   previous home, its original), read from when the home cannot be (its bookies died)
     */
    private record Item(long ledgerId, LedgerKind kind, String from, String referencedBy, List<String> alternates) {
    }

    /** Counts of one run, folded into the persisted state. */
    private static final class Tally {
        final int planned;
        final AtomicInteger copied = new AtomicInteger();
        final AtomicInteger present = new AtomicInteger();
        final AtomicInteger promoted = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger collisions = new AtomicInteger();
        final AtomicLong unpersistedBytes = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final Map<Long, LedgerIssue> issues = new ConcurrentHashMap<>();
        /** every copy this migration made or found, in order: the ones of earlier runs first */
        final Set<Long> copies;
        final List<Long> toPromote = Collections.synchronizedList(new ArrayList<>());
        final Set<Long> gone = ConcurrentHashMap.newKeySet();
        final List<Item> skipped = Collections.synchronizedList(new ArrayList<>());
        final Map<Long, Item> byId = new ConcurrentHashMap<>();
        /** compacted topics whose ledger in use could not be learnt, with the home of the one stored */
        final Map<LedgerInventory.Unknown, String> unknown = new ConcurrentHashMap<>();
        volatile int copiesPersisted;
        volatile long lastPersist;
        /** lengths of planned ledgers not copied (or otherwise settled) yet, as far as they are known */
        final Map<Long, Long> lengthsLeft = new ConcurrentHashMap<>();
        final Set<Long> settled = ConcurrentHashMap.newKeySet();

        /** A planned ledger's length, learnt while the run copies (it may be settled already). */
        void sized(long ledgerId, long length) {
            if (!settled.contains(ledgerId)) {
                lengthsLeft.put(ledgerId, length);
                if (settled.contains(ledgerId)) {
                    lengthsLeft.remove(ledgerId); // settled meanwhile
                }
            }
        }

        /** A planned ledger that is not waited for any more: copied, found present, gone, failed, collided. */
        void settled(long ledgerId) {
            settled.add(ledgerId);
            lengthsLeft.remove(ledgerId);
        }

        long bytesRemaining() {
            long sum = 0;
            for (long l : lengthsLeft.values()) {
                sum += l;
            }
            return sum;
        }

        Tally(int planned, List<Long> earlierCopies) {
            this.planned = planned;
            this.copies = Collections.synchronizedSet(new LinkedHashSet<>(earlierCopies));
            this.copiesPersisted = earlierCopies.size();
        }

        List<LedgerIssue> allIssues() {
            List<LedgerIssue> all = new ArrayList<>(issues.values());
            synchronized (skipped) {
                for (Item i : skipped) {
                    all.add(new LedgerIssue(i.ledgerId(), i.kind().name(), i.from(), "SKIPPED",
                            "still open on " + i.from() + " (" + i.referencedBy() + "); it is not copied while it may "
                                    + "be written: it moves when its topic rolls it over"));
                }
            }
            unknown.forEach((u, home) -> all.add(new LedgerIssue(u.storedLedger(), LedgerKind.COMPACTION.name(), home,
                    "INVENTORY_INCOMPLETE", u.referencedBy() + ": " + u.reason() + "; the compacted ledger in use may "
                    + "not have moved: run the migration again once the topic loads")));
            all.sort(java.util.Comparator.comparingLong(LedgerIssue::ledgerId));
            return all;
        }

        MigrationState apply(MigrationState s, long now) {
            List<LedgerIssue> all = allIssues();
            int notPromoted = (int) all.stream().filter(i -> i.result().equals("NOT_PROMOTED")).count();
            return s.edit().progress(planned, copied.get(), present.get(), promoted.get(), failed.get(),
                    skipped.size(), collisions.get(), notPromoted).addBytes(unpersistedBytes.getAndSet(0))
                    .bytesRemaining(s.phase() == Phase.BUILD ? bytesRemaining() : 0)
                    .issues(all).copies(copies.size()).updatedAt(now).build();
        }
    }

    /** BUILD (unless already past it) then PROMOTE; the state's phase says where the run starts. */
    CompletableFuture<Void> run(MigrationState initial) {
        long started = System.nanoTime();
        return RegistryView.read(o.registry()).thenCompose(view -> plan(view).thenCompose(plan ->
                o.registry().readCopies(epoch).thenCompose(chunks -> {
            List<Item> items = plan.items();
            List<Long> earlier = new ArrayList<>();
            chunks.values().forEach(earlier::addAll);
            // a resumed run: what this migration already promoted counts as planned and promoted
            int prior = (int) view.relocations().values().stream()
                    .filter(r -> r.switchEpoch() == epoch && r.home().equals(target)).count();
            log.info("switch epoch={} migration BUILD on broker {}: {} ledger(s) to copy to bookie-cluster={}{}",
                    epoch, o.me(), items.size(), target, prior > 0 ? " (" + prior + " promoted before)" : "");
            Tally tally = new Tally(items.size() + prior, earlier);
            tally.promoted.set(prior);
            for (LedgerInventory.Unknown u : plan.unknown()) {
                // what is known moves now; this topic's ledger in use waits for a run that can learn it (or is
                // found home on the target when the run ends)
                tally.unknown.put(u, view.home(u.storedLedger()).orElse("(none)"));
                log.warn("switch epoch={} migration to bookie-cluster={}: {}: {}; the compacted ledger its stored "
                        + "cursor names (ledger={}) is planned, the one in use may not be", epoch, target,
                        u.referencedBy(), u.reason(), u.storedLedger());
            }
            sizeUp(items, tally);
            CompletableFuture<Void> built = copyAll(items, tally, 1);
            watch(built);
            return built.thenCompose(v -> {
                if (o.closed()) {
                    // this broker is shutting down: keep the phase, another broker (or a restart) resumes
                    return persist(tally, s -> s);
                }
                double secs = Math.max(1e-3, (System.nanoTime() - started) / 1e9);
                log.info("switch epoch={} migration BUILD done: {} copied, {} already present, {} failed, {} skipped "
                        + "(open), {} collisions, {} bytes in {} s ({} ledgers/s, {} MB/s)", epoch, tally.copied.get(),
                        tally.present.get(), tally.failed.get(), tally.skipped.size(), tally.collisions.get(),
                        tally.bytes.get(), String.format("%.2f", secs),
                        String.format("%.1f", (tally.copied.get() + tally.present.get()) / secs),
                        String.format("%.2f", tally.bytes.get() / secs / 1e6));
                return persist(tally, s -> s.phase() == Phase.BUILD ? s.moveTo(Phase.PROMOTE, o.now()) : s);
            }).thenCompose(s -> s.phase() != Phase.PROMOTE || !o.goOn(s) ? CompletableFuture.completedFuture(null)
                    : o.announce(epoch, view).thenCompose(v -> promote(tally)));
        })));
    }

    /**
     * Learns the lengths of the planned ledgers from their homes' metadata, a few at a time and beside the copying
     * (never ahead of it: a home whose metadata does not answer must not hold up the copies), for the bytes the
     * run still has to copy ({@code bytesRemaining}, a metric). A length that cannot be learnt is left out.
     */
    private void sizeUp(List<Item> items, Tally tally) {
        java.util.Queue<Item> left = new java.util.concurrent.ConcurrentLinkedQueue<>(items);
        for (int i = 0; i < SIZE_CONCURRENCY; i++) {
            sizeNext(left, tally);
        }
    }

    private void sizeNext(java.util.Queue<Item> left, Tally tally) {
        Item item = left.poll();
        if (item == null || stopped || o.closed()) {
            return;
        }
        CompletableFuture<java.util.Optional<LedgerCopier.LedgerFacts>> facts;
        try {
            facts = o.copier().facts(item.ledgerId(), item.from());
        } catch (RuntimeException e) {
            facts = CompletableFuture.failedFuture(e);
        }
        facts.orTimeout(SIZE_TIMEOUT_SECONDS, TimeUnit.SECONDS).whenCompleteAsync((f, e) -> {
            if (e == null && f.isPresent()) {
                tally.sized(item.ledgerId(), f.get().length());
            }
            sizeNext(left, tally);
        }, o.scheduler());
    }

    /** What a run moves, and the parts of the inventory it could not learn. */
    private record Plan(List<Item> items, List<LedgerInventory.Unknown> unknown) {
    }

    /**
     * Closed non-data ledgers whose home is not the target, one item per ledger id. A part of the inventory that
     * cannot be learnt now (a compacted topic its owner cannot load) does not hold up the rest: the run moves what
     * is known and ends with an issue for that part.
     */
    private CompletableFuture<Plan> plan(RegistryView view) {
        return o.inventory().picture().thenApply(picture -> {
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
                    for (String c : java.util.Arrays.asList(rel.previousHome(), rel.from())) {
                        if (c != null && !c.equals(home.get()) && !c.equals(target) && !alternates.contains(c)) {
                            alternates.add(c);
                        }
                    }
                }
                items.putIfAbsent(r.ledgerId(), new Item(r.ledgerId(), r.kind(), home.get(), r.referencedBy(),
                        List.copyOf(alternates)));
            }
            return new Plan(new ArrayList<>(items.values()), picture.unknown());
        });
    }

    /** Stores the tally (and the copies made since the last store) unless the run must stop. */
    private CompletableFuture<MigrationState> persist(Tally tally, java.util.function.UnaryOperator<MigrationState> and) {
        List<Long> copies;
        synchronized (tally.copies) {
            copies = new ArrayList<>(tally.copies);
        }
        int from = tally.copiesPersisted;
        // the copy ids first: a rollback reads them to know what to delete
        return o.registry().writeCopies(epoch, copies, from).thenCompose(v -> {
            tally.copiesPersisted = copies.size();
            return o.persist(epoch, s -> and.apply(tally.apply(s, o.now())));
        });
    }

    private CompletableFuture<Void> copyAll(List<Item> items, Tally tally, int pass) {
        List<Item> stillOpen = Collections.synchronizedList(new ArrayList<>());
        // the concurrency is read again after every ledger: an operator's change applies to the copying under way
        return io.bcswitch.concurrent.ElasticWorkers.run(items, o::concurrency, item -> copyOne(item, tally,
                stillOpen)).thenCompose(v -> {
            if (stillOpen.isEmpty() || pass >= OPEN_RETRY_PASSES || o.closed() || stopped) {
                tally.skipped.addAll(stillOpen);
                return CompletableFuture.completedFuture(null);
            }
            // an open cursor ledger usually closes within seconds: the cutover rolls it over
            return o.delay(OPEN_RETRY_DELAY_MILLIS).thenCompose(x -> copyAll(new ArrayList<>(stillOpen), tally,
                    pass + 1));
        });
    }

    /** Copies one ledger; completes with whether the run goes on. */
    private CompletableFuture<Boolean> copyOne(Item item, Tally tally, List<Item> stillOpen) {
        if (o.closed() || stopped) {
            return CompletableFuture.completedFuture(false);
        }
        tally.byId.put(item.ledgerId(), item);
        return copy(item).thenCompose(out -> {
            record(item, out, tally, stillOpen);
            long now = o.now();
            if (now - tally.lastPersist >= PERSIST_INTERVAL_MILLIS) {
                tally.lastPersist = now;
                return persist(tally, s -> s).thenApply(o::goOn);
            }
            return CompletableFuture.completedFuture(true);
        });
    }

    /**
     * Copies {@code item} from its home; when that fails (the home's bookies do not answer, say), from its
     * alternates in turn, each of which held the same closed ledger the home copy was verified against. A ledger
     * that is open, missing at home or collides is not looked for elsewhere.
     */
    private CompletableFuture<LedgerCopier.Outcome> copy(Item item) {
        // a copy the stop cut short failed for that, not because its home is unreadable
        return copyFrom(item, item.from()).thenCompose(out -> out.result() == LedgerCopier.Result.FAILED
                && !item.alternates().isEmpty() && !stopped && !o.closed() ? fromAlternate(item, 0, out)
                : CompletableFuture.completedFuture(out));
    }

    private CompletableFuture<LedgerCopier.Outcome> fromAlternate(Item item, int i, LedgerCopier.Outcome atHome) {
        if (i >= item.alternates().size() || stopped || o.closed()) {
            return CompletableFuture.completedFuture(atHome);
        }
        String other = item.alternates().get(i);
        log.warn("switch epoch={} ledger={} cannot be copied from its home bookie-cluster={} ({}); copying the same "
                + "closed ledger from bookie-cluster={} instead", epoch, item.ledgerId(), item.from(),
                atHome.detail(), other);
        return copyFrom(item, other).thenCompose(out -> out.result() == LedgerCopier.Result.FAILED
                || out.result() == LedgerCopier.Result.SOURCE_MISSING ? fromAlternate(item, i + 1, atHome)
                : CompletableFuture.completedFuture(out));
    }

    /** While {@code until} runs, re-reads the state every {@link #WATCH_MILLIS}; stops the run when it must. */
    private void watch(CompletableFuture<Void> until) {
        o.delay(WATCH_MILLIS).thenCompose(v -> until.isDone() ? CompletableFuture.completedFuture(null)
                : o.readState(epoch).thenAccept(st -> {
                    if (o.closed() || (st.present() && !o.goOn(st.value()))) {
                        if (!stopped) {
                            log.info("switch epoch={} migration on broker {} stops its copies: {}", epoch, o.me(),
                                    st.present() ? st.value().phase() + " owned by " + st.value().owner() : "closing");
                        }
                        stopped = true;
                    } else {
                        watch(until);
                    }
                })).exceptionally(e -> {
                    if (!until.isDone()) {
                        watch(until);
                    }
                    return null;
                });
    }

    /** The rate limit, and the stop: a copy in flight fails at its next batch once the run must stop. */
    private CompletableFuture<Void> pace(long bytes) {
        if (stopped || o.closed()) {
            return CompletableFuture.failedFuture(new java.util.concurrent.CancellationException(
                    "the migration of switch epoch " + epoch + " stopped on this broker"));
        }
        return o.limiter().acquire(bytes);
    }

    private CompletableFuture<LedgerCopier.Outcome> copyFrom(Item item, String source) {
        return o.copier().copy(item.ledgerId(), source, target, this::pace)
                .exceptionally(e -> new LedgerCopier.Outcome(LedgerCopier.Result.FAILED, 0, String.valueOf(e)));
    }

    private void record(Item item, LedgerCopier.Outcome out, Tally tally, List<Item> stillOpen) {
        if (out.result() != LedgerCopier.Result.NOT_CLOSED) {
            tally.settled(item.ledgerId());
        }
        switch (out.result()) {
            case COPIED -> {
                tally.copied.incrementAndGet();
                tally.bytes.addAndGet(out.bytes());
                tally.unpersistedBytes.addAndGet(out.bytes());
                tally.copies.add(item.ledgerId());
                tally.toPromote.add(item.ledgerId());
                o.metrics().ledgerCopied(item.from(), target, out.bytes());
            }
            case ALREADY_PRESENT -> {
                tally.present.incrementAndGet();
                tally.copies.add(item.ledgerId());
                tally.toPromote.add(item.ledgerId());
            }
            case NOT_CLOSED -> stillOpen.add(item);
            case SOURCE_MISSING -> {
                tally.gone.add(item.ledgerId());
                log.info("switch epoch={} ledger={} bookie-cluster={} gone before it was copied (deleted meanwhile); "
                        + "nothing to move", epoch, item.ledgerId(), item.from());
            }
            case COLLISION -> {
                tally.collisions.incrementAndGet();
                o.metrics().collision(target);
                tally.issues.put(item.ledgerId(), new LedgerIssue(item.ledgerId(), item.kind().name(), item.from(),
                        "COLLISION", out.detail()));
                log.warn("switch epoch={} ledger={} COLLISION: bookie-cluster={} already holds a different ledger "
                        + "with this id; the ledger stays home on {}: {}", epoch, item.ledgerId(), target,
                        item.from(), out.detail());
            }
            case FAILED -> {
                tally.failed.incrementAndGet();
                o.metrics().verificationFailed(target);
                tally.issues.put(item.ledgerId(), new LedgerIssue(item.ledgerId(), item.kind().name(), item.from(),
                        "FAILED", out.detail()));
                log.warn("switch epoch={} ledger={} copy from bookie-cluster={} to {} failed; it stays home on {}: {}",
                        epoch, item.ledgerId(), item.from(), target, item.from(), out.detail());
            }
        }
    }

    private CompletableFuture<Void> promote(Tally tally) {
        List<Long> ids;
        synchronized (tally.toPromote) {
            ids = new ArrayList<>(tally.toPromote);
        }
        Collections.sort(ids);
        return promoteBatches(ids, 0, tally).thenCompose(v -> o.closed() ? persist(tally, s -> s)
                : discardCopiesOfDeleted().thenCompose(x -> verifyHomes(tally)).thenCompose(x -> persist(tally, s -> {
                    if (s.phase() != Phase.PROMOTE) {
                        return s;
                    }
                    boolean clean = tally.allIssues().isEmpty();
                    return s.moveTo(clean ? Phase.DONE : Phase.DONE_WITH_FAILURES, o.now());
                }))).thenAccept(s -> log.info("switch epoch={} migration to bookie-cluster={} {}: {} promoted, {} "
                        + "failed, {} skipped, {} collisions, {} not promoted", epoch, target, s.phase(), s.promoted(),
                s.failed(), s.skipped(), s.collisions(), s.notPromoted()));
    }

    /**
     * Deletes the copies on the target of ledgers Pulsar deleted while they were being moved, so that none is left
     * there unreferenced for good (the target is the active cluster, which cleanup never sweeps). Pulsar deletes a
     * ledger where it is home; until its copy is promoted that is the original, wherever the delete happens: before
     * the copy (an earlier, interrupted run may have made one already), between copy and promotion (it is then not
     * promoted), or while a broker still routes by the previous relocation table.
     *
     * <p>A copy is deleted only when all of this holds: it carries the migration's mark, the target is neither its
     * home nor the cluster that issued its id, and both its home and the cluster it was copied from answer that they
     * have no such ledger (a cluster that does not answer may be what the copy is for). Nothing routes to such a copy.
     */
    private CompletableFuture<Void> discardCopiesOfDeleted() {
        // every ledger on the target that it did not issue itself, and that is not home there, may be such a copy:
        // the run's own lists would miss one an interrupted run made but had not recorded yet
        return o.stillMine(epoch).thenCompose(mine -> !mine ? CompletableFuture.<Void>completedFuture(null)
                : RegistryView.read(o.registry()).thenCompose(view -> o.copier().list(target).thenCompose(ids -> {
                    List<Long> candidates = ids.stream().filter(id -> !view.home(id).map(target::equals).orElse(true)
                            && !view.ranges().owner(id).map(target::equals).orElse(false)).sorted().toList();
                    if (candidates.isEmpty()) {
                        return CompletableFuture.<Void>completedFuture(null);
                    }
                    return o.registry().readRelocations(candidates).thenApply(view::withFresh).thenCompose(fresh ->
                            io.bcswitch.concurrent.Windows.map(candidates, Math.max(1, o.concurrency()),
                                    id -> discardIfDeleted(id, fresh).exceptionally(e -> {
                                        log.warn("switch epoch={} ledger={} bookie-cluster={}: could not tell whether "
                                                + "its copy is left over from a deleted ledger; it stays: {}", epoch,
                                                id, target, e.toString());
                                        return false;
                                    })).thenAccept(deleted -> {
                                        long n = deleted.stream().filter(Boolean::booleanValue).count();
                                        if (n > 0) {
                                            log.info("switch epoch={} bookie-cluster={}: deleted {} copy/copies of "
                                                    + "ledgers Pulsar deleted before they were moved", epoch, target,
                                                    n);
                                        }
                                    }));
                })).exceptionally(e -> {
                    log.warn("switch epoch={} bookie-cluster={}: copies of ledgers deleted meanwhile not looked for "
                            + "(they stay until the next run): {}", epoch, target, e.toString());
                    return null;
                }));
    }

    private CompletableFuture<Boolean> discardIfDeleted(long id, RegistryView view) {
        Optional<String> home = view.home(id);
        if (home.isEmpty() || home.get().equals(target)
                || view.ranges().owner(id).map(target::equals).orElse(false)) {
            return CompletableFuture.completedFuture(false);
        }
        return o.copier().facts(id, target).thenCompose(copy -> {
            String copyOf = copy.map(LedgerCopier.LedgerFacts::copyOf).orElse(null);
            if (copyOf == null) {
                return CompletableFuture.completedFuture(false); // no copy (or not ours): nothing to do
            }
            return o.copier().facts(id, home.get()).thenCombine(o.copier().facts(id, copyOf),
                    (atHome, atSource) -> atHome.isEmpty() && atSource.isEmpty()).thenCompose(gone -> {
                        if (!gone) {
                            return CompletableFuture.completedFuture(false);
                        }
                        log.info("switch epoch={} ledger={} bookie-cluster={}: deleting its copy: Pulsar deleted "
                                + "the ledger (no longer on {}) before the copy became its home", epoch, id, target,
                                home.get().equals(copyOf) ? copyOf : home.get() + " nor on " + copyOf);
                        return o.copier().delete(id, target).thenApply(v -> true);
                    });
        });
    }

    /**
     * Every ledger this run planned must now be home on the target, have an issue, or be gone (deleted by Pulsar
     * meanwhile); anything else gets a NOT_PROMOTED issue, so the migration cannot end DONE with a ledger left
     * behind silently.
     */
    private CompletableFuture<Void> verifyHomes(Tally tally) {
        return RegistryView.read(o.registry()).thenCombine(o.registry().readRelocations(tally.byId.keySet()),
                RegistryView::withFresh).thenCompose(view -> o.inventory().picture().thenAccept(picture -> {
            Set<Long> referenced = new java.util.HashSet<>();
            picture.references().forEach(r -> referenced.add(r.ledgerId()));
            if (picture.complete()) {
                // a topic that could not be asked when the run planned can be now: done if every compacted ledger
                // it names is home on the target
                for (LedgerInventory.Unknown u : List.copyOf(tally.unknown.keySet())) {
                    boolean home = picture.references().stream().filter(r -> r.kind() == LedgerKind.COMPACTION
                            && r.referencedBy().startsWith(u.referencedBy() + "/")).allMatch(r ->
                            view.home(r.ledgerId()).map(target::equals).orElse(false));
                    if (home) {
                        tally.unknown.remove(u);
                        log.info("switch epoch={} {}: its compacted ledgers are home on bookie-cluster={} after all",
                                epoch, u.referencedBy(), target);
                    }
                }
            }
            for (Item item : tally.byId.values()) {
                long id = item.ledgerId();
                // on a partial picture, "no longer referenced" cannot be told from "not known now"
                boolean unreferenced = picture.complete() && !referenced.contains(id);
                if (tally.issues.containsKey(id) || tally.gone.contains(id) || unreferenced
                        || tally.skipped.stream().anyMatch(s -> s.ledgerId() == id)) {
                    continue;
                }
                String home = view.home(id).orElse("(none)");
                if (!home.equals(target)) {
                    tally.issues.put(id, new LedgerIssue(id, item.kind().name(), item.from(), "NOT_PROMOTED",
                            "home is still " + home + " (" + item.referencedBy() + "); run the migration again"));
                    log.warn("switch epoch={} ledger={} planned for bookie-cluster={} is still home on {}", epoch, id,
                            target, home);
                }
            }
        }));
    }

    private CompletableFuture<Void> promoteBatches(List<Long> ids, int from, Tally tally) {
        if (from >= ids.size() || o.closed()) {
            return CompletableFuture.completedFuture(null);
        }
        List<Long> batch = ids.subList(from, Math.min(ids.size(), from + o.config().promoteBatchSize()));
        // stop if the switch was rolled back or superseded, or another broker took over, while we copied
        return o.stillMine(epoch).thenCompose(mine -> !mine ? CompletableFuture.completedFuture(false)
                : o.cancelDeletions(target, batch)
                        .thenCompose(v -> promoteBatch(batch, tally))
                        .thenCompose(re -> persist(tally, s -> s).thenCompose(s -> !o.goOn(s)
                                ? CompletableFuture.completedFuture(false)
                                : o.awaitApplied(epoch, re).thenApply(x -> true))))
                .thenCompose(go -> go ? promoteBatches(ids, from + batch.size(), tally)
                        : CompletableFuture.completedFuture(null));
    }

    /**
     * Makes the target the home of every ledger of {@code batch} whose verified copy is still there and whose home is
     * still the cluster it was copied from; completes with the relocation epoch that announces it.
     */
    private CompletableFuture<Long> promoteBatch(List<Long> batch, Tally tally) {
        Map<Long, CompletableFuture<Boolean>> present = new LinkedHashMap<>();
        Map<Long, CompletableFuture<Boolean>> deleted = new LinkedHashMap<>();
        for (long id : batch) {
            // deletions run on this same driver, but the copy must still be there when it becomes the home
            present.put(id, o.copier().facts(id, target).thenApply(f -> f.isPresent() && f.get().closed())
                    .exceptionally(e -> false));
            // and the ledger must not have been deleted by Pulsar since it was copied (it deletes a ledger where it
            // is home): its copy would become the home of a ledger nothing has. Only a definite "no such ledger"
            // counts: a source that does not answer (its bookies dead) is what the copy is for
            Item item = tally.byId.get(id);
            deleted.put(id, item == null ? CompletableFuture.completedFuture(false)
                    : o.copier().facts(id, item.from()).thenApply(Optional::isEmpty).exceptionally(e -> false));
        }
        List<CompletableFuture<Boolean>> checks = new ArrayList<>(present.values());
        checks.addAll(deleted.values());
        return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new)).thenCompose(v ->
                o.registry().readRanges().thenCompose(ranges -> o.registry().updateRelocations(batch, (id, cur) -> {
                    Item item = tally.byId.get(id);
                    if (cur.isPresent() && cur.get().home().equals(target)) {
                        return cur; // promoted before (an earlier run, or another epoch)
                    }
                    String home = cur.map(Relocation::home).orElseGet(() -> ranges.flatMap(t -> t.owner(id))
                            .orElse(null));
                    if (!present.get(id).join() || item == null || !item.from().equals(home)
                            || deleted.get(id).join()) {
                        return cur; // checked below: an issue says why, or it is gone
                    }
                    String issuer = ranges.flatMap(t -> t.owner(id)).orElse(item.from());
                    return Optional.of(new Relocation(Relocation.FORMAT_VERSION, id, target, issuer,
                            item.kind().name(), epoch, o.now(), cur.map(Relocation::home).orElse(null),
                            cur.map(Relocation::switchEpoch).orElse(null)));
                })).thenCompose(stored -> {
                    int ok = 0;
                    for (long id : batch) {
                        Optional<Relocation> r = stored.get(id);
                        if (r.isPresent() && r.get().home().equals(target)) {
                            ok++;
                        } else if (deleted.get(id).join()) {
                            tally.gone.add(id);
                            log.info("switch epoch={} ledger={} was deleted on bookie-cluster={} after it was copied; "
                                    + "its copy on {} is not promoted", epoch, id,
                                    tally.byId.get(id).from(), target);
                        } else {
                            Item item = tally.byId.get(id);
                            String why = !present.get(id).join() ? "its copy on " + target + " disappeared before it "
                                    + "could be promoted" : "its home changed while it was copied (now "
                                    + r.map(Relocation::home).orElse("its original") + ")";
                            tally.issues.put(id, new LedgerIssue(id, item == null ? "UNKNOWN" : item.kind().name(),
                                    item == null ? null : item.from(), "NOT_PROMOTED", why));
                            log.warn("switch epoch={} ledger={} not promoted to bookie-cluster={}: {}", epoch, id,
                                    target, why);
                        }
                    }
                    tally.promoted.addAndGet(ok);
                    o.metrics().promoted(target, ok);
                    int promotedNow = ok;
                    return o.registry().bumpRelocationEpoch(o.now(), batch).thenApply(re -> {
                        log.info("switch epoch={} promoted {} ledger(s) to bookie-cluster={}, relocation epoch={}",
                                epoch, promotedNow, target, re);
                        return re;
                    });
                }));
    }
}
