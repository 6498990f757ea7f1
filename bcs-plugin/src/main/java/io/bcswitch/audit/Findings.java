package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.concurrent.Failures;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * What an audit found: the violations, and what could not be checked and why. The checks run concurrently and add
 * to it from whichever thread their reads complete on.
 */
final class Findings {
    private final List<Violation> violations = Collections.synchronizedList(new ArrayList<>());
    private final List<String> unchecked = Collections.synchronizedList(new ArrayList<>());
    private final List<VerifyReport.Notice> notices = Collections.synchronizedList(new ArrayList<>());

    /**
     * Compacted ledgers a compaction cursor's stored property still names although a newer compaction replaced them
     * and they are gone (the property is rewritten only when the cursor's ledger rolls over), each with the compacted
     * ledger its topic uses instead.
     */
    private final Map<Long, Long> replacedCompactedLedgers = new java.util.concurrent.ConcurrentHashMap<>();

    void violation(Violation v) {
        violations.add(v);
    }

    void replacedCompactedLedger(long ledgerId, long by) {
        replacedCompactedLedgers.put(ledgerId, by);
    }

    /** Replaced compacted ledger to the one its topic uses instead. */
    Map<Long, Long> replacedCompactedLedgers() {
        return Map.copyOf(replacedCompactedLedgers);
    }

    void notice(VerifyReport.Notice n) {
        notices.add(n);
    }

    /** The notices in a stable order (by kind, ledger, cluster). */
    List<VerifyReport.Notice> sortedNotices() {
        List<VerifyReport.Notice> sorted = new ArrayList<>(notices);
        sorted.sort(Comparator.comparing(VerifyReport.Notice::kind).thenComparing(x ->
                x.ledgerId() == null ? -1 : x.ledgerId()).thenComparing(x -> String.valueOf(x.cluster())));
        return sorted;
    }

    void unchecked(String what) {
        unchecked.add(what);
    }

    /** {@code what} could not be checked: the root cause of {@code failure} says why. */
    void unchecked(String what, Throwable failure) {
        unchecked.add(what + ": " + root(failure));
    }

    /** The violations in a stable order (by check, ledger, cluster), so that two reports compare line by line. */
    List<Violation> sortedViolations() {
        List<Violation> sorted = new ArrayList<>(violations);
        sorted.sort(Comparator.comparing(Violation::check).thenComparing(x ->
                x.ledgerId() == null ? -1 : x.ledgerId()).thenComparing(x -> String.valueOf(x.cluster())));
        return sorted;
    }

    /** What could not be checked, each once, sorted. */
    List<String> sortedUnchecked() {
        return new ArrayList<>(new TreeSet<>(unchecked));
    }

    private static String root(Throwable e) {
        Throwable t = Failures.unwrap(e);
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }
}
