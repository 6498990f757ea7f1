package io.bcswitch.migration;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.migration.MigrationPlan.Item;
import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** Counts of one run, folded into the persisted state. */
final class MigrationTally {
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

    /** the run's fencing token ({@link MigrationState#runToken}): every write it makes carries it */
    final long token;

    MigrationTally(int planned, List<Long> earlierCopies, long token) {
        this.planned = planned;
        this.token = token;
        this.copies = Collections.synchronizedSet(new LinkedHashSet<>(earlierCopies));
        this.copiesPersisted = earlierCopies.size();
    }

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

    List<LedgerIssue> allIssues() {
        List<LedgerIssue> all = new ArrayList<>(issues.values());
        synchronized (skipped) {
            for (Item i : skipped) {
                all.add(new LedgerIssue(i.ledgerId(), i.kind().name(), i.from(), "SKIPPED",
                        "still open on " + i.from() + " (" + i.referencedBy() + "); it is not copied while it may "
                                + "be written: it moves when its topic rolls it over; one left open by a crash or a failed "
                                + "unload stays until Pulsar recovers it: load the topic, then retry-migration"));
            }
        }
        unknown.forEach((u, home) -> all.add(new LedgerIssue(u.storedLedger(), LedgerKind.COMPACTION.name(), home,
                "INVENTORY_INCOMPLETE", u.referencedBy() + ": " + u.reason() + "; the compacted ledger in use may "
                + "not have moved: run the migration again once the topic loads")));
        all.sort(Comparator.comparingLong(LedgerIssue::ledgerId));
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
