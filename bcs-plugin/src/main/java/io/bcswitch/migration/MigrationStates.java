package io.bcswitch.migration;

import io.bcswitch.migration.MigrationOrchestrator.Seen;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stored migration state of each switch ({@code orchestrator/<epoch>}): its reads, the writes that check the
 * stored owner and phase first (so a broker that lost the migration stops at its next step), and what this broker
 * last saw of the latest switch, which metrics read instead of the metadata store.
 */
final class MigrationStates {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);
    /** The phases of a migration that is still under way: a newer switch ends it (SUPERSEDED). */
    private static final Set<Phase> RUNNING = Set.of(Phase.PENDING, Phase.BUILD, Phase.PROMOTE);
    /** {@link #await} reads the state this often: tests and tools wait for phases that take seconds. */
    static final long AWAIT_POLL_MILLIS = 100;

    private final RegistryStore registry;
    private final Clock clock;
    private final Supplier<String> brokerId;
    private final DriverTimer timer;
    private volatile Seen seen;

    MigrationStates(RegistryStore registry, Clock clock, Supplier<String> brokerId, DriverTimer timer) {
        this.registry = registry;
        this.clock = clock;
        this.brokerId = brokerId;
        this.timer = timer;
    }

    String path(long epoch) {
        return registry.paths().orchestrator(epoch);
    }

    CompletableFuture<Versioned<MigrationState>> read(long epoch) {
        return registry.read(path(epoch), MigrationState.class);
    }

    CompletableFuture<List<MigrationState>> all() {
        return registry.listMigrationStates();
    }

    /** What this broker last saw of the latest switch and its migration; empty before its first pass. */
    Optional<Seen> lastSeen() {
        return Optional.ofNullable(seen);
    }

    /** A pass read the latest switch {@code directive} and its migration's {@code state} (null: not started). */
    void sawLatest(SwitchDirective directive, MigrationState state) {
        seen = new Seen(directive, state);
    }

    /** {@code s} was just written or read by this broker's run: what it last saw, if it is of the same switch. */
    private MigrationState saw(MigrationState s) {
        Seen now = seen;
        if (s != null && now != null && now.directive().epoch() == s.switchEpoch()) {
            seen = new Seen(now.directive(), s);
        }
        return s;
    }

    /** Latest switch's migration state, if any. */
    CompletableFuture<Optional<MigrationState>> latest() {
        return registry.readDirective().thenCompose(d -> d.present()
                ? read(d.value().epoch()).thenApply(v -> Optional.ofNullable(v.value()))
                : CompletableFuture.completedFuture(Optional.empty()));
    }

    /** Switch {@code epoch}'s stored state once {@code condition} holds for it, polled (whoever writes it). */
    CompletableFuture<MigrationState> await(long epoch, Predicate<MigrationState> condition) {
        return read(epoch).thenCompose(s -> s.present() && condition.test(s.value())
                ? CompletableFuture.completedFuture(s.value())
                : timer.closed() ? CompletableFuture.failedFuture(new IllegalStateException("closed"))
                : timer.delay(AWAIT_POLL_MILLIS).thenCompose(v -> await(epoch, condition)));
    }

    /**
     * Writes {@code change} of the stored state for the run holding {@code token}, unless it must stop (rolled back,
     * superseded, or another run has taken the migration over: its broker lost its lock, its metadata session expired
     * while it was cut off or paused): the token is checked in the same version-checked write. Completes with what is
     * stored, so the caller sees when it must stop ({@link #goOn}).
     */
    CompletableFuture<MigrationState> persist(long epoch, long token, UnaryOperator<MigrationState> change) {
        String mine = brokerId.get();
        return registry.update(path(epoch), MigrationState.class, cur -> {
            if (cur.isEmpty() || cur.get().phase().stopsRuns() || !cur.get().owner().equals(mine)
                    || cur.get().runToken() != token) {
                return Optional.empty();
            }
            return Optional.of(change.apply(cur.get()));
        }).thenApply(this::saw);
    }

    /**
     * The last count of a run whose migration a newer switch ended while it ran (SUPERSEDED), written by the run that
     * ran it (its broker and its token) so that the state keeps what the run did up to its stop; the phase stays.
     * Completes with what is stored.
     */
    CompletableFuture<MigrationState> recordSuperseded(long epoch, long token, UnaryOperator<MigrationState> change) {
        String mine = brokerId.get();
        return registry.update(path(epoch), MigrationState.class, cur -> cur
                .filter(s -> s.phase() == Phase.SUPERSEDED && s.owner().equals(mine) && s.runToken() == token)
                .map(change));
    }

    /** Whether the run holding {@code token} on this broker still runs the migration whose stored state is {@code s}. */
    boolean goOn(MigrationState s, long token) {
        return !timer.closed() && !s.phase().terminal() && !s.phase().stopsRuns() && s.owner().equals(brokerId.get())
                && s.runToken() == token;
    }

    /**
     * Whether the run holding {@code token} on this broker still runs switch {@code epoch}'s migration, which is still
     * the latest switch's.
     */
    CompletableFuture<Boolean> stillMine(long epoch, long token) {
        return read(epoch).thenCompose(st -> registry.readDirective().thenCompose(d -> {
            if (st.present() && (!st.value().owner().equals(brokerId.get()) || st.value().runToken() != token)) {
                log.warn("switch epoch={} migration: owner={} runToken={} has taken it over; this run (broker={} "
                        + "token={}) stops promoting", epoch, st.value().owner(), st.value().runToken(),
                        brokerId.get(), token);
                return CompletableFuture.completedFuture(false);
            }
            if (st.present() && (st.value().phase().terminal() || st.value().phase().stopsRuns())) {
                log.info("switch epoch={} migration stops before promoting: {}", epoch, st.value().phase());
                return CompletableFuture.completedFuture(false);
            }
            if (d.present() && d.value().epoch() != epoch) {
                log.info("switch epoch={} migration stops before promoting: a newer switch was made", epoch);
                return supersede(epoch, d.value().epoch()).thenApply(s -> false);
            }
            return CompletableFuture.completedFuture(true);
        }));
    }

    /**
     * Switch {@code epoch}'s migration, if it has not ended, ends SUPERSEDED by switch {@code by}: one version-checked
     * move that any broker may make without the lock (a run that still works on it sees the phase at its next look
     * and stops). Its counters and issues stay as they are: what it had done. Completes with what is stored.
     */
    CompletableFuture<MigrationState> supersede(long epoch, long by) {
        AtomicReference<Phase> was = new AtomicReference<>();
        return registry.update(path(epoch), MigrationState.class, cur -> {
            was.set(null); // the update may be tried again on a newer version: only the write that lands counts
            return cur.filter(s -> RUNNING.contains(s.phase())).map(s -> {
                was.set(s.phase());
                return s.moveTo(Phase.SUPERSEDED, clock.millis());
            });
        }).thenApply(s -> {
            if (was.get() != null) {
                log.info("switch epoch={} migration to bookie-cluster={} SUPERSEDED by switch epoch={} (it was in {}): "
                        + "{} copied, {} already present, {} promoted, {} failed", epoch, s.target(), by, was.get(),
                        s.copied(), s.alreadyPresent(), s.promoted(), s.failed());
            }
            return saw(s);
        });
    }

    /**
     * Ends every migration older than switch {@code current} that has not ended (see {@link #supersede}); completes
     * with every stored state as it is afterwards. One that cannot be moved now (a failed write) is left for the next
     * pass and holds up none of the others.
     */
    CompletableFuture<List<MigrationState>> supersedeOlder(long current) {
        return all().thenCompose(all -> {
            List<CompletableFuture<MigrationState>> each = new ArrayList<>();
            for (MigrationState s : all) {
                each.add(s.switchEpoch() < current && RUNNING.contains(s.phase())
                        ? supersede(s.switchEpoch(), current).exceptionally(e -> {
                            log.warn("switch epoch={} migration: cannot mark it SUPERSEDED yet (the next pass does): {}",
                                    s.switchEpoch(), e.toString());
                            return s;
                        })
                        : CompletableFuture.completedFuture(s));
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
                    .thenApply(v -> each.stream().map(CompletableFuture::join).toList());
        });
    }

    /**
     * Moves switch {@code epoch}'s stored migration from one of {@code from} to {@code to} (a move {@link Phase}
     * allows; anything else is a bug and fails), applying {@code and} too; completes with what is stored, which
     * the caller checks (another writer may have moved it first).
     */
    CompletableFuture<MigrationState> transition(long epoch, Set<Phase> from, Phase to,
                                                 UnaryOperator<MigrationState> and) {
        return registry.update(path(epoch), MigrationState.class, cur -> cur
                .filter(s -> from.contains(s.phase()))
                .map(s -> and.apply(s.moveTo(to, clock.millis())))).thenApply(this::saw);
    }

    /** A move from {@code from} to {@code to} by the run holding {@code token}: only while it owns the migration. */
    CompletableFuture<MigrationState> transition(long epoch, long token, Phase from, Phase to) {
        return persist(epoch, token, s -> s.phase() == from ? s.moveTo(to, clock.millis()) : s);
    }

    /**
     * Takes switch {@code epoch}'s migration over for a new run on this broker, unless it stopped or ended; starts it
     * (PENDING) when it has no state yet. The run holds the next token: every write of an earlier run (another
     * broker's, or this one's) is refused from now on. Completes with what is stored.
     */
    CompletableFuture<MigrationState> takeOver(long epoch, String target) {
        MigrationState initial = MigrationState.start(epoch, target, brokerId.get(), clock.millis());
        return registry.update(path(epoch), MigrationState.class, cur -> cur.isPresent()
                && (cur.get().phase().stopsRuns() || cur.get().phase().terminal()) ? Optional.empty()
                : Optional.of(cur.orElse(initial).edit().owner(brokerId.get()).nextRunToken()
                        .updatedAt(clock.millis()).build()));
    }

    /**
     * Cleanup is about to delete {@code n} originals after switch {@code epoch}: recorded first (its rollback is no
     * longer possible), in the same version-checked write that a rollback's intent makes, so that the two never
     * overlap. Fails (nothing is to be deleted) when the migration is not finished or is being rolled back.
     */
    CompletableFuture<Void> claimOriginalDeletions(long epoch, int n) {
        return registry.update(path(epoch), MigrationState.class, cur -> {
            MigrationState c = cur.orElseThrow(() -> RegistryException.conflict("no migration state for switch "
                    + "epoch " + epoch + "; originals are not deleted"));
            if (c.phase() != Phase.DONE && c.phase() != Phase.DONE_WITH_FAILURES) {
                throw RegistryException.conflict("the migration of switch epoch " + epoch + " is " + c.phase()
                        + "; originals are not deleted");
            }
            return Optional.of(c.edit().originalsDeleted(c.originalsDeleted() + n).updatedAt(clock.millis()).build());
        }).thenApply(x -> null);
    }
}
