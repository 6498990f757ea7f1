package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * "Yesterday's payloads still parse": JSON exactly as written by formatVersion 1 (with an extra field a
 * later version might add) reads back into the expected records, and today's writer still produces the
 * same field names.
 */
class PersistedFormatTest {

    private static <T> T read(String json, Class<T> type) {
        return Json.read(json.getBytes(StandardCharsets.UTF_8), type);
    }

    private static Set<String> fieldNames(Object value) {
        try {
            JsonNode n = Json.mapper().readTree(Json.write(value));
            Set<String> names = new HashSet<>();
            n.fieldNames().forEachRemaining(names::add);
            return names;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void bookieClusterRecordV1() {
        String json = "{\"formatVersion\":1,\"name\":\"east\","
                + "\"metadataServiceUri\":\"zk+hierarchical://zk1:2181;zk2:2181/ledgers\","
                + "\"status\":\"STANDBY\",\"registeredAt\":1700000000000,"
                + "\"addedInV2\":{\"nested\":[1,2,3]}}";
        assertEquals(new BookieClusterRecord(1, "east", "zk+hierarchical://zk1:2181;zk2:2181/ledgers",
                ClusterStatus.STANDBY, 1700000000000L), read(json, BookieClusterRecord.class));
        for (ClusterStatus s : ClusterStatus.values()) {
            String j = "{\"formatVersion\":1,\"name\":\"n\",\"metadataServiceUri\":\"u\",\"status\":\"" + s
                    + "\",\"registeredAt\":5}";
            assertEquals(s, read(j, BookieClusterRecord.class).status());
        }
        assertEquals(Set.of("formatVersion", "name", "metadataServiceUri", "status", "registeredAt"),
                fieldNames(new BookieClusterRecord(1, "n", "u", ClusterStatus.ACTIVE, 1L)));
    }

    @Test
    void rangeTableV1() {
        String json = "{\"formatVersion\":1,\"ranges\":["
                + "{\"cluster\":\"east\",\"firstLedgerId\":0,\"epoch\":0,\"since\":1700000000000},"
                + "{\"cluster\":\"west\",\"firstLedgerId\":8589934592,\"epoch\":1,\"since\":1700000100000,"
                + "\"note\":\"unknown\"}],\"compactedAt\":12}";
        RangeTable t = read(json, RangeTable.class);
        assertEquals(new RangeTable(1, List.of(new IdRange("east", 0, 0, 1700000000000L),
                new IdRange("west", 2L << 32, 1, 1700000100000L))), t);
        assertEquals("west", t.owner(2L << 32).orElseThrow());
        assertEquals("east", t.owner((2L << 32) - 1).orElseThrow());
        assertEquals(Set.of("formatVersion", "ranges"), fieldNames(t));
    }

    @Test
    void bootstrapRecordV1() {
        String json = "{\"formatVersion\":1,\"cluster\":\"east\",\"ts\":1700000000000,\"writtenBy\":\"broker-1\"}";
        assertEquals(new BootstrapRecord(1, "east", 1700000000000L), read(json, BootstrapRecord.class));
        assertEquals(Set.of("formatVersion", "cluster", "ts"), fieldNames(new BootstrapRecord(1, "e", 1)));
    }

    @Test
    void switchDirectiveV1() {
        String json = "{\"formatVersion\":1,\"target\":\"west\",\"origin\":\"east\",\"epoch\":3,"
                + "\"ts\":1700000200000,\"firstLedgerId\":21474836480,\"reason\":\"maintenance\"}";
        SwitchDirective d = read(json, SwitchDirective.class);
        assertEquals(new SwitchDirective(1, "west", "east", 3, 1700000200000L, 5L << 32), d);
        assertEquals(new IdRange("west", 5L << 32, 3, 1700000200000L), d.range());
        assertEquals(Set.of("formatVersion", "target", "origin", "epoch", "ts", "firstLedgerId"), fieldNames(d));
    }

    @Test
    void switchPreparationV1() {
        String json = "{\"formatVersion\":1,\"target\":\"west\",\"epoch\":3,\"firstLedgerId\":21474836480,"
                + "\"ts\":1700000200000,\"by\":\"broker-2\"}";
        SwitchPreparation p = read(json, SwitchPreparation.class);
        assertEquals(new SwitchPreparation(1, "west", 3, 5L << 32, 1700000200000L), p);
        assertEquals(Set.of("formatVersion", "target", "epoch", "firstLedgerId", "ts"), fieldNames(p));
    }

    @Test
    void brokerCutoverRecordV1() {
        String json = "{\"formatVersion\":1,\"broker\":\"broker-1:8080\",\"appliedEpoch\":2,"
                + "\"activeCluster\":\"west\",\"topicsTotal\":10,\"topicsMoved\":9,\"topicsFailed\":1,"
                + "\"startedAt\":1700000300000,\"finishedAt\":1700000301000,\"host\":{\"cpu\":4}}";
        BrokerCutoverRecord r = read(json, BrokerCutoverRecord.class);
        assertEquals(new BrokerCutoverRecord(1, "broker-1:8080", 2, "west", 10, 9, 1, 1700000300000L,
                1700000301000L), r);
        assertTrue(r.done());
        String running = "{\"formatVersion\":1,\"broker\":\"b\",\"appliedEpoch\":2,\"activeCluster\":\"west\","
                + "\"topicsTotal\":10,\"topicsMoved\":3,\"topicsFailed\":0,\"startedAt\":5,\"finishedAt\":0}";
        assertFalse(read(running, BrokerCutoverRecord.class).done());
        assertEquals(Set.of("formatVersion", "broker", "appliedEpoch", "activeCluster", "topicsTotal",
                "topicsMoved", "topicsFailed", "startedAt", "finishedAt", "activationAttempts", "preparedFirstLedgerId"),
                fieldNames(r));
        assertEquals(0, r.preparedFirstLedgerId(), "a record written before switches were announced: none prepared");
        // what a broker with open handles and a failed activation writes
        BrokerCutoverRecord full = r.withActivation("cannot build c's client", 3)
                .withHandles(java.util.Map.of("a", 2, "b", 9), java.util.Map.of("a", List.of(7L, 8L)));
        assertEquals(full, Json.read(Json.write(full), BrokerCutoverRecord.class));
        assertTrue(full.holdsOpen("a", 7));
        assertFalse(full.holdsOpen("a", 9));
        assertFalse(full.holdsOpen("b", 7), "ids are listed for clusters other than the active one only");
    }

    @Test
    void relocationV1AsWrittenBeforeAndWithItsPreviousHome() {
        // an earlier version's one-node-per-ledger payload
        Relocation old = read("{\"formatVersion\":1,\"ledgerId\":12,\"home\":\"b\",\"from\":\"a\","
                + "\"kind\":\"SCHEMA\",\"switchEpoch\":1,\"promotedAt\":1700000600000}", Relocation.class);
        assertEquals(new Relocation(1, 12, "b", "a", "SCHEMA", 1, 1700000600000L), old);
        assertEquals(null, old.previousHome());
        assertTrue(old.beforeThisSwitch().isEmpty(), "a rollback sends reads back to the original");
        assertEquals(Set.of("formatVersion", "ledgerId", "home", "from", "kind", "switchEpoch", "promotedAt"),
                fieldNames(old));
        Relocation again = read("{\"formatVersion\":1,"
                + "\"ledgerId\":12,\"home\":\"c\",\"from\":\"a\",\"kind\":\"SCHEMA\",\"switchEpoch\":2,"
                + "\"promotedAt\":5,\"previousHome\":\"b\",\"previousSwitchEpoch\":1}", Relocation.class);
        assertEquals("c", again.home());
        assertEquals(new Relocation(1, 12, "b", "a", "SCHEMA", 1, 5), again.beforeThisSwitch().orElseThrow());
        assertEquals(again, Json.read(Json.write(again), Relocation.class));
    }

    @Test
    void migrationStateV1WithTheListsOfAnEarlierVersion() {
        // written before copies lived in chunks: built and pendingDeletions inside the state
        String json = "{\"formatVersion\":1,\"switchEpoch\":3,\"target\":\"b\",\"phase\":\"ROLLED_BACK\","
                + "\"owner\":\"x:8080\",\"startedAt\":1,\"updatedAt\":2,\"finishedAt\":2,\"planned\":2,"
                + "\"copied\":2,\"alreadyPresent\":0,\"promoted\":0,\"failed\":0,\"skipped\":0,"
                + "\"collisions\":0,\"bytesCopied\":10,\"issues\":[],\"built\":[7,8],"
                + "\"pendingDeletions\":[7,8],\"deleteAfterRelocationEpoch\":4,\"originalsDeleted\":0}";
        MigrationState s = read(json, MigrationState.class);
        assertEquals(List.of(7L, 8L), s.pendingDeletions());
        assertEquals(Phase.ROLLED_BACK, s.phase());
        assertTrue(s.deletionsPending(), "the legacy list is still deleted");
        assertEquals(0, s.copies());
        assertEquals(null, s.rollbackTo());
        assertEquals(0, s.bytesRemaining(), "written before the bytes remaining were kept");
        MigrationState now = MigrationState.start(4, "c", "y:8080", 9).moveTo(Phase.ROLLING_BACK, 10).edit()
                .rollback("a", "metadata of a did not answer", 0).copies(150_000).build();
        assertEquals(now, Json.read(Json.write(now), MigrationState.class));
        MigrationState building = MigrationState.start(5, "c", "y:8080", 9).moveTo(Phase.BUILD, 10).edit()
                .bytesRemaining(4_096).build();
        assertEquals(4_096, Json.read(Json.write(building), MigrationState.class).bytesRemaining());
        assertEquals(0, building.moveTo(Phase.PROMOTE, 11).bytesRemaining(), "nothing is left to copy after BUILD");
        // written before runs held tokens: token 0, which the next take-over raises
        assertEquals(0, s.runToken());
        MigrationState takenOver = s.edit().nextRunToken().nextRunToken().build();
        assertEquals(2, takenOver.runToken());
        assertEquals(takenOver, Json.read(Json.write(takenOver), MigrationState.class));
        assertTrue(fieldNames(takenOver).contains("runToken"));
        assertEquals(0, s.rollbackAskedAt(), "written before the time a rollback was asked was kept");
        MigrationState asked = now.edit().rollbackAskedAt(10).build();
        assertEquals(10, Json.read(Json.write(asked), MigrationState.class).rollbackAskedAt());
        assertEquals(10, asked.moveTo(Phase.ROLLED_BACK, 12).rollbackAskedAt(), "kept when the rollback is done");
    }

    @Test
    void phasesMoveOnlyAsTheTableSays() {
        assertTrue(Phase.PENDING.canMove(Phase.BUILD));
        assertTrue(Phase.DONE.canMove(Phase.BUILD), "retry");
        assertTrue(Phase.PROMOTE.canMove(Phase.ROLLING_BACK));
        assertFalse(Phase.ROLLED_BACK.canMove(Phase.BUILD));
        assertFalse(Phase.BUILD.canMove(Phase.DONE), "never DONE without PROMOTE");
        assertFalse(Phase.SUPERSEDED.canMove(Phase.ROLLING_BACK));
        assertThrows(IllegalStateException.class, () -> MigrationState.start(1, "b", "x", 0).moveTo(Phase.DONE, 1));
    }

    @Test
    void newRecordsV1() {
        IdWatermark w = read("{\"formatVersion\":1,\"cluster\":\"a\",\"maxHighOrderBits\":5,\"maxLedgerId\":"
                + "21474836490,\"observedAt\":7,\"source\":\"precheck\",\"later\":true}", IdWatermark.class);
        assertEquals(5, w.highestKnownBits());
        assertEquals(null, w.raisedBy(5, 100, 8, "x"), "nothing new: no write");
        assertEquals(6, w.raisedBy(6, -1, 8, "switch").maxHighOrderBits());
        IdChunk c = read("{\"formatVersion\":1,\"ids\":[1,2,3]}", IdChunk.class);
        assertEquals(List.of(1L, 2L, 3L), c.ids());
        assertEquals(0, c.token(), "written before runs held tokens");
        IdChunk fenced = new IdChunk(1, List.of(4L), 3);
        assertEquals(fenced, Json.read(Json.write(fenced), IdChunk.class));
        assertEquals(Set.of("formatVersion", "ids", "token"), fieldNames(fenced));
        BookieClusterRecord withId = read("{\"formatVersion\":1,\"name\":\"b\",\"metadataServiceUri\":\"u\","
                + "\"status\":\"STANDBY\",\"registeredAt\":1,\"instanceId\":\"6f1c\"}", BookieClusterRecord.class);
        assertEquals("6f1c", withId.instanceId());
        assertEquals("6f1c", withId.withStatus(ClusterStatus.ACTIVE).instanceId());
        RelocationEpoch tooMany = new RelocationEpoch(1, 3, 0, null);
        assertEquals(Set.of("formatVersion", "epoch", "ts"), fieldNames(tooMany));
    }

    @Test
    void tuningOverridesV1WithSomeKeysLeftToBrokerConf() {
        TuningOverrides t = read("{\"formatVersion\":1,\"migrationBytesPerSecond\":5000000,"
                + "\"migrationConcurrency\":null,\"cutoverTopicsPerSecond\":12.5,\"updatedAt\":9,\"later\":1}",
                TuningOverrides.class);
        assertEquals(new TuningOverrides(1, 5_000_000L, null, 12.5, 9), t);
        assertEquals(new TuningOverrides(1, null, null, null, 0), read("{\"formatVersion\":1}", TuningOverrides.class));
        assertEquals(Set.of("formatVersion", "migrationBytesPerSecond", "migrationConcurrency",
                "cutoverTopicsPerSecond", "updatedAt"), fieldNames(t));
    }

    @Test
    void operationV1RunningAndFinished() {
        OperationRecord running = read("{\"formatVersion\":1,\"id\":\"drain-a-1\",\"operation\":\"drain\","
                + "\"parameters\":{\"cluster\":\"cluster-a\"},\"broker\":\"b1:8080\",\"state\":\"RUNNING\","
                + "\"startedAt\":5,\"later\":1}", OperationRecord.class);
        assertEquals(new OperationRecord(1, "drain-a-1", "drain", java.util.Map.of("cluster", "cluster-a"), "b1:8080",
                "RUNNING", 5, null, null, null, null), running);
        OperationRecord done = read("{\"formatVersion\":1,\"id\":\"drain-a-1\",\"operation\":\"drain\","
                + "\"parameters\":{},\"broker\":\"b1:8080\",\"state\":\"DONE\",\"startedAt\":5,\"finishedAt\":9,"
                + "\"httpStatus\":200,\"result\":{\"bytes\":440}}", OperationRecord.class);
        assertEquals(440, done.result().get("bytes").asInt());
        assertNull(done.resultChunks(), "format 1 without chunks: the result is in the record");
        assertEquals(Set.of("formatVersion", "id", "operation", "parameters", "broker", "state", "startedAt",
                "finishedAt", "httpStatus", "result"), fieldNames(done), "written as format 1 wrote it");
        assertTrue(fieldNames(done.finished(200, null, 3, 9)).contains("resultChunks"), "said where it is in chunks");
    }

    @Test
    void relocationEpochV1WithAndWithoutTheChangedIds() {
        // as written before epochs listed their changes, and as a broker's applied record: re-read everything
        RelocationEpoch old = read("{\"formatVersion\":1,\"epoch\":7,\"ts\":1700000400000}", RelocationEpoch.class);
        assertEquals(new RelocationEpoch(1, 7, 1700000400000L), old);
        assertEquals(null, old.changed());
        assertEquals(Set.of("formatVersion", "epoch", "ts"), fieldNames(old));
        RelocationEpoch listed = read("{\"formatVersion\":1,\"epoch\":8,\"ts\":1700000500000,"
                + "\"changed\":[12,13]}", RelocationEpoch.class);
        assertEquals(List.of(12L, 13L), listed.changed());
        assertEquals(Set.of("formatVersion", "epoch", "ts", "changed"), fieldNames(listed));
        assertEquals(listed, Json.read(Json.write(listed), RelocationEpoch.class));
        // written before changes were marked: announced
        assertFalse(listed.unannounced());
        assertEquals(8, listed.covering());
        RelocationEpoch marked = read("{\"formatVersion\":1,\"epoch\":8,\"ts\":1700000500000,"
                + "\"changed\":[12,13],\"unannounced\":true}", RelocationEpoch.class);
        assertEquals(new RelocationEpoch(1, 8, 1700000500000L, List.of(12L, 13L), true), marked);
        assertEquals(Set.of("formatVersion", "epoch", "ts", "changed", "unannounced"), fieldNames(marked));
        assertEquals(marked, Json.read(Json.write(marked), RelocationEpoch.class));
    }

    @Test
    void roundTripOfEveryRecord() {
        List<Object> values = List.of(
                new BookieClusterRecord(1, "a", "zk://h:1/l", ClusterStatus.DEPRECATED, 9L),
                RangeTable.bootstrap("a", 1).with(new IdRange("b", 1L << 32, 1, 2)),
                new BootstrapRecord(1, "a", 3L),
                new SwitchDirective(1, "b", "a", 1, 4L, 1L << 32),
                new BrokerCutoverRecord(1, "x", 1, "b", 3, 2, 1, 5L, 6L));
        for (Object v : values) {
            assertEquals(v, Json.read(Json.write(v), v.getClass()), v.getClass().getSimpleName());
        }
    }

    @Test
    void garbageIsReportedWithTheTypeName() {
        UncheckedIOException e = assertThrows(UncheckedIOException.class,
                () -> read("{not json", SwitchDirective.class));
        assertTrue(e.getMessage().contains("SwitchDirective"), e.getMessage());
    }
}
