package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
                "topicsMoved", "topicsFailed", "startedAt", "finishedAt"), fieldNames(r));
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
