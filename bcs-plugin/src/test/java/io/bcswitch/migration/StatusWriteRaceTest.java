package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.adapter.PulsarByteBudget;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.precheck.InMemoryBookieClusters;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.Phase;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.ScriptedPort;
import io.bcswitch.switching.SwitchResult;
import io.bcswitch.switching.SwitchService;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A cluster's status written by an operator's command (close-client, cleanup, unregister) while a switch to that
 * cluster, or a rollback back to it, is made: whichever of the two commits first, the other never stands on what it
 * read before. Switch 1 went from a to b (its migration finished); c has never been used; nothing is referenced on a
 * or c, so both are drained.
 */
class StatusWriteRaceTest {
    private final ScriptedPort port = new ScriptedPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
    private final InMemoryBookieClusters bookies = new InMemoryBookieClusters();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final FakeClusters clusters = new FakeClusters();
    /** The drain report's inventory waits for this while {@link #gated}: the decision is being made. */
    private volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);
    /** Completed when the inventory is asked while the gate is closed. */
    private volatile CompletableFuture<Void> asked = new CompletableFuture<>();
    private SwitchService switches;
    private MigrationOrchestrator orchestrator;
    private CleanupService cleanup;

    @BeforeEach
    void setUp() throws Exception {
        bookies.registerAll(registry, "a", "b", "c");
        LedgerInventory inventory = () -> {
            if (!gate.isDone()) {
                asked.complete(null);
            }
            return gate.thenApply(v -> List.<LedgerReference>of());
        };
        switches = new SwitchService(registry, bookies.access(), 2, Clock.systemUTC(), inventory, ClusterProbe.NONE,
                1000);
        orchestrator = new MigrationOrchestrator(registry, inventory, clusters, RegistryBed.CONFIG, () -> "broker-1",
                scheduler, PulsarByteBudget::refilledAt, Clock.systemUTC(), MigrationMetrics.NONE, switches::switchTo);
        DrainReports drain = new DrainReports(registry, inventory, clusters,
                ml -> CompletableFuture.completedFuture(new RetentionLookup.Retention(0, "test")));
        cleanup = new CleanupService(registry, inventory, clusters, orchestrator, drain, RegistryBed.CONFIG,
                MigrationMetrics.NONE, Clock.systemUTC());
        switchTo("b");
        registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", 0)
                .moveTo(Phase.BUILD, 0).moveTo(Phase.PROMOTE, 0).moveTo(Phase.DONE, 0), -1).join();
    }

    @AfterEach
    void tearDown() {
        orchestrator.close();
        scheduler.shutdownNow();
        bookies.close();
        port.close();
    }

    private SwitchResult switchTo(String target) throws Exception {
        return switches.switchTo(target).get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
    }

    /** The next drain report waits, once it asks the inventory, until {@link #decided()}. */
    private void gated() {
        asked = new CompletableFuture<>();
        gate = new CompletableFuture<>();
    }

    private void decided() {
        gate.complete(null);
    }

    private ClusterStatus status(String cluster) throws Exception {
        return registry.getCluster(cluster).get().orElseThrow().status();
    }

    private static RegistryException refusal(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> f.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS));
        return (RegistryException) e.getCause();
    }

    @Test
    void aSwitchToTheClusterCommittedWhileItsDrainIsDecidedKeepsItFromBeingDeprecated() throws Exception {
        long relocationEpoch = registry.readRelocationEpoch().get();
        gated();
        CompletableFuture<Boolean> deprecating = cleanup.deprecateIfDrained("c");
        asked.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("c", switchTo("c").directive().target());
        decided();

        assertFalse(deprecating.get(TestWaits.SECONDS, TimeUnit.SECONDS), "decided before c became active");
        assertEquals(ClusterStatus.ACTIVE, status("c"));
        assertEquals(relocationEpoch, registry.readRelocationEpoch().get(),
                "nothing tells the brokers to close c's clients");
    }

    @Test
    void aSwitchThatReadTheClusterBeforeItWasDeprecatedIsRefused() throws Exception {
        // the switch has passed its precheck (c was STANDBY) and announces itself; meanwhile c is deprecated
        port.hold(p -> p.equals(registry.paths().switchPrepare()));
        CompletableFuture<SwitchResult> switching = switches.switchTo("c");
        port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(cleanup.deprecateIfDrained("c").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        port.release();

        assertEquals(RegistryException.Kind.CONFLICT, refusal(switching).kind());
        assertEquals("b", registry.readDirective().get().value().target(), "the switch did not commit");
        assertEquals(ClusterStatus.DEPRECATED, status("c"));
        // asked again, the precheck sees it
        assertTrue(refusal(switches.switchTo("c")).getMessage().contains("bookie cluster 'c' is DEPRECATED"));
    }

    @Test
    void aSwitchThatReadTheClusterBeforeItWasUnregisteredIsRefused() throws Exception {
        port.hold(p -> p.equals(registry.paths().switchPrepare()));
        CompletableFuture<SwitchResult> switching = switches.switchTo("c");
        port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("c", switches.unregister("c").get(TestWaits.SECONDS, TimeUnit.SECONDS).name());
        port.release();

        assertEquals(RegistryException.Kind.CONFLICT, refusal(switching).kind());
        assertEquals("b", registry.readDirective().get().value().target(), "no switch to an unregistered cluster");
    }

    @Test
    void aRollbackRecordedWhileTheClusterItGoesBackToIsDecidedKeepsItFromBeingDeprecated() throws Exception {
        gated();
        CompletableFuture<Boolean> deprecating = cleanup.deprecateIfDrained("a");
        asked.get(TestWaits.SECONDS, TimeUnit.SECONDS);
        // the operator's rollback of switch 1 records its intent (it goes back to a)
        registry.update(registry.paths().orchestrator(1), MigrationState.class, cur -> cur.map(s ->
                s.moveTo(Phase.ROLLING_BACK, 1).edit().rollback("a", null, 0).build())).get();
        decided();

        assertFalse(deprecating.get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertEquals(ClusterStatus.STANDBY, status("a"), "the rollback's switch back to a must not be refused");
    }

    @Test
    void aRollbackAfterTheClusterItWouldGoBackToWasDeprecatedOrUnregisteredIsRefused() throws Exception {
        assertTrue(cleanup.deprecateIfDrained("a").get(TestWaits.SECONDS, TimeUnit.SECONDS));
        RegistryException refused = refusal(orchestrator.rollBack(1, "b", "a"));
        assertEquals(RegistryException.Kind.CONFLICT, refused.kind());
        assertEquals(Phase.DONE, orchestrator.readState(1).get().value().phase(), "no intent recorded: "
                + refused.getMessage());
        assertTrue(refused.getMessage().contains("'a', which switch epoch 1 would be rolled back to, is DEPRECATED"),
                refused.getMessage());
        assertEquals("a", switches.unregister("a").get(TestWaits.SECONDS, TimeUnit.SECONDS).name());
        refused = refusal(orchestrator.rollBack(1, "b", "a"));
        assertTrue(refused.getMessage().contains("is not registered"), refused.getMessage());
        assertEquals(Phase.DONE, orchestrator.readState(1).get().value().phase());
    }
}
