package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.precheck.InMemoryBookieClusters;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.ScriptedPort;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.SwitchPreparation;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's actions on one service over an in-memory registry and in-memory bookie clusters a, b, c (a active):
 * switches one after the other, a switch that loses the race to another, and the actions the service hands to
 * the components whose job they are.
 */
class SwitchServiceTest {
    private final ScriptedPort port = new ScriptedPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
    private final InMemoryBookieClusters bookies = new InMemoryBookieClusters();
    private final List<Long> committed = new CopyOnWriteArrayList<>();
    private SwitchService service;

    @BeforeEach
    void setUp() {
        bookies.registerAll(registry, "a", "b", "c");
        service = new SwitchService(registry, bookies.access(), 2, Clock.systemUTC(),
                () -> CompletableFuture.completedFuture(List.of()), ClusterProbe.NONE, 1000, committed::add);
    }

    @AfterEach
    void tearDown() {
        bookies.close();
        port.close();
    }

    private SwitchResult switchTo(String target) throws Exception {
        return service.switchTo(target).get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * The very first switch (no directive yet) read its target's record before an unregister of it deleted the record
     * and confirmed that there was still no directive: one of the two must lose, as with any later switch.
     */
    @Test
    void aFirstSwitchThatReadTheClusterBeforeItWasUnregisteredIsRefused() throws Exception {
        port.hold(p -> p.equals(registry.paths().switchPrepare()));
        CompletableFuture<SwitchResult> switching = service.switchTo("c");
        port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals("c", service.unregister("c").get(TestWaits.SECONDS, TimeUnit.SECONDS).name());
        port.release();

        ExecutionException lost = assertThrows(ExecutionException.class,
                () -> switching.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS));
        assertEquals(RegistryException.Kind.CONFLICT, ((RegistryException) lost.getCause()).kind(), lost.toString());
        assertFalse(registry.readDirective().get().present(), "no switch to an unregistered cluster");
        assertTrue(committed.isEmpty());
    }

    @Test
    void eachSwitchIsAnnouncedCommittedAndToldWithTheNextEpoch() throws Exception {
        SwitchResult first = switchTo("b");
        assertEquals("b", first.directive().target());
        assertEquals("a", first.directive().origin());
        assertEquals(1, first.directive().epoch());
        assertEquals(2L << 32, first.directive().firstLedgerId(), "above a's high-order bits 1");
        assertEquals(List.of(1L), committed);

        SwitchResult second = switchTo("c");
        SwitchDirective d = second.directive();
        assertEquals(new SwitchDirective(1, "c", "b", 2, d.ts(), 3L << 32), d);
        assertEquals(d, registry.readDirective().get().value());
        assertEquals(List.of(1L, 2L), committed);
        SwitchPreparation announced = registry.read(registry.paths().switchPrepare(), SwitchPreparation.class).get()
                .value();
        assertEquals(2, announced.epoch(), "the announcement names the switch it announces");
        assertEquals(3L << 32, announced.firstLedgerId());
        assertTrue(registry.readRanges().get().orElseThrow().ranges().stream()
                .anyMatch(r -> r.cluster().equals("b") && r.epoch() == 1), "the previous directive's range is kept");
    }

    @Test
    void ofTwoConcurrentSwitchesTheOneThatLostTheRaceIsToldSoAndTellsNobody() throws Exception {
        // the switch waits in its announcement; meanwhile another broker commits a switch to c
        port.hold(p -> p.equals(registry.paths().switchPrepare()));
        CompletableFuture<SwitchResult> losing = service.switchTo("b");
        port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        registry.write(registry.paths().switchTarget(), new SwitchDirective(1, "c", "a", 1, 5, 7L << 32), -1).get();
        port.release();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> losing.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS));
        RegistryException r = (RegistryException) e.getCause();
        assertEquals(RegistryException.Kind.CONFLICT, r.kind());
        assertEquals("another switch was committed concurrently; check status and retry", r.getMessage());
        assertEquals("c", registry.readDirective().get().value().target(), "the winner's directive stands");
        assertEquals(List.of(), committed);
    }

    @Test
    void aSwitchWhoseDirectiveAConcurrentCommandConfirmedIsToldSoAndCanBeAskedAgain() throws Exception {
        switchTo("c");
        // the switch waits in its announcement; meanwhile a close-client of a confirms the directive it decided under
        port.hold(p -> p.equals(registry.paths().switchPrepare()));
        CompletableFuture<SwitchResult> losing = service.switchTo("b");
        port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        registry.confirm(registry.paths().switchTarget(), registry.readDirective().get().version()).get();
        port.release();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> losing.get(TestWaits.PASS_SECONDS, TimeUnit.SECONDS));
        assertEquals("a concurrent command that decided under the current switch (close-client, cleanup, unregister "
                + "or a rollback) changed what the switch read; check status and retry", e.getCause().getMessage());
        assertEquals(List.of(1L), committed);
        assertEquals(2, switchTo("b").directive().epoch());
    }

    @Test
    void theOtherActionsAreDoneByTheirComponents() throws Exception {
        assertEquals(List.of("a", "b", "c"), service.list().get().stream().map(BookieClusterRecord::name).toList());
        assertEquals("id-b", service.get("b").get().instanceId());
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-d", 3, 0, 0);
        assertEquals(ClusterStatus.STANDBY, service.register("d", InMemoryBookieClusters.uri("d")).get().status());
        assertEquals("d", service.unregister("d").get().name());
        assertEquals(List.of("a", "b", "c"), service.list().get().stream().map(BookieClusterRecord::name).toList());
        assertEquals("a", service.status().get().activeCluster());
        assertEquals(3, service.facts(service.get("b").get()).get().writableBookies());
        service.observe("a", "broker start").get();
        assertEquals(1, registry.readWatermark("a").get().orElseThrow().maxHighOrderBits());
        assertTrue(service.precheck("b").get().ok());
    }
}
