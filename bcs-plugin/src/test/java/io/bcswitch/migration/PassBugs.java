package io.bcswitch.migration;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The metrics an orchestrator under test reports to: remembers the first pass that failed on a programming error
 * (a null, an absent value taken, an index out of range, a bad cast or arithmetic anywhere in its causes). No test
 * scripts such a failure, so a test waiting for a migration to get somewhere gives up at once instead of waiting out
 * its time limit.
 */
final class PassBugs implements MigrationMetrics {
    private final AtomicReference<Throwable> first = new AtomicReference<>();

    @Override
    public void passFailed(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NullPointerException || t instanceof java.util.NoSuchElementException
                    || t instanceof IndexOutOfBoundsException || t instanceof ClassCastException
                    || t instanceof ArithmeticException) {
                first.compareAndSet(null, cause);
                return;
            }
        }
    }

    /** Fails the test if a pass failed on a programming error. */
    void check() {
        Throwable t = first.get();
        if (t != null) {
            throw new AssertionError("a migration pass failed on a programming error", t);
        }
    }

    /** Polls {@code condition} for at most {@code seconds}, giving up at once when a pass failed on a bug. */
    void waitUntil(long seconds, Callable<Boolean> condition, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (condition.call()) {
                return;
            }
            check();
            Thread.sleep(20);
        }
        throw new AssertionError("not within " + seconds + " s: " + what);
    }
}
