package io.bcswitch.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.RangeTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Any view a broker can have of the ranges (some of the switches' ranges, not necessarily all, the bootstrap's
 * always) either places an id where the whole table does, or says it may be in a range it does not know. Random
 * tables and views, every id a cluster of the table could have issued: the machine looks for the next way a broker
 * could guess.
 */
class OwnershipViewsTest {
    private static final int TABLES = 300;

    @Test
    void aViewNeverPlacesAnIdElsewhereThanTheWholeTableWithoutSayingItMayNotKnow() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int t = 0; t < TABLES; t++) {
            // the whole table: each switch's range starts above every high-order value used before it
            int switches = 1 + random.nextInt(6);
            List<IdRange> all = new ArrayList<>();
            List<Long> highestUsed = new ArrayList<>();
            all.add(new IdRange("c0", 0, 0, 0));
            long hob = 0;
            for (int e = 1; e <= switches; e++) {
                long used = hob + random.nextInt(3); // the active cluster's generator moved on meanwhile
                highestUsed.add(used);
                hob = used + 1 + random.nextInt(2);
                all.add(new IdRange("c" + e, hob << 32, e, 0));
            }
            highestUsed.add(hob + random.nextInt(3));
            RangeTable whole = new RangeTable(RangeTable.FORMAT_VERSION, all);
            // a view: the bootstrap range and any of the others
            List<IdRange> seen = new ArrayList<>(List.of(all.get(0)));
            for (int e = 1; e <= switches; e++) {
                if (random.nextBoolean()) {
                    seen.add(all.get(e));
                }
            }
            Ownership view = new Ownership(new RangeTable(RangeTable.FORMAT_VERSION, seen), "x", 0);
            for (int e = 0; e <= switches; e++) {
                long first = all.get(e).firstLedgerId();
                for (long h = first >>> 32; h <= highestUsed.get(e); h++) {
                    for (long low : new long[] {0, 1, 0xFFFF_FFFFL}) {
                        long id = (h << 32) | low;
                        if (id < first) {
                            continue;
                        }
                        String issuer = "c" + e;
                        assertEquals(issuer, whole.owner(id).orElseThrow(), "the fixture itself, seed " + seed);
                        assertTrue(view.mayBeInUnknownRange(id) || view.owner(id).orElse("").equals(issuer),
                                "seed " + seed + ": view " + seen + " routes id " + id + " (issued by " + issuer
                                        + ") to " + view.owner(id) + " without refreshing");
                    }
                }
            }
        }
    }
}
