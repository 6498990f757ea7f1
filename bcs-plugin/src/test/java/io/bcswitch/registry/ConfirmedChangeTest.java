package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.registry.ConfirmedChange.Outcome;
import io.bcswitch.registry.ConfirmedChange.Under;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A change decided under other nodes: it stands when they are unchanged afterwards, is never made over a change of its
 * own node, and is undone when one of them changed, unless its node was changed again meanwhile.
 */
class ConfirmedChangeTest {
    private final InMemoryMetadataPort memory = new InMemoryMetadataPort();
    /** Makes {@link #meanwhile} right before the first read of a path {@link #when} accepts. */
    private volatile Predicate<String> when = p -> false;
    private volatile java.util.function.Supplier<CompletableFuture<?>> meanwhile = () -> null;
    private volatile Predicate<String> failing = p -> false;
    private final ForwardingPort port = new ForwardingPort(memory) {
        @Override
        public CompletableFuture<Optional<Node>> get(String path) {
            if (when.test(path)) {
                when = p -> false;
                return meanwhile.get().thenCompose(v -> get(path));
            }
            if (failing.test(path)) {
                return CompletableFuture.failedFuture(new IllegalStateException("read of " + path + " failed"));
            }
            return super.get(path);
        }

        @Override
        public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean ephemeral) {
            if (failing.test(path)) {
                return CompletableFuture.failedFuture(new IllegalStateException("write of " + path + " failed"));
            }
            return super.put(path, value, expected, ephemeral);
        }
    };
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
    private final ConfirmedChange confirmed = new ConfirmedChange(registry);
    private final String record = registry.paths().cluster("c");
    private final String directive = registry.paths().switchTarget();
    private final String state = registry.paths().orchestrator(1);
    private final BookieClusterRecord standby = new BookieClusterRecord(1, "c", "zk:c", ClusterStatus.STANDBY, 1L);
    private final BookieClusterRecord deprecated = standby.withStatus(ClusterStatus.DEPRECATED);

    @AfterEach
    void tearDown() {
        memory.close();
    }

    private void directive(long epoch, long expected) {
        registry.write(directive, new SwitchDirective(1, "b", "a", epoch, 1, epoch << 32), expected).join();
    }

    private Versioned<BookieClusterRecord> readRecord() {
        return registry.read(record, BookieClusterRecord.class).join();
    }

    private long version(String path) {
        return memory.get(path).join().map(MetadataPort.Node::version).orElse(MetadataPort.ABSENT);
    }

    private Outcome deprecate(Versioned<BookieClusterRecord> read, List<Under> under) throws Exception {
        return confirmed.change(record, read, Optional.of(deprecated), under).get();
    }

    @Test
    void aChangeWhoseDirectiveIsUnchangedStandsAndTheDirectiveKeepsItsBytes() throws Exception {
        // a directive with a field this version does not know: the confirmation rewrites what is stored
        memory.put(directive, ("{\"formatVersion\":1,\"target\":\"b\",\"origin\":\"a\",\"epoch\":1,\"ts\":1,"
                + "\"firstLedgerId\":4294967296,\"later\":true}").getBytes(StandardCharsets.UTF_8), Optional.of(-1L),
                false).join();
        registry.write(record, standby, -1).join();
        Under under = Under.of(directive, registry.readDirective().join());
        byte[] before = memory.get(directive).join().orElseThrow().value();

        assertEquals(Outcome.STANDS, deprecate(readRecord(), List.of(under)));
        assertEquals(deprecated, readRecord().value());
        assertEquals(1, version(directive), "confirmed by a write");
        assertEquals(new String(before, StandardCharsets.UTF_8),
                new String(memory.get(directive).join().orElseThrow().value(), StandardCharsets.UTF_8));
    }

    @Test
    void aChangeOfTheNodeAfterItWasReadIsNotOverwrittenAndNothingIsConfirmed() throws Exception {
        directive(1, -1);
        registry.write(record, standby, -1).join();
        Versioned<BookieClusterRecord> read = readRecord();
        registry.write(record, standby.withInstanceId("id-c"), read.version()).join();

        assertEquals(Outcome.NODE_CHANGED, deprecate(read, List.of(Under.of(directive,
                registry.readDirective().join()))));
        assertEquals(standby.withInstanceId("id-c"), readRecord().value());
        assertEquals(0, version(directive));
        // a deletion too
        assertEquals(Outcome.NODE_CHANGED, confirmed.change(record, read, Optional.empty(), List.of()).get());
        assertTrue(readRecord().present());
    }

    @Test
    void aSwitchCommittedAfterTheDecisionUndoesTheChangeAndTheDeletion() throws Exception {
        directive(1, -1);
        registry.write(record, standby, -1).join();
        Under under = Under.of(directive, registry.readDirective().join());
        directive(2, 0); // a switch to c

        assertEquals(Outcome.OVERTAKEN, deprecate(readRecord(), List.of(under)));
        assertEquals(standby, readRecord().value());
        assertEquals(Outcome.OVERTAKEN, confirmed.change(record, readRecord(), Optional.empty(), List.of(under))
                .get());
        assertEquals(standby, readRecord().value(), "registered again");
        // a record created under a directive that changed goes again
        registry.delete(record, readRecord().version()).join();
        assertEquals(Outcome.OVERTAKEN, confirmed.change(record, readRecord(), Optional.of(standby), List.of(under))
                .get());
        assertFalse(readRecord().present());
    }

    @Test
    void aChangeOverwrittenBeforeItIsUndoneStaysAsTheLaterWriterMadeIt() throws Exception {
        directive(1, -1);
        registry.write(record, standby, -1).join();
        Under under = Under.of(directive, registry.readDirective().join());
        directive(2, 0);
        BookieClusterRecord active = standby.withStatus(ClusterStatus.ACTIVE);
        // the switch's follow-up marks c ACTIVE right after our write
        when = directive::equals;
        meanwhile = () -> registry.update(record, BookieClusterRecord.class, cur -> cur.map(c -> active));

        assertEquals(Outcome.OVERTAKEN, deprecate(readRecord(), List.of(under)));
        assertEquals(active, readRecord().value());
    }

    @Test
    void everyNodeDecidedUnderIsConfirmedAnAbsentOneByReadingIt() throws Exception {
        registry.write(record, standby, -1).join();
        Under noDirective = Under.of(directive, registry.readDirective().join());
        Under noState = Under.of(state, registry.read(state, MigrationState.class).join());
        assertEquals(MetadataPort.ABSENT, noDirective.version());

        assertEquals(Outcome.STANDS, deprecate(readRecord(), List.of(noDirective, noState)));
        assertFalse(registry.readDirective().join().present(), "nothing is created");
        assertEquals(deprecated, readRecord().value());

        // the second changed: undone although the first was confirmed
        registry.write(record, standby, readRecord().version()).join();
        registry.write(state, MigrationState.start(1, "b", "broker-1", 0), -1).join();
        assertEquals(Outcome.OVERTAKEN, deprecate(readRecord(), List.of(noDirective, noState)));
        assertEquals(standby, readRecord().value());
    }

    @Test
    void aConfirmationThatCannotBeReadUndoesTheChange() throws Exception {
        directive(1, -1);
        registry.write(record, standby, -1).join();
        Under under = Under.of(directive, registry.readDirective().join());
        failing = directive::equals;

        assertEquals(Outcome.OVERTAKEN, deprecate(readRecord(), List.of(under)));
        assertEquals(standby, readRecord().value());
    }

    @Test
    void aWriteOrAnUndoTheStoreRefusesFailsTheChange() throws Exception {
        directive(1, -1);
        registry.write(record, standby, -1).join();
        Under under = Under.of(directive, registry.readDirective().join());
        Versioned<BookieClusterRecord> read = readRecord();
        failing = record::equals;
        ExecutionException e = assertThrows(ExecutionException.class, () -> deprecate(read, List.of(under)));
        assertTrue(e.getCause().getMessage().contains("write of " + record + " failed"), e.getCause().toString());

        failing = p -> false;
        directive(2, 0);
        when = directive::equals;
        meanwhile = () -> { // the undo's write fails
            failing = record::equals;
            return CompletableFuture.completedFuture(null);
        };
        e = assertThrows(ExecutionException.class, () -> deprecate(read, List.of(under)));
        assertTrue(e.getCause().getMessage().contains("write of " + record + " failed"), e.getCause().toString());
        failing = p -> false;
        assertEquals(deprecated, readRecord().value(), "left as written: the caller is told it failed");
    }

    @Test
    void aConfirmationFailsWhenTheNodeChangedOrAppeared() {
        directive(1, -1);
        ExecutionException e = assertThrows(ExecutionException.class, () -> registry.confirm(directive, 5).get());
        assertInstanceOf(StoreFailure.VersionConflict.class, e.getCause());
        e = assertThrows(ExecutionException.class, () -> registry.confirm(directive, MetadataPort.ABSENT).get());
        assertInstanceOf(StoreFailure.VersionConflict.class, e.getCause());
        e = assertThrows(ExecutionException.class, () -> registry.confirm(state, 0).get());
        assertInstanceOf(StoreFailure.VersionConflict.class, e.getCause());
        assertEquals(0, version(directive), "nothing written");
    }

    @Test
    void anUpdateThatReadsOtherNodesDecidesAgainAfterALostRace() throws Exception {
        registry.write(record, standby, -1).join();
        int[] decisions = {0};
        when = directive::equals;
        meanwhile = () -> registry.write(record, standby.withInstanceId("id-c"), 0);
        BookieClusterRecord stored = registry.updateReading(record, BookieClusterRecord.class, cur -> {
            decisions[0]++;
            return registry.readDirective().thenApply(d -> d.present() ? Optional.empty()
                    : cur.map(c -> c.withStatus(ClusterStatus.DEPRECATED)));
        }).get();
        assertEquals(2, decisions[0], "the first decision lost to the concurrent write");
        assertEquals(standby.withInstanceId("id-c").withStatus(ClusterStatus.DEPRECATED), stored);
        assertEquals(stored, readRecord().value());
    }
}
