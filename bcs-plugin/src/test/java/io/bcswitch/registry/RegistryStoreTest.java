package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.concurrent.TestWaits;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The typed registry over an in-memory store: the update loop's bound, the epoch counter and the copy lists. */
class RegistryStoreTest {
    private final InMemoryMetadataPort memory = new InMemoryMetadataPort();
    private final RegistryPaths paths = new RegistryPaths("/bcs");

    @AfterEach
    void tearDown() {
        memory.close();
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    public record Counter(int n) {
    }

    /** A store where the first {@code conflicts} conditional writes of {@code path} lose a race. */
    private static final class RacingPort extends ForwardingPort {
        private final String path;
        private final int conflicts;
        final AtomicInteger attempts = new AtomicInteger();

        RacingPort(MetadataPort to, String path, int conflicts) {
            super(to);
            this.path = path;
            this.conflicts = conflicts;
        }

        @Override
        public CompletableFuture<Long> put(String p, byte[] value, Optional<Long> expected, boolean ephemeral) {
            if (p.equals(path) && expected.isPresent() && attempts.incrementAndGet() <= conflicts) {
                return CompletableFuture.failedFuture(new StoreFailure.VersionConflict(p, null));
            }
            return super.put(p, value, expected, ephemeral);
        }
    }

    private static Optional<Counter> increment(Optional<Counter> cur) {
        return Optional.of(new Counter(cur.map(Counter::n).orElse(0) + 1));
    }

    /** A store that does not answer the first {@code outages} reads (a lost connection, an expired session). */
    private static final class AwayPort extends ForwardingPort {
        private final int outages;
        final AtomicInteger reads = new AtomicInteger();

        AwayPort(MetadataPort to, int outages) {
            super(to);
            this.outages = outages;
        }

        @Override
        public CompletableFuture<Optional<Node>> get(String p) {
            return reads.incrementAndGet() <= outages ? away(p) : super.get(p);
        }

        @Override
        public CompletableFuture<List<String>> children(String p) {
            return reads.incrementAndGet() <= outages ? away(p) : super.children(p);
        }

        private static <T> CompletableFuture<T> away(String p) {
            return CompletableFuture.failedFuture(new StoreFailure.Unavailable("session expired reading " + p, null));
        }
    }

    @Test
    void aReadWhileTheStoreIsAwayIsMadeAgainUntilItAnswersWithinItsBound() throws Exception {
        new RegistryStore(memory, paths).write("/bcs/counter", new Counter(3), -1).get();
        AwayPort away = new AwayPort(memory, PatientReads.ATTEMPTS - 1);
        assertEquals(3, await(new RegistryStore(away, paths, 1).read("/bcs/counter", Counter.class)).value().n());
        assertEquals(PatientReads.ATTEMPTS, away.reads.get(), "the last allowed attempt answered");

        AwayPort listing = new AwayPort(memory, 2);
        assertEquals(List.of("counter"), await(new RegistryStore(listing, paths, 1).children("/bcs")));

        AwayPort gone = new AwayPort(memory, PatientReads.ATTEMPTS);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> await(new RegistryStore(gone, paths, 1).read("/bcs/counter", Counter.class)));
        assertInstanceOf(StoreFailure.Unavailable.class, Failures.unwrap(e));
        assertEquals(PatientReads.ATTEMPTS, gone.reads.get(), "it gives up at its bound");

        // any other failure is an answer: not read again
        AtomicInteger reads = new AtomicInteger();
        ForwardingPort broken = new ForwardingPort(memory) {
            @Override
            public CompletableFuture<Optional<Node>> get(String p) {
                reads.incrementAndGet();
                return CompletableFuture.failedFuture(new StoreFailure("no such store", null));
            }
        };
        assertThrows(ExecutionException.class, () -> await(new RegistryStore(broken, paths).read("/bcs/counter",
                Counter.class)));
        assertEquals(1, reads.get());
    }

