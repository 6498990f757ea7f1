package io.bcswitch.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.RelocationEpoch;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A change of the relocation table is marked before it is made and announced after: until a bump announces it, the
 * epoch that covers the table is one no broker has applied, whoever reads it (cleanup, the rolled-back copies' pass).
 */
class AnnouncedChangeTest {
    private RegistryBed bed;
    private RegistryStore registry;

    @BeforeEach
    void setUp() throws Exception {
        bed = new RegistryBed();
        registry = bed.registry;
    }

    @AfterEach
    void tearDown() throws Exception {
        bed.close();
    }

    private RelocationEpoch record() throws Exception {
        return registry.readRelocationEpochRecord().get();
    }

    @Test
    void theChangeIsMadeUnderTheMarkAndItsBumpListsWhatItChanged() throws Exception {
        registry.bumpRelocationEpoch(1, List.of()).get();
        AnnouncedChange.Announced<String> a = AnnouncedChange.make(registry, 5, () -> registry
                .readRelocationEpochRecord().thenApply(r -> r.unannounced() + "@" + r.epoch()), r -> List.of(7L)).get();
        assertEquals("true@1", a.result(), "marked while the table changes");
        assertEquals(2, a.epoch());
        assertEquals(new RelocationEpoch(1, 2, 5, List.of(7L), false), record());
        assertEquals(2, RegistryView.read(registry).get().relocationEpoch());
    }

    @Test
    void aLostBumpLeavesTheChangeMarkedUntilTheNextChangeOrASettleAnnouncesAllOfIt() throws Exception {
        CompletableFuture<AnnouncedChange.Announced<Object>> lost = AnnouncedChange.make(registry, 5,
                () -> CompletableFuture.completedFuture(null), r -> {
                    throw new IllegalStateException("the bump is lost");
                });
        assertThrows(ExecutionException.class, lost::get);
        assertTrue(record().unannounced());
        assertEquals(0, record().epoch());
        assertEquals(1, RegistryView.read(registry).get().relocationEpoch(), "an epoch no broker has applied");

        // the next change finds the mark: every broker re-reads everything
        assertEquals(1, AnnouncedChange.make(registry, 6, () -> CompletableFuture.completedFuture(1),
                r -> List.of(8L)).get().epoch());
        assertNull(record().changed());
        assertFalse(record().unannounced());

        assertEquals(1, AnnouncedChange.settle(registry, 7).get(), "nothing to announce: nothing written");
        assertEquals(6, record().ts());
        registry.markRelocationChange(8).get();
        assertEquals(2, AnnouncedChange.settle(registry, 9).get());
        assertEquals(new RelocationEpoch(1, 2, 9, null, false), record());
    }

    @Test
    void promoteStartsWithAnAnnouncementOfALostChangeEvenWhenTheTableIsEmpty() throws Exception {
        RelocationAnnouncer announcer = new RelocationAnnouncer(registry, Clock.systemUTC(),
                new DriverTimer(bed.scheduler), 100);
        announcer.announce(1, RegistryView.read(registry).get(), () -> false).get();
        assertEquals(0, record().epoch(), "nothing relocated, nothing marked: nothing to announce");
        registry.markRelocationChange(1).get();
        announcer.announce(1, RegistryView.read(registry).get(), () -> false).get();
        assertEquals(1, record().epoch());
        assertFalse(record().unannounced());
    }
}
