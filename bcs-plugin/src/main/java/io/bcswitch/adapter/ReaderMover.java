package io.bcswitch.adapter;

import io.bcswitch.routing.Ownership;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves long-lived readers off a ledger's previous home once this broker routes the ledger to its new home.
 * Pulsar keeps a compacted topic's ledger handle open until the next compaction or topic reload; a handle opened
 * before the migration promoted the compacted ledger keeps reading the original, which cleanup could then never
 * delete and close-client never retire. Such a topic is unloaded (its clients reconnect at once, and its compacted
 * view is reopened through the routing client, on the new home), and the handle it held is forgotten.
 *
 * <p>Other handles held on a previous home (short-lived reads of cursor and schema ledgers) are only reported, in
 * this broker's record; cleanup and close-client wait for them.
 */
final class ReaderMover {
    private static final Logger log = LoggerFactory.getLogger(ReaderMover.class);

    private final LedgerHandleTracker tracker;
    private final ManagedLedgerRoller roller;
    private final Set<String> moving = ConcurrentHashMap.newKeySet();

    ReaderMover(LedgerHandleTracker tracker, ManagedLedgerRoller roller) {
        this.tracker = tracker;
        this.roller = roller;
    }

    /** After {@code o} was applied: moves compacted-view readers whose ledger's home is elsewhere now. */
    void relocationsApplied(Ownership o) {
        java.util.Map<Long, List<String>> views = roller.compactedViews();
        for (LedgerHandleTracker.Tracked t : tracker.openOutsideHome(o::owner, views::containsKey)) {
            List<String> topics = views.getOrDefault(t.ledgerId, List.of());
            if (topics.isEmpty()) {
                continue;
            }
            String home = o.owner(t.ledgerId).orElse("?");
            for (String ml : topics) {
                if (!moving.add(ml)) {
                    continue;
                }
                log.info("ledger-name={} bookie-cluster={} ledger={}: its compacted view now lives on {}; unloading "
                        + "the topic so that its readers reopen it there", ml, t.cluster, t.ledgerId, home);
                roller.unloadTopic(ml).whenComplete((how, e) -> {
                    moving.remove(ml);
                    if (e != null) {
                        log.warn("ledger-name={} cannot unload to move its compacted view to {} (cleanup waits for "
                                + "the handle on {}): {}", ml, home, t.cluster, e.toString());
                    } else {
                        // the topic dropped its compacted context with every handle it held on the previous home
                        // (there may be several: only the first one found started the move); nothing reads through
                        // them any more. Their close is not seen, so unless forgotten here they would count as open
                        // until garbage-collected
                        forgetHandlesOf(ml, o, views);
                    }
                });
            }
        }
    }

    /**
     * Forgets every handle tracked outside its ledger's home on a compacted view of {@code ml}, by the views as they
     * were before the topic was unloaded (an unloaded topic no longer shows its compacted view).
     */
    private void forgetHandlesOf(String ml, Ownership o, java.util.Map<Long, List<String>> views) {
        for (LedgerHandleTracker.Tracked t : tracker.openOutsideHome(o::owner, views::containsKey)) {
            if (views.getOrDefault(t.ledgerId, List.of()).contains(ml)) {
                t.closed.set(true);
            }
        }
    }
}
