package io.bcswitch.concurrent;

/**
 * How long a unit test waits for a future it expects to complete at once (in-memory metadata store, fake clusters):
 * generous in an ordinary run, short in a mutation run ({@code -Dbcs.test.waitSeconds}, set by the mutation profile).
 * There a mutant that never completes a future must fail the test before the mutation tool's own timeout does:
 * a test that fails is a killed mutant at no extra cost, a test that times out costs the tool a new test JVM.
 */
public final class TestWaits {
    /** Seconds for a future that completes in milliseconds unless something is broken. */
    public static final long SECONDS = Long.getLong("bcs.test.waitSeconds", 10);

    /**
     * Seconds for something that takes several passes of a component (a migration run through its phases, a switch
     * through its precheck): {@code -Dbcs.test.passSeconds}.
     */
    public static final long PASS_SECONDS = Long.getLong("bcs.test.passSeconds", 30);

    private TestWaits() {
    }

    /** The value of {@code f}, which must complete within {@link #SECONDS}. */
    public static <T> T get(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(SECONDS, java.util.concurrent.TimeUnit.SECONDS);
    }

    /**
     * What {@code f} failed with (the cause the future's {@code get} reports), within {@link #SECONDS}; fails the test
     * when it completes normally or not in time.
     */
    public static Throwable failure(java.util.concurrent.CompletableFuture<?> f) {
        return org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                () -> f.get(SECONDS, java.util.concurrent.TimeUnit.SECONDS)).getCause();
    }

    /** A condition that may throw (it reads a future, a store). */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** Polls {@code condition} until it holds; fails naming {@code what} after {@code seconds}. */
    public static void until(String what, long seconds, Condition condition) throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + seconds + " s: " + what);
            }
            Thread.sleep(10);
        }
    }

    /** {@link #until(String, long, Condition)} within {@link #SECONDS}. */
    public static void until(String what, Condition condition) throws Exception {
        until(what, SECONDS, condition);
    }
}
