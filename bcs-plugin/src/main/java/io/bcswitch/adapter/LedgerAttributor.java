package io.bcswitch.adapter;

import io.bcswitch.concurrent.RetryDelays;
import io.bcswitch.routing.Ownership;
import io.bcswitch.topics.TopicLedgers;
import io.bcswitch.topics.TopicLedgers.Ledger;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes {@code _pulsar.bookieClusterName=<owner of the ledger id>} into the PIP-404 properties of each
 * data ledger's {@code LedgerInfo} in the managed-ledger metadata, so that {@code pulsar-admin topics
 * stats-internal} shows which bookie cluster holds each ledger. Informational only: routing decides by
 * the range table and never reads the property; a ledger without it (created before this feature, or
 * whose write gave up) is routed exactly the same.
 *
 * <p>How, on stock managed-ledger 4.2.4, and why this way:
 * <ul>
 *   <li>The only public way to set a ledger property is {@code ManagedLedger.asyncAddLedgerProperty}
 *       (ManagedLedger.java:477, ManagedLedgerImpl.java:1429). It rewrites the managed ledger's metadata
 *       under the managed ledger's own metadata mutex ({@code tryTransformLedgerInfo},
 *       ManagedLedgerImpl.java:3854-3882, the path the offloader uses), keeps the live entry/size counts
 *       of a ledger closed meanwhile (3887-3900), and the property survives the ledger's close
 *       ({@code ledgerClosed} copies the old LedgerInfo, 1974-1980), reloads and offload.</li>
 *   <li>There is no way to attach it at creation: the managed ledger builds the new LedgerInfo itself
 *       with only id and timestamp (ManagedLedgerImpl.java:1769 on rollover, 646 on open), and
 *       {@code ManagedLedgerInterceptor} has no ledger-created hook, only managed-ledger-level property
 *       hooks (ManagedLedgerInterceptor.java:76,101). The broker also installs its own interceptor, so
 *       replacing it would be fragile.</li>
 *   <li>{@code asyncAddLedgerProperty} fails for a ledger that is not yet in the managed ledger's list
 *       (ManagedLedgerImpl.java:1434-1437). The routing client sees the create, but the managed ledger
 *       adds the LedgerInfo only after the create callback, once its metadata update succeeds
 *       (ManagedLedgerImpl.java:1779; on first open 646-650, before the managed ledger is published in
 *       the factory). So the write is done asynchronously after the create callback: first attempt after
 *       {@value #FIRST_DELAY_MS} ms, retried with back-off while the ledger is not listed yet, for at most
 *       {@value #GIVE_UP_MS} ms (the managed ledger's own metadata-operation timeout is 60 s). A periodic
 *       sweep would also work but would write metadata for every old ledger of every topic; a
 *       per-create task writes exactly once per new ledger.</li>
 *   <li>To stay clear of metadata writes that do not take the mutex, the property is only written on a
 *       managed ledger the factory already publishes (its initial metadata write is done) and that is
 *       open and not fenced, closed or terminated.</li>
 *   <li>Each write is one more managed-ledger metadata write after the one that listed the ledger. During a
 *       cutover every topic of the broker creates a ledger within seconds, the moments publish latency is most
 *       sensitive to metadata-store load, and the property is only informational. So nothing is written while this broker's cutover runs (the attempts wait, at most
 *       {@value #MAX_CUTOVER_WAIT_MS} ms: a cutover that waits for topics' normal rollover may last hours; their
 *       deadline starts again once they stop waiting), and writes are paced to at most {@value #WRITES_PER_SECOND} per second: the ledgers of
 *       a cutover get their property in the seconds after it.</li>
 * </ul>
 */
final class LedgerAttributor implements RoutingBookKeeper.CreateListener {
    private static final Logger log = LoggerFactory.getLogger(LedgerAttributor.class);
    static final long FIRST_DELAY_MS = 50;
    static final long MAX_DELAY_MS = 2_000;
    static final long GIVE_UP_MS = 60_000;
    static final long WRITES_PER_SECOND = 50;
    static final long WRITE_PERIOD_NANOS = 1_000_000_000L / WRITES_PER_SECOND;
    /** How often an attempt looks again whether the cutover is over. */
    static final long CUTOVER_WAIT_MS = 500;
    /** The longest an attempt waits for the cutover to end. */
    static final long MAX_CUTOVER_WAIT_MS = 60_000;

    private final Supplier<ManagedLedgerFactory> factory;
    private final Supplier<Ownership> ownership;
    private final ScheduledExecutorService scheduler;
    private final java.util.function.BooleanSupplier cutoverRunning;
    /** When the next paced write may start ({@link System#nanoTime}); used on the scheduler's one thread only. */
    private long nextWriteNanos = System.nanoTime();

    /**
     * @param scheduler      one thread: every attempt runs on it
     * @param cutoverRunning whether this broker's cutover runs now (nothing is written meanwhile)
     */
    LedgerAttributor(Supplier<ManagedLedgerFactory> factory, Supplier<Ownership> ownership,
                     ScheduledExecutorService scheduler, java.util.function.BooleanSupplier cutoverRunning) {
        this.factory = factory;
        this.ownership = ownership;
        this.scheduler = scheduler;
        this.cutoverRunning = cutoverRunning;
    }

    @Override
    public void dataLedgerCreated(String managedLedger, long ledgerId, String createdOn) {
        Optional<String> owner = ownership.get().owner(ledgerId);
        if (owner.isEmpty()) {
            log.warn("[{}] ledger {} created on bookie-cluster={} is in no range of the range table; not "
                    + "attributing it", managedLedger, ledgerId, createdOn);
            return;
        }
        if (!owner.get().equals(createdOn)) {
            log.warn("[{}] ledger {} was created on bookie-cluster={} but the range table names {}",
                    managedLedger, ledgerId, createdOn, owner.get());
        }
        long now = System.nanoTime();
        Task t = new Task(managedLedger, ledgerId, owner.get(), now + GIVE_UP_MS * 1_000_000L, now,
                PulsarRetryDelays.between(FIRST_DELAY_MS, MAX_DELAY_MS), true);
        schedule(t, t.delays().nextMillis());
    }

    /** What to do next about one ledger. */
    enum Step { WRITE, RETRY, DONE, GIVE_UP }

    /**
     * The decision, from what the factory shows now.
     *
     * @param published    the factory publishes a managed ledger of that name
     * @param state        its state name, or null when it is not a stock managed ledger
     * @param ledgerId     the ledger to attribute
     * @param lastLedgerId the newest ledger id in its list, or -1 when the list is empty
     * @param listed       the ledger is in its list
     * @param current      the ledger's current property value, or null
     * @param wanted       the value to write
     */
    static Step decide(boolean published, String state, long ledgerId, long lastLedgerId, boolean listed,
                       String current, String wanted) {
        if (!published) {
            return Step.RETRY; // still opening (its first ledger is created during the open), or reopening
        }
        if (state != null) {
            switch (state) {
                case "LedgerOpened", "ClosingLedger", "ClosedLedger", "CreatingLedger" -> {
                    // open: its metadata writes go through the metadata mutex
                }
                case "Fenced", "FencedForDeletion", "Terminated" -> {
                    return Step.GIVE_UP;
                }
                default -> {
                    return Step.RETRY; // None, Closed (a reopen may follow), WriteFailed
                }
            }
        }
        if (!listed) {
            // ledgers are created one at a time: a newer listed ledger means ours was dropped (it stayed
            // empty, or its metadata update failed); otherwise it is not listed yet
            return lastLedgerId > ledgerId ? Step.GIVE_UP : Step.RETRY;
        }
        return wanted.equals(current) ? Step.DONE : Step.WRITE;
    }

    /**
     * The start of the next paced write: {@code now} if the pace allows it, else the slot after the last one given.
     * The caller gives the slot after it as {@code slot + period} next time.
     */
    static long writeSlot(long nowNanos, long nextFreeNanos) {
        return nextFreeNanos - nowNanos > 0 ? nextFreeNanos : nowNanos;
    }

    /**
     * @param delays       back-off between attempts: doubles, capped at {@value #MAX_DELAY_MS} ms
     * @param thenPrevious once the ledger is listed, the ledger before it is looked at again (see
     *                     {@link #followPrevious})
     */
    private record Task(String managedLedger, long ledgerId, String owner, long deadlineNanos, long createdNanos,
                        RetryDelays delays, boolean thenPrevious) {
        Task withDeadlineFromNow() {
            return new Task(managedLedger, ledgerId, owner, System.nanoTime() + GIVE_UP_MS * 1_000_000L,
                    createdNanos, delays, thenPrevious);
        }

        Task previousFollowed() {
            return new Task(managedLedger, ledgerId, owner, deadlineNanos, createdNanos, delays, false);
        }

        boolean mayWaitForCutover() {
            return System.nanoTime() - createdNanos < MAX_CUTOVER_WAIT_MS * 1_000_000L;
        }
    }

    private void schedule(Task t, long delayMs) {
        try {
            scheduler.schedule(() -> attempt(t, false), delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // plugin closing
        }
    }

    /** @param paced the write was given its slot already */
    private void attempt(Task task, boolean paced) {
        Task t = task;
        if (!paced && t.mayWaitForCutover() && cutoverRunning.getAsBoolean()) {
            schedule(t.withDeadlineFromNow(), CUTOVER_WAIT_MS);
            return;
        }
        Step step;
        ManagedLedger ml = null;
        try {
            ManagedLedgerFactory f = factory.get();
            ml = f == null ? null : f.getManagedLedgers().get(t.managedLedger());
            step = step(ml, t);
            if (t.thenPrevious() && (step == Step.WRITE || step == Step.DONE)) {
                followPrevious(ml, t);
                t = t.previousFollowed();
            }
        } catch (RuntimeException e) {
            log.debug("[{}] cannot inspect ledger {}: {}", t.managedLedger(), t.ledgerId(), e.toString());
            step = Step.RETRY;
        }
        switch (step) {
            case DONE -> log.debug("[{}] ledger {} is attributed to bookie-cluster={}", t.managedLedger(),
                    t.ledgerId(), t.owner());
            case GIVE_UP -> log.info("[{}] not attributing ledger {} to bookie-cluster={}: the managed ledger is "
                    + "fenced or terminated, or no longer lists the ledger", t.managedLedger(), t.ledgerId(),
                    t.owner());
            case RETRY -> retry(t, null);
            case WRITE -> {
                long now = System.nanoTime();
                long slot = paced ? now : writeSlot(now, nextWriteNanos);
                if (!paced) {
                    nextWriteNanos = slot + WRITE_PERIOD_NANOS;
                }
                if (slot - now > 0) {
                    schedulePaced(t, slot - now); // looks again at its slot: the ledger may be gone by then
                } else {
                    write(ml, t);
                }
            }
            default -> throw new IllegalStateException(step.name());
        }
    }

    /**
     * Pulsar 5.0.0-M1 drops a ledger's properties when it closes the ledger (4.x keeps them), and a managed ledger
     * closes its ledger just before it creates the next one. So once a new ledger is listed, the ledger before it
     * is looked at again and given its property back if it lost it; where properties survive the close that is
     * one lookup and no write. (The last ledger before a topic is unloaded gets it back at the next rollover after
     * the topic is loaded again.)
     */
    private void followPrevious(ManagedLedger ml, Task t) {
        Long previous = ml.getLedgersInfo().lowerKey(t.ledgerId());
        Optional<String> owner = previous == null ? Optional.empty() : ownership.get().owner(previous);
        if (owner.isPresent()) {
            long now = System.nanoTime();
            schedule(new Task(t.managedLedger(), previous, owner.get(), now + GIVE_UP_MS * 1_000_000L, now,
                    PulsarRetryDelays.between(FIRST_DELAY_MS, MAX_DELAY_MS), false), 0);
        }
    }

    private void schedulePaced(Task t, long inNanos) {
        try {
            scheduler.schedule(() -> attempt(t, true), inNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // plugin closing
        }
    }

    private void write(ManagedLedger ml, Task t) {
        try {
            LineManagedLedgers.addLedgerProperty(ml, t.ledgerId(), TopicLedgers.BOOKIE_CLUSTER_PROPERTY, t.owner())
                    .whenComplete((v, e) -> {
                        if (e == null) {
                            log.debug("[{}] ledger {}: {}={}", t.managedLedger(), t.ledgerId(),
                                    TopicLedgers.BOOKIE_CLUSTER_PROPERTY, t.owner());
                        } else {
                            retry(t, e);
                        }
                    });
        } catch (RuntimeException e) {
            retry(t, e);
        }
    }

    private void retry(Task t, Throwable cause) {
        if (System.nanoTime() - t.deadlineNanos() > 0) {
            log.info("[{}] gave up attributing ledger {} to bookie-cluster={} after {} s{}", t.managedLedger(),
                    t.ledgerId(), t.owner(), GIVE_UP_MS / 1000, cause == null ? " (the managed ledger never "
                            + "listed it while open)" : ": " + cause);
            return;
        }
        schedule(t, t.delays().nextMillis());
    }

    private static Step step(ManagedLedger ml, Task t) {
        if (ml == null) {
            return decide(false, null, t.ledgerId(), -1, false, null, t.owner());
        }
        String state = ml instanceof ManagedLedgerImpl impl ? impl.getState().name() : null;
        // per new ledger, retried: a lookup in the managed ledger's map, not a copy of its whole ledger list
        java.util.NavigableMap<Long, ?> ledgers = ml.getLedgersInfo();
        long last = ledgers.isEmpty() ? -1 : ledgers.lastKey();
        Optional<Ledger> li = LineManagedLedgers.listed(ml, t.ledgerId());
        return decide(true, state, t.ledgerId(), last, li.isPresent(),
                li.map(l -> l.properties().get(TopicLedgers.BOOKIE_CLUSTER_PROPERTY)).orElse(null), t.owner());
    }
}
