package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the driver tells the metrics about its passes: every failed pass once, with its cause; nothing else. */
class MigrationDriverTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final DriverTimer timer = new DriverTimer(scheduler);
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final AtomicReference<CompletableFuture<Void>> next =
            new AtomicReference<>(CompletableFuture.completedFuture(null));
    private final MigrationDriver driver = new MigrationDriver(timer, () -> "broker-1", () -> {
        CompletableFuture<Void> pass = next.get();
        if (pass == null) {
            throw new IllegalArgumentException("a pass that throws");
        }
        return pass;
    },
            new MigrationMetrics() {
                @Override
                public void passFailed(Throwable cause) {
                    failures.add(cause);
                }
            });

    @AfterEach
    void tearDown() {
        driver.close();
        scheduler.shutdownNow();
    }

    @Test
    void aFailedPassIsCountedOnceWithItsCauseAndAPassThatWorksIsNot() throws Exception {
        driver.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of(), failures);

        IllegalStateException cause = new IllegalStateException("the metadata store did not answer");
        next.set(CompletableFuture.failedFuture(cause));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> driver.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertSame(cause, e.getCause());
        assertEquals(1, failures.size());
        assertSame(cause, rootOf(failures.get(0)));

        // a pass that throws instead of failing its future counts the same
        next.set(null);
        assertThrows(ExecutionException.class, () -> driver.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals(2, failures.size());
        assertTrue(rootOf(failures.get(1)) instanceof IllegalArgumentException, failures.toString());

        next.set(CompletableFuture.completedFuture(null));
        driver.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(2, failures.size());
    }

    private static Throwable rootOf(Throwable t) {
        return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    @Test
    void passesRefusedBecauseTheDriverIsClosedAreNotFailures() throws Exception {
        driver.close();
        assertThrows(ExecutionException.class, () -> driver.tick().get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of(), failures);
    }
}
