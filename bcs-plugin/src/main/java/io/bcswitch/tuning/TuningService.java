package io.bcswitch.tuning;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.TuningOverrides;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Changing the pacing settings while the system runs: a change is stored in the metadata store (version-checked,
 * validated as broker.conf's values are) and every broker applies it within seconds, told by the store's change
 * notification, re-reading after a session change, and every resync interval as a safety net.
 */
public final class TuningService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TuningService.class);

    public static final String MIGRATION_BYTES_PER_SECOND = LiveTuning.MIGRATION_BYTES_PER_SECOND;
    public static final String MIGRATION_CONCURRENCY = LiveTuning.MIGRATION_CONCURRENCY;
    public static final String CUTOVER_TOPICS_PER_SECOND = LiveTuning.CUTOVER_TOPICS_PER_SECOND;
    public static final Set<String> KEYS = Set.of(MIGRATION_BYTES_PER_SECOND, MIGRATION_CONCURRENCY,
            CUTOVER_TOPICS_PER_SECOND);

    /**
     * A change: each non-null value is set; each key in {@code reset} goes back to broker.conf's value; anything
     * else stays as it is.
     */
    public record Change(Long migrationBytesPerSecond, Integer migrationConcurrency, Double cutoverTopicsPerSecond,
                         Set<String> reset) {
        public Change {
            reset = reset == null ? Set.of() : Set.copyOf(reset);
        }

        boolean isEmpty() {
            return migrationBytesPerSecond == null && migrationConcurrency == null && cutoverTopicsPerSecond == null
                    && reset.isEmpty();
        }
    }

    /** What {@code GET /tuning} answers: this broker's values now, its broker.conf's, and what is stored. */
    public record View(LiveTuning.Values effective, LiveTuning.Values brokerConf, TuningOverrides stored) {
    }

    private final RegistryStore registry;
    private final LiveTuning live;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final long resyncSeconds;
    private volatile ScheduledFuture<?> resync;
    private volatile boolean closed;

    public TuningService(RegistryStore registry, LiveTuning live, ScheduledExecutorService scheduler, Clock clock,
                         long resyncSeconds) {
        this.registry = registry;
        this.live = live;
        this.scheduler = scheduler;
        this.clock = clock;
        this.resyncSeconds = resyncSeconds;
    }

    /** Applies what is stored now and follows its changes from then on. */
    public CompletableFuture<Void> start() {
        String path = registry.paths().tuning();
        // the store's listeners cannot be removed: once closed they do nothing
        registry.onChange(path, this::reloadSoon);
        registry.onSessionChange(c -> {
            if (c == MetadataPort.SessionChange.RECONNECTED || c == MetadataPort.SessionChange.SESSION_REESTABLISHED) {
                reloadSoon();
            }
        });
        resync = scheduler.scheduleWithFixedDelay(this::reloadQuietly, resyncSeconds, resyncSeconds,
                TimeUnit.SECONDS);
        // a broker starts whatever is stored: one it cannot read leaves broker.conf's values (and says so)
        return reload().exceptionally(e -> {
            log.warn("cannot read the pacing settings at {}; using broker.conf's {} until they can be read: {}",
                    registry.paths().tuning(), live.effective(), Failures.unwrap(e).toString());
            return null;
        });
    }

    /** Re-reads on this service's thread, never on the metadata store's. */
    private void reloadSoon() {
        if (closed) {
            return;
        }
        try {
            scheduler.execute(this::reloadQuietly);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // shutting down
        }
    }

    private void reloadQuietly() {
        if (!closed) {
            reload().exceptionally(e -> {
                log.warn("cannot read the pacing settings at {} (keeping {}): {}", registry.paths().tuning(),
                        live.effective(), Failures.unwrap(e).toString());
                return null;
            });
        }
    }

    /** Reads what is stored and applies it here. */
    public CompletableFuture<Void> reload() {
        return registry.readTuning().thenAccept(v -> {
            List<String> changed = live.apply(v.value());
            if (!changed.isEmpty()) {
                log.info("pacing settings applied: {} (stored at {}: {})", String.join(", ", changed),
                        registry.paths().tuning(), v.present() ? v.value() : "nothing, broker.conf's values");
            }
        });
    }

    /** This broker's values now, its broker.conf's, and what is stored (read now). */
    public CompletableFuture<View> get() {
        return registry.readTuning().thenApply(v -> new View(live.effective(), live.brokerConf(),
                v.present() ? v.value() : TuningOverrides.NONE));
    }

    /**
     * Stores {@code change} (refused, with nothing written, when it is empty or a value is out of range) and
     * applies it on this broker at once; the others follow within seconds.
     */
    public CompletableFuture<View> set(Change change) {
        try {
            validate(change);
        } catch (RegistryException e) {
            return CompletableFuture.failedFuture(e);
        }
        return registry.update(registry.paths().tuning(), TuningOverrides.class, cur -> {
            TuningOverrides c = cur.orElse(TuningOverrides.NONE);
            return Optional.of(new TuningOverrides(TuningOverrides.FORMAT_VERSION,
                    pick(change.migrationBytesPerSecond(), change.reset(), MIGRATION_BYTES_PER_SECOND,
                            c.migrationBytesPerSecond()),
                    pick(change.migrationConcurrency(), change.reset(), MIGRATION_CONCURRENCY,
                            c.migrationConcurrency()),
                    pick(change.cutoverTopicsPerSecond(), change.reset(), CUTOVER_TOPICS_PER_SECOND,
                            c.cutoverTopicsPerSecond()),
                    clock.millis()));
        }).thenApply(stored -> {
            log.info("pacing settings changed by request: {}", stored);
            List<String> changed = live.apply(stored);
            if (!changed.isEmpty()) {
                log.info("pacing settings applied: {}", String.join(", ", changed));
            }
            return new View(live.effective(), live.brokerConf(), stored);
        });
    }

    private static <T> T pick(T set, Set<String> reset, String key, T current) {
        return set != null ? set : reset.contains(key) ? null : current;
    }

    /** The same bounds as broker.conf's keys. */
    static void validate(Change c) {
        if (c.isEmpty()) {
            throw RegistryException.invalid("nothing to change: give one of " + new java.util.TreeSet<>(KEYS)
                    + " (a value, or null for broker.conf's)");
        }
        for (String k : c.reset()) {
            if (!KEYS.contains(k)) {
                throw RegistryException.invalid("unknown setting '" + k + "'; settings: " + new java.util.TreeSet<>(KEYS));
            }
        }
        if (c.reset().contains(MIGRATION_BYTES_PER_SECOND) && c.migrationBytesPerSecond() != null
                || c.reset().contains(MIGRATION_CONCURRENCY) && c.migrationConcurrency() != null
                || c.reset().contains(CUTOVER_TOPICS_PER_SECOND) && c.cutoverTopicsPerSecond() != null) {
            throw RegistryException.invalid("a setting is either set or reset, not both");
        }
        for (String problem : new String[] {
                LiveTuning.problem(MIGRATION_BYTES_PER_SECOND, c.migrationBytesPerSecond()),
                LiveTuning.problem(MIGRATION_CONCURRENCY, c.migrationConcurrency()),
                c.cutoverTopicsPerSecond() != null && c.cutoverTopicsPerSecond().isNaN()
                        ? CUTOVER_TOPICS_PER_SECOND + " must be a number, not NaN"
                        : LiveTuning.problem(CUTOVER_TOPICS_PER_SECOND, c.cutoverTopicsPerSecond())}) {
            if (problem != null) {
                throw RegistryException.invalid(problem);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        ScheduledFuture<?> r = resync;
        if (r != null) {
            r.cancel(false);
        }
    }
}
