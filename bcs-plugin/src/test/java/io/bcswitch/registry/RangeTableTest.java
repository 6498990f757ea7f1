package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RangeTableTest {
    private static final long B_START = 2L << 32;
    private static final long C_START = 5L << 32;

    private static RangeTable abc() {
        return RangeTable.bootstrap("a", 100L)
                .with(new IdRange("b", B_START, 1, 200L))
                .with(new IdRange("c", C_START, 2, 300L));
    }

    @Test
    void ownerBelowAtAndAboveEachRangeStart() {
        RangeTable t = abc();
        assertEquals(Optional.of("a"), t.owner(0));
        assertEquals(Optional.of("a"), t.owner(1));
        assertEquals(Optional.of("a"), t.owner(Integer.MAX_VALUE));
        assertEquals(Optional.of("a"), t.owner(B_START - 1));
        assertEquals(Optional.of("b"), t.owner(B_START));
        assertEquals(Optional.of("b"), t.owner(B_START + 1));
        assertEquals(Optional.of("b"), t.owner(C_START - 1));
        assertEquals(Optional.of("c"), t.owner(C_START));
        assertEquals(Optional.of("c"), t.owner(C_START + 12345));
        assertEquals(Optional.of("c"), t.owner(Long.MAX_VALUE));
    }

    @Test
    void negativeIdsHaveNoOwner() {
        RangeTable t = abc();
        assertEquals(Optional.empty(), t.owner(-1));
        assertEquals(Optional.empty(), t.owner(Long.MIN_VALUE));
    }

    @Test
    void idsBelowTheFirstRangeHaveNoOwner() {
        RangeTable t = new RangeTable(RangeTable.FORMAT_VERSION, List.of(new IdRange("b", B_START, 1, 0L)));
        assertEquals(Optional.empty(), t.owner(0));
        assertEquals(Optional.empty(), t.owner(B_START - 1));
        assertEquals(Optional.of("b"), t.owner(B_START));
    }

    @Test
    void emptyTable() {
        RangeTable t = new RangeTable(RangeTable.FORMAT_VERSION, List.of());
        assertEquals(Optional.empty(), t.owner(0));
        assertEquals(Optional.empty(), t.owner(Long.MAX_VALUE));
        assertEquals(Optional.empty(), t.last());
        assertEquals(-1L, t.lastEpoch());
        assertEquals(0L, t.maxHighOrderBits());
        RangeTable one = t.with(new IdRange("x", 0, 0, 1L));
        assertEquals(Optional.of("x"), one.owner(42));
    }

    @Test
    void bootstrapTable() {
        RangeTable t = RangeTable.bootstrap("a", 77L);
        assertEquals(RangeTable.FORMAT_VERSION, t.formatVersion());
        assertEquals(List.of(new IdRange("a", 0L, 0L, 77L)), t.ranges());
        assertEquals(0L, t.lastEpoch());
        assertEquals(0L, t.maxHighOrderBits());
    }

    @Test
    void lastEpochAndMaxHighOrderBits() {
        RangeTable t = abc();
        assertEquals(2L, t.lastEpoch());
        assertEquals(5L, t.maxHighOrderBits());
        assertEquals("c", t.last().orElseThrow().cluster());
        assertEquals(5L, new IdRange("c", C_START + 99, 2, 0).highOrderBits());
    }

    @Test
    void withIsIdempotentByEpoch() {
        RangeTable t = abc();
        // same epoch, even with different content, is "already there": nothing is added or replaced
        assertSame(t, t.with(new IdRange("b", B_START, 1, 200L)));
        assertSame(t, t.with(new IdRange("zzz", 9L << 32, 1, 999L)));
        assertEquals(3, t.ranges().size());
        assertEquals(Optional.of("b"), t.owner(B_START));
    }

    @Test
    void withAppendsAndKeepsEpochOrder() {
        RangeTable t = abc();
        RangeTable next = t.with(new IdRange("a", 7L << 32, 3, 400L));
        assertEquals(List.of(0L, 1L, 2L, 3L), next.ranges().stream().map(IdRange::epoch).toList());
        assertEquals(Optional.of("a"), next.owner(7L << 32));
        assertEquals(Optional.of("c"), next.owner((7L << 32) - 1));
        // the original is unchanged (immutable)
        assertEquals(3, t.ranges().size());

        // a range learned out of order (epoch 1 after epoch 2) is put in epoch order
        RangeTable gap = RangeTable.bootstrap("a", 0).with(new IdRange("c", C_START, 2, 0));
        RangeTable filled = gap.with(new IdRange("b", B_START, 1, 0));
        assertEquals(List.of("a", "b", "c"), filled.ranges().stream().map(IdRange::cluster).toList());
        assertEquals(Optional.of("b"), filled.owner(B_START + 3));
    }

    @Test
    void withRejectsNonIncreasingStarts() {
        RangeTable t = abc();
        IllegalArgumentException same = assertThrows(IllegalArgumentException.class,
                () -> t.with(new IdRange("d", C_START, 3, 0)));
        assertTrue(same.getMessage().contains("does not start above"), same.getMessage());
        assertThrows(IllegalArgumentException.class, () -> t.with(new IdRange("d", B_START, 3, 0)));
        assertThrows(IllegalArgumentException.class, () -> t.with(new IdRange("d", 0, 3, 0)));
        // out-of-order epoch that would sit between ranges but starts above its successor
        RangeTable gap = RangeTable.bootstrap("a", 0).with(new IdRange("c", C_START, 2, 0));
        assertThrows(IllegalArgumentException.class, () -> gap.with(new IdRange("b", 6L << 32, 1, 0)));
        // and a rejected range leaves the table as it was
        assertEquals(3, t.ranges().size());
    }

    @Test
    void constructorCopiesTheList() {
        List<IdRange> list = new ArrayList<>(List.of(new IdRange("a", 0, 0, 0)));
        RangeTable t = new RangeTable(1, list);
        list.add(new IdRange("b", B_START, 1, 0));
        assertEquals(1, t.ranges().size());
        assertThrows(UnsupportedOperationException.class, () -> t.ranges().add(new IdRange("x", 1, 9, 0)));
    }

    @Test
    void jsonRoundTrip() {
        RangeTable t = abc();
        RangeTable back = Json.read(Json.write(t), RangeTable.class);
        assertEquals(t, back);
        assertEquals(Optional.of("b"), back.owner(B_START));
        // derived values are not persisted
        String json = Json.writeString(t);
        assertTrue(!json.contains("lastEpoch") && !json.contains("maxHighOrderBits") && !json.contains("\"last\""),
                json);
    }
}
