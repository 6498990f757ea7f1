package io.bcswitch.migration;

import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryLock;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ephemeral lock {@code <configPath>/orchestrator-lock}, held by the broker whose driver runs a pass: one pass
 * at a time across the brokers. Each acquisition names its broker and itself, so that a release never deletes a
 * lock that expired with this broker's session and was taken by another.
 */
final class OrchestratorLock {
    // MigrationOrchestrator's logger: the driver's messages keep the logger name that log settings and filters know
    private static final Logger log = LoggerFactory.getLogger(MigrationOrchestrator.class);
    /** A failed lock release is tried again this much later (a metadata store hiccup is usually over by then). */
    private static final long UNLOCK_RETRY_MILLIS = 1_000;
    /** A request waiting for another broker's pass asks for the lock this often (a pass's step takes longer). */
    private static final long LOCK_POLL_MILLIS = 200;

    private final RegistryLock lock;
    private final Supplier<String> brokerId;
    private final DriverTimer timer;
    private final AtomicLong lockAcquisitions = new AtomicLong();
    /** Tells this process's acquisitions from those of an earlier run of the same broker. */
    private final String lockNonce = Long.toHexString(new Random().nextLong());

    OrchestratorLock(RegistryLock lock, Supplier<String> brokerId, DriverTimer timer) {
        this.lock = lock;
        this.brokerId = brokerId;
        this.timer = timer;
    }

    CompletableFuture<Void> locked(Supplier<CompletableFuture<Void>> body) {
        return tryLocked(body).thenApply(ran -> null);
    }

    /**
     * Runs {@code body} holding the lock; completes with false (body not run) when another broker holds it. The
     * lock is released (awaited) before the result completes, so the driver's next step never overlaps a release
     * of this one.
     */
    private CompletableFuture<Boolean> tryLocked(Supplier<CompletableFuture<Void>> body) {
        String holder = lockPrefix() + lockAcquisitions.incrementAndGet() + "-" + lockNonce;
        return lock.tryAcquire(holder)
                .thenCompose(acquired -> {
                    if (!acquired) {
                        return CompletableFuture.completedFuture(false);
                    }
                    CompletableFuture<Void> ran;
                    try {
                        ran = body.get();
                    } catch (RuntimeException e) {
                        ran = CompletableFuture.failedFuture(e);
                    }
                    return ran.handle((v, e) -> e).thenCompose(e -> unlock(holder, 1).thenApply(x -> {
                        if (e != null) {
                            throw e instanceof CompletionException c ? c : new CompletionException(e);
                        }
                        return true;
                    }));
                });
    }

    private String lockPrefix() {
        return brokerId.get() + "#";
    }

    /**
     * Passes run one at a time on this broker's driver and release the lock before they end, so between passes the
     * lock is never in use here: if it is this broker's, a release failed, and it is released now (other brokers
     * may be waiting for it).
     */
    CompletableFuture<Void> releaseLeftLock() {
        return lock.releaseIf(holder -> holder.startsWith(lockPrefix())).thenAccept(released -> {
            if (released) {
                log.info("released the migration lock an earlier pass of broker {} left behind", brokerId.get());
            }
        }).exceptionally(e -> null);
    }

    /**
     * Deletes the lock if it is still this acquisition's (it may have expired with our session and been retaken); a
     * failed delete is retried {@code retries} more time(s) a second later, and otherwise left to this broker's next
     * pass ({@link #releaseLeftLock}). Never fails.
     */
    private CompletableFuture<Void> unlock(String holder, int retries) {
        return lock.release(holder)
                .handle((v, x) -> x)
                .thenCompose(x -> {
                    if (x == null) {
                        return CompletableFuture.completedFuture(null);
                    }
                    if (retries > 0 && !timer.closed()) {
                        return timer.delay(UNLOCK_RETRY_MILLIS).thenCompose(d -> unlock(holder, retries - 1));
                    }
                    log.warn("cannot release the migration lock {} yet (the next pass does): {}", lock.path(),
                            x.toString());
                    return CompletableFuture.completedFuture(null);
                });
    }

    /** Holds the lock for {@code body}, waiting (bounded) while another broker's pass still holds it. */
    CompletableFuture<Void> lockedWaiting(Supplier<CompletableFuture<Void>> body, long deadlineNanos) {
        return tryLocked(body).thenCompose(ran -> {
            if (ran) {
                return CompletableFuture.completedFuture(null);
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                return CompletableFuture.failedFuture(RegistryException.unavailable("another broker holds the "
                        + "migration lock; the rollback is recorded and will be finished by the broker that runs "
                        + "the migration, or ask again"));
            }
            return timer.delay(LOCK_POLL_MILLIS).thenCompose(v -> lockedWaiting(body, deadlineNanos));
        });
    }
}