    @Test
    void anUpdateThatLosesRacesReadsAgainUpToItsBound() throws Exception {
        RacingPort port = new RacingPort(memory, "/bcs/counter", RegistryStore.MAX_UPDATE_ATTEMPTS - 1);
        RegistryStore registry = new RegistryStore(port, paths);
        assertEquals(1, await(registry.update("/bcs/counter", Counter.class, RegistryStoreTest::increment)).n());
        assertEquals(RegistryStore.MAX_UPDATE_ATTEMPTS, port.attempts.get(), "the last allowed attempt wrote");
        assertEquals(1, await(registry.read("/bcs/counter", Counter.class)).value().n());
    }

    @Test
    void anUpdateThatLosesEveryRaceGivesUpWithTheConflictAndWritesNothing() throws Exception {
        // the port stops conflicting a little after the bound, so that a loop without its bound would write
        RacingPort port = new RacingPort(memory, "/bcs/counter", RegistryStore.MAX_UPDATE_ATTEMPTS + 5);
        RegistryStore registry = new RegistryStore(port, paths);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> await(registry.update("/bcs/counter", Counter.class, RegistryStoreTest::increment)));
        assertInstanceOf(StoreFailure.VersionConflict.class, Failures.unwrap(e));
        assertEquals(RegistryStore.MAX_UPDATE_ATTEMPTS, port.attempts.get(), "attempts made");
        assertFalse(await(registry.read("/bcs/counter", Counter.class)).present());
    }

    @Test
    void anUpdateWithNothingToChangeWritesNothingAndAnswersWhatIsStored() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        await(registry.write("/bcs/counter", new Counter(4), MetadataPort.ABSENT));
        assertEquals(4, await(registry.update("/bcs/counter", Counter.class, cur -> Optional.empty())).n());
        assertEquals(0, await(registry.read("/bcs/counter", Counter.class)).version(), "not written again");
    }

    @Test
    void theRelocationEpochCountsUpAndListsAtMostItsBoundOfChangedIds() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        assertEquals(0, await(registry.readRelocationEpoch()));
        List<Long> atBound = LongStream.range(0, RelocationEpoch.MAX_LISTED).boxed().toList();
        assertEquals(1, await(registry.bumpRelocationEpoch(10, atBound)));
        assertEquals(atBound, await(registry.readRelocationEpochRecord()).changed());
        List<Long> overBound = LongStream.rangeClosed(0, RelocationEpoch.MAX_LISTED).boxed().toList();
        assertEquals(2, await(registry.bumpRelocationEpoch(20, overBound)));
        assertNull(await(registry.readRelocationEpochRecord()).changed(), "too many to list: re-read everything");
        assertEquals(3, await(registry.bumpRelocationEpoch(30, null)));
        RelocationEpoch third = await(registry.readRelocationEpochRecord());
        assertNull(third.changed());
        assertEquals(30, third.ts());
        assertEquals(4, await(registry.bumpRelocationEpoch(40, List.of())));
        assertEquals(List.of(), await(registry.readRelocationEpochRecord()).changed());
    }

    @Test
    void aChangeOfTheTableIsMarkedUntilABumpAnnouncesItAndAnEpochWithoutChangeKeepsTheMark() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        assertFalse(await(registry.markRelocationChange(5)), "nothing was marked before");
        RelocationEpoch marked = await(registry.readRelocationEpochRecord());
        assertEquals(new RelocationEpoch(1, 0, 5, null, true), marked);
        assertEquals(1, marked.covering(), "no broker has applied the epoch that will announce it");
        assertEquals(1, await(registry.bumpRelocationEpochWithoutChange(6)));
        RelocationEpoch still = await(registry.readRelocationEpochRecord());
        assertEquals(new RelocationEpoch(1, 1, 6, List.of(), true), still);
        assertEquals(2, still.covering());
        assertTrue(await(registry.markRelocationChange(7)), "a change before was never announced");
        assertEquals(6, await(registry.readRelocationEpochRecord()).ts(), "marked already: not written again");
        assertEquals(2, await(registry.bumpRelocationEpoch(8, List.of(3L))));
        RelocationEpoch announced = await(registry.readRelocationEpochRecord());
        assertEquals(new RelocationEpoch(1, 2, 8, List.of(3L), false), announced);
        assertEquals(2, announced.covering());
        // a mark keeps what the last epoch listed, for the brokers one epoch behind
        assertFalse(await(registry.markRelocationChange(9)));
        assertEquals(new RelocationEpoch(1, 2, 9, List.of(3L), true), await(registry.readRelocationEpochRecord()));
        assertEquals(3, await(registry.bumpRelocationEpochWithoutChange(10)));
        assertEquals(4, await(registry.bumpRelocationEpoch(11, null)));
        assertFalse(await(registry.readRelocationEpochRecord()).unannounced());
    }

    @Test
    void onlyDecimalNamesOfAtMostNineteenDigitsAreNumbers() {
        assertTrue(RegistryStore.isNumber("0"));
        assertTrue(RegistryStore.isNumber("9".repeat(19)));
        assertFalse(RegistryStore.isNumber("9".repeat(20)), "would overflow a long");
        assertFalse(RegistryStore.isNumber(""));
        assertFalse(RegistryStore.isNumber("12a"));
        assertFalse(RegistryStore.isNumber("lock"));
    }

    private static List<Long> ids(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }

    private static List<Long> concatenated(SortedMap<Integer, List<Long>> chunks) {
        List<Long> all = new ArrayList<>();
        chunks.values().forEach(all::addAll);
        return all;
    }

    @Test
    void aCopyListGrowsInBoundedChunksInOrderEachIdOnceWithoutRewritingFullChunks() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        int max = IdChunk.MAX_IDS;
        List<Long> exactlyTwo = ids(0, 2L * max);
        await(registry.appendCopies(7, 1, exactlyTwo));
        SortedMap<Integer, List<Long>> chunks = await(registry.readCopies(7));
        assertEquals(List.of(0, 1), List.copyOf(chunks.keySet()), "two full chunks, no empty third");
        assertEquals(exactlyTwo, concatenated(chunks));

        // grown by some ids (one of them twice): the full chunks are not written again
        long full = await(memory.get(paths.copiesChunk(7, 1))).orElseThrow().version();
        await(registry.appendCopies(7, 1, List.of(2L * max, 5L * max, 2L * max + 1, 2L * max + 1)));
        assertEquals(full, await(memory.get(paths.copiesChunk(7, 1))).orElseThrow().version());
        assertEquals(List.of(2L * max, 5L * max, 2L * max + 1), await(registry.readCopies(7)).get(2));
        await(registry.appendCopies(7, 1, List.of(5L * max, 7L)));
        assertEquals(List.of(2L * max, 5L * max, 2L * max + 1, 7L), await(registry.readCopies(7)).get(2),
                "an id the last chunk holds is not added again");
        await(registry.appendCopies(7, 1, List.of()));
        assertEquals(3, await(registry.readCopies(7)).size(), "nothing to append: nothing written");
        assertEquals(1, await(registry.read(paths.copiesChunk(7, 2), IdChunk.class)).value().token());
    }

    /**
     * A run that lost the migration (token 1) appends after the run that took it over (token 2) wrote: refused, and
     * nothing of the newer run's is lost; an append of the newer run to a chunk the older one wrote raises its token.
     */
    @Test
    void anAppendOfARunThatLostTheMigrationIsRefusedWhereANewerRunWrote() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        await(registry.appendCopies(4, 1, List.of(1L, 2L)));
        await(registry.appendCopies(4, 2, List.of(3L)));
        assertEquals(2, await(registry.read(paths.copiesChunk(4, 0), IdChunk.class)).value().token());
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> registry.appendCopies(4, 1, List.of(9L)).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        StaleRunException stale = (StaleRunException) e.getCause();
        assertEquals(List.of(4L, 1L, 2L), List.of(stale.epoch(), stale.token(), stale.newer()));
        assertEquals(List.of(1L, 2L, 3L), await(registry.readCopies(4)).get(0));
        // a full chunk of a newer run refuses the start of the next one too
        await(registry.appendCopies(5, 3, ids(0, IdChunk.MAX_IDS)));
        e = assertThrows(ExecutionException.class,
                () -> registry.appendCopies(5, 2, List.of(-1L)).get(TestWaits.SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(StaleRunException.class, e.getCause());
        assertEquals(1, await(registry.readCopies(5)).size());
    }

    /** A run appends a copy while a rollback's deletion takes out the ids it decided on: neither loses the other's. */
    @Test
    void anAppendAndARemovalOfTheSameChunkLoseNothing() throws Exception {
        // the removal reads the chunk, then a run appends to it before the removal writes
        String chunk = paths.copiesChunk(4, 0);
        RegistryStore other = new RegistryStore(memory, paths);
        java.util.concurrent.atomic.AtomicReference<java.util.function.Supplier<CompletableFuture<?>>> meanwhile =
                new java.util.concurrent.atomic.AtomicReference<>();
        RegistryStore registry = new RegistryStore(new ForwardingPort(memory) {
            @Override
            public CompletableFuture<Long> put(String p, byte[] value, Optional<Long> expected, boolean ephemeral) {
                var before = p.equals(chunk) ? meanwhile.getAndSet(null) : null;
                return before == null ? super.put(p, value, expected, ephemeral)
                        : before.get().thenCompose(v -> super.put(p, value, expected, ephemeral));
            }
        }, paths);
        await(registry.appendCopies(4, 1, List.of(1L, 2L)));
        meanwhile.set(() -> other.appendCopies(4, 1, List.of(3L)));
        assertEquals(1, await(registry.removeCopies(4, 0, List.of(1L, 7L))));
        assertEquals(List.of(2L, 3L), await(registry.readCopies(4)).get(0));
        // and the other way round: an append that loses to a removal appends again
        meanwhile.set(() -> other.removeCopies(4, 0, List.of(2L)));
        await(registry.appendCopies(4, 1, List.of(4L)));
        assertEquals(List.of(3L, 4L), await(registry.readCopies(4)).get(0));
    }

    /**
     * An append that fills chunk 0 and then loses every race for the new chunk 1 (other appends of the same run write
     * it each time) fails after its bounded attempts at chunk 1, and neither starts over from chunk 0 (more attempts
     * than the bound) nor writes again what it put into chunk 0.
     */
    @Test
    void anAppendThatLosesEveryRaceForTheNextChunkFailsWithoutRecordingAnIdTwice() throws Exception {
        int max = IdChunk.MAX_IDS;
        String second = paths.copiesChunk(3, 1);
        RegistryStore other = new RegistryStore(memory, paths);
        AtomicInteger races = new AtomicInteger(RegistryStore.MAX_UPDATE_ATTEMPTS);
        AtomicInteger writesOfSecond = new AtomicInteger();
        RegistryStore registry = new RegistryStore(new ForwardingPort(memory) {
            @Override
            public CompletableFuture<Long> put(String p, byte[] value, Optional<Long> expected, boolean ephemeral) {
                if (!p.equals(second)) {
                    return super.put(p, value, expected, ephemeral);
                }
                writesOfSecond.incrementAndGet();
                int race = races.getAndDecrement();
                return race <= 0 ? super.put(p, value, expected, ephemeral) : other.appendCopies(3, 1,
                        List.of((long) -race)).thenCompose(v -> super.put(p, value, expected, ephemeral));
            }
        }, paths);
        await(registry.appendCopies(3, 1, ids(0, max - 2)));
        ExecutionException lost = assertThrows(ExecutionException.class,
                () -> await(registry.appendCopies(3, 1, ids(max - 2, max + 3))));
        assertTrue(RegistryStore.isVersionConflict(lost.getCause()), lost.toString());
        assertEquals(RegistryStore.MAX_UPDATE_ATTEMPTS, writesOfSecond.get(), "attempts at chunk 1");
        SortedMap<Integer, List<Long>> chunks = await(registry.readCopies(3));
        assertEquals(ids(0, max), chunks.get(0));
        assertEquals(LongStream.rangeClosed(-RegistryStore.MAX_UPDATE_ATTEMPTS, -1).boxed().toList(), chunks.get(1),
                "only the other appends' ids in chunk 1");
    }

    @Test
    void anAppendFillsTheLastChunkUpAndStartsTheNextWithWhatDoesNotFit() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        int max = IdChunk.MAX_IDS;
        await(registry.appendCopies(2, 1, ids(0, max - 2)));
        await(registry.appendCopies(2, 1, ids(max - 2, max + 3)));
        SortedMap<Integer, List<Long>> chunks = await(registry.readCopies(2));
        assertEquals(ids(0, max), chunks.get(0));
        assertEquals(ids(max, max + 3), chunks.get(1));
        long version = await(memory.get(paths.copiesChunk(2, 1))).orElseThrow().version();
        await(registry.appendCopies(2, 1, ids(max, max + 2)));
        assertEquals(version, await(memory.get(paths.copiesChunk(2, 1))).orElseThrow().version(),
                "every id there already: nothing written");
    }

    @Test
    void appendsAndRemovalsThatLoseRacesTryAgainUpToTheUpdateBoundAndFailOnAnythingElseAtOnce() throws Exception {
        String chunk = paths.copiesChunk(6, 0);
        new RegistryStore(memory, paths).appendCopies(6, 1, List.of(1L, 2L)).get();
        RacingPort almost = new RacingPort(memory, chunk, RegistryStore.MAX_UPDATE_ATTEMPTS - 1);
        await(new RegistryStore(almost, paths).appendCopies(6, 1, List.of(3L)));
        RacingPort always = new RacingPort(memory, chunk, RegistryStore.MAX_UPDATE_ATTEMPTS);
        ExecutionException e = assertThrows(ExecutionException.class, () -> await(new RegistryStore(always, paths)
                .appendCopies(6, 1, List.of(4L))));
        assertInstanceOf(StoreFailure.VersionConflict.class, e.getCause());
        assertEquals(RegistryStore.MAX_UPDATE_ATTEMPTS, always.attempts.get());

        almost = new RacingPort(memory, chunk, RegistryStore.MAX_UPDATE_ATTEMPTS - 1);
        assertEquals(1, await(new RegistryStore(almost, paths).removeCopies(6, 0, List.of(1L))));
        RacingPort removing = new RacingPort(memory, chunk, RegistryStore.MAX_UPDATE_ATTEMPTS);
        e = assertThrows(ExecutionException.class, () -> await(new RegistryStore(removing, paths)
                .removeCopies(6, 0, List.of(2L))));
        assertInstanceOf(StoreFailure.VersionConflict.class, e.getCause());
        assertEquals(List.of(2L, 3L), await(new RegistryStore(memory, paths).readCopies(6)).get(0));

        AtomicInteger tries = new AtomicInteger();
        RegistryStore broken = new RegistryStore(new ForwardingPort(memory) {
            @Override
            public CompletableFuture<Long> put(String p, byte[] value, Optional<Long> expected, boolean ephemeral) {
                tries.incrementAndGet();
                return CompletableFuture.failedFuture(new IllegalStateException("the store is down"));
            }
        }, paths);
        e = assertThrows(ExecutionException.class, () -> await(broken.appendCopies(6, 1, List.of(4L))));
        assertEquals("the store is down", e.getCause().getMessage());
        e = assertThrows(ExecutionException.class, () -> await(broken.removeCopies(6, 0, List.of(2L))));
        assertEquals("the store is down", e.getCause().getMessage());
        assertEquals(2, tries.get(), "not tried again");
    }

    @Test
    void aDroppedListLosesAChunkAppendedToWhileItIsDropped() throws Exception {
        RegistryStore other = new RegistryStore(memory, paths);
        other.appendCopies(8, 1, List.of(1L)).get();
        String chunk = paths.copiesChunk(8, 0);
        java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean(true);
        RegistryStore registry = new RegistryStore(new ForwardingPort(memory) {
            @Override
            public CompletableFuture<Void> delete(String p, Optional<Long> expected) {
                if (p.equals(chunk) && once.getAndSet(false)) {
                    return other.appendCopies(8, 1, List.of(2L)).thenCompose(v -> super.delete(p, expected));
                }
                return super.delete(p, expected);
            }
        }, paths);
        await(registry.dropCopies(8));
        assertFalse(once.get(), "the append ran inside the drop");
        assertTrue(await(memory.get(chunk)).isEmpty());
        assertTrue(await(memory.get(paths.copies(8))).isEmpty());
    }

    @Test
    void aCopyListShrinksChunkByChunkAndIsDroppedWholeLeavingOtherSwitchesLists() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        await(registry.appendCopies(3, 1, ids(0, IdChunk.MAX_IDS + 2)));
        await(registry.appendCopies(12, 1, ids(100, 102)));
        // a stray node that is not a chunk or an epoch is never taken for one
        memory.put(paths.copiesRoot() + "/notes", new byte[] {1}, Optional.empty(), false)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
        memory.put(paths.copies(3) + "/notes", new byte[] {1}, Optional.empty(), false)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of(3L, 12L), await(registry.copyEpochs()), "numerically sorted, numbers only");

        assertEquals(1, await(registry.removeCopies(3, 1, List.of((long) IdChunk.MAX_IDS, 5L))));
        assertEquals(List.of(IdChunk.MAX_IDS + 1L), await(registry.readCopies(3)).get(1));
        assertEquals(1, await(registry.read(paths.copiesChunk(3, 1), IdChunk.class)).value().token(),
                "a removal keeps the chunk's token");
        assertEquals(0, await(registry.removeCopies(3, 1, List.of(5L))), "nothing of it there: nothing written");
        assertEquals(IdChunk.MAX_IDS, await(registry.removeCopies(3, 0, ids(0, IdChunk.MAX_IDS))));
        assertEquals(List.of(1), List.copyOf(await(registry.readCopies(3)).keySet()), "an emptied chunk is deleted");
        assertEquals(0, await(registry.removeCopies(3, 0, List.of(1L))), "already gone: nothing to do, no failure");

        memory.delete(paths.copies(3) + "/notes", Optional.empty()).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        await(registry.dropCopies(3));
        assertEquals(List.of(12L), await(registry.copyEpochs()));
        assertTrue(await(memory.children(paths.copies(3))).isEmpty(), "every chunk of the dropped list is gone");
        assertTrue(await(memory.get(paths.copies(3))).isEmpty(), "and its node");
        assertEquals(ids(100, 102), await(registry.readCopies(12)).get(0), "another switch's list is untouched");
        await(registry.dropCopies(3)); // gone already: nothing to do
    }

    @Test
    void sessionChangesOfTheStoreReachTheRegistrysListeners() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        List<MetadataPort.SessionChange> heard = new CopyOnWriteArrayList<>();
        registry.onSessionChange(heard::add);
        await(memory.expireSession());
        await(memory.get("/")); // the re-established event is queued before this answer
        assertEquals(List.of(MetadataPort.SessionChange.CONNECTION_LOST, MetadataPort.SessionChange.SESSION_LOST,
                MetadataPort.SessionChange.SESSION_REESTABLISHED), heard);
    }

    @Test
    void everyWaiterForAChangeWakesNotOnlyTheLatest() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        CompletableFuture<Void> first = registry.nextChangeAtOrBelow(paths.relocationApplied());
        CompletableFuture<Void> other = registry.nextChangeAtOrBelow(paths.tuning());
        CompletableFuture<Void> second = registry.nextChangeAtOrBelow(paths.relocationApplied());
        await(registry.write(paths.relocationApplied("broker-1"), new RelocationEpoch(1, 1, 0), MetadataPort.ABSENT));
        await(first);
        await(second);
        await(memory.get("/")); // notifications of the write are delivered before this answer
        assertFalse(other.isDone(), "a waiter elsewhere sleeps on");
        await(registry.write(paths.tuning(), TuningOverrides.NONE, MetadataPort.ABSENT));
        await(other);
    }

    private static Relocation toB(long id) {
        return new Relocation(Relocation.FORMAT_VERSION, id, "b", "a", "SCHEMA", 1, 0, null, null);
    }

    @Test
    void aRelocationChangeThatChangesNothingWritesNothingButMovesAnEarlierVersionsNodeIntoItsShard()
            throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        await(registry.updateRelocations(List.of(5L), (id, cur) -> Optional.of(toB(id))));
        long version = await(memory.get(paths.relocation(5))).orElseThrow().version();
        assertEquals(Optional.of(toB(5)),
                await(registry.updateRelocations(List.of(5L), (id, cur) -> cur)).get(5L));
        assertEquals(version, await(memory.get(paths.relocation(5))).orElseThrow().version(), "not written again");

        // an earlier version kept relocations in one flat node per ledger: read as they are, moved when touched
        await(registry.write(paths.legacyRelocation(6), toB(6), MetadataPort.ABSENT));
        assertEquals(Optional.of(toB(6)), await(registry.readRelocations(List.of(6L))).get(6L));
        assertEquals(Optional.of(toB(6)), await(registry.updateRelocations(List.of(6L), (id, cur) -> cur)).get(6L));
        assertTrue(await(memory.get(paths.legacyRelocation(6))).isEmpty(), "the earlier node is gone");
        assertEquals(Optional.of(toB(6)), await(registry.readRelocations(List.of(6L))).get(6L), "now in its shard");
        assertEquals(Optional.empty(), await(registry.readRelocations(List.of(7L))).get(7L));
    }

    @Test
    void aRelocationChangeThatLosesRacesReadsAgainUpToTheSameBound() throws Exception {
        RacingPort racing = new RacingPort(memory, paths.relocation(9), RegistryStore.MAX_UPDATE_ATTEMPTS - 1);
        RegistryStore registry = new RegistryStore(racing, paths);
        assertEquals(Optional.of(toB(9)),
                await(registry.updateRelocations(List.of(9L), (id, cur) -> Optional.of(toB(id)))).get(9L));
        assertEquals(RegistryStore.MAX_UPDATE_ATTEMPTS, racing.attempts.get());

        RacingPort losing = new RacingPort(memory, paths.relocation(10), RegistryStore.MAX_UPDATE_ATTEMPTS + 5);
        RegistryStore unlucky = new RegistryStore(losing, paths);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> await(unlucky.updateRelocations(List.of(10L), (id, cur) -> Optional.of(toB(id)))));
        assertInstanceOf(StoreFailure.VersionConflict.class, Failures.unwrap(e));
        assertEquals(RegistryStore.MAX_UPDATE_ATTEMPTS, losing.attempts.get());
        assertEquals(Optional.empty(), await(unlucky.readRelocations(List.of(10L))).get(10L), "nothing written");
    }

    /** An operation's result in chunks: written, listed, read back whole, empty once a chunk is gone, removed. */
    @Test
    void anOperationResultIsKeptInChunksAndRemovedWithThem() throws Exception {
        RegistryStore registry = new RegistryStore(memory, paths);
        byte[] result = "0123456789".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(3, await(registry.writeOperationResult("verify-1", result, 4)));
        assertEquals(java.util.List.of("0", "1", "2"), await(registry.children(paths.operationResult("verify-1")))
                .stream().sorted().toList());
        assertEquals(4, await(memory.get(paths.operationResult("verify-1") + "/0")).orElseThrow().value().length);
        assertEquals(2, await(memory.get(paths.operationResult("verify-1") + "/2")).orElseThrow().value().length);
        assertEquals("0123456789", new String(await(registry.readOperationResult("verify-1", 3)).orElseThrow(),
                java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(1, await(registry.writeOperationResult("drain-2", new byte[0], 4)), "an empty result: one chunk");
        assertEquals(java.util.List.of("drain-2", "verify-1"), await(registry.listOperationResultIds()).stream()
                .sorted().toList());

        await(memory.delete(paths.operationResult("verify-1") + "/1", Optional.empty()));
        assertTrue(await(registry.readOperationResult("verify-1", 3)).isEmpty(), "a chunk gone: no result");
        await(registry.deleteOperationResult("verify-1"));
        assertTrue(await(memory.get(paths.operationResult("verify-1"))).isEmpty(), "removed, its node too");
        assertTrue(await(registry.children(paths.operationResult("verify-1"))).isEmpty());
        await(registry.deleteOperationResult("never-1")); // none: nothing to do
        assertEquals(java.util.List.of("drain-2"), await(registry.listOperationResultIds()));
        // chunks are created, never overwritten
        assertTrue(registry.writeOperationResult("drain-2", new byte[3], 4).handle((v, e) -> e != null)
                .get(TestWaits.SECONDS, TimeUnit.SECONDS), "a second write of the same chunk fails");
    }
}
