package io.bcswitch.precheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.precheck.RangeProposal.Claim;
import io.bcswitch.registry.IdSpace;
import io.bcswitch.registry.IdWatermark;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The arithmetic of a proposed range at its edges: each claim's bits, and where a range starts above them. */
class RangeProposalTest {

    @Test
    void aMarginClaimAtTheVeryStartOfTheRangeMovesItAbove() {
        RangeProposal p = RangeProposal.of(List.of(new Claim(5, true, "generator"), new Claim(6, false, "recorded")),
                "b");
        assertNull(p.problem());
        assertEquals(7, p.bits(), "a range starting at 6 would overlap ids recorded at 6");
        RangeProposal below = RangeProposal.of(List.of(new Claim(5, true, "generator"), new Claim(5, false, "old")),
                "b");
        assertEquals(6, below.bits(), "a margin under the start changes nothing");
    }

    @Test
    void theLastRangeIsUsableAndNothingAboveIt() {
        RangeProposal last = RangeProposal.of(List.of(new Claim(IdSpace.MAX_RANGE_BITS - 1, true, "generator")), "b");
        assertNull(last.problem());
        assertEquals(IdSpace.MAX_RANGE_BITS, last.bits());
        assertTrue(last.firstLedgerId() > 0);
        RangeProposal none = RangeProposal.of(List.of(new Claim(IdSpace.MAX_RANGE_BITS, true, "ledger 1 of 'b'")),
                "b");
        assertEquals("ledger 1 of 'b': no ledger-id range is left above it for a switch to 'b'", none.problem());
        assertEquals(-1, none.firstLedgerId());
    }

    @Test
    void ledgerZeroIsAClaimAndASourceLedgerAtItsGeneratorsBitsIsRequired() {
        List<Claim> zero = RangeProposal.ofFacts("a", new ClusterFacts("f", true, 0, 0, 1, 0, "i"), false);
        assertEquals(2, zero.size(), "ledger 0 counts: " + zero);
        List<Claim> source = RangeProposal.ofFacts("a", new ClusterFacts("f", true, 3, (3L << 32) + 9, 1, 0, "i"),
                false);
        assertEquals(3, source.get(1).bits());
        assertTrue(source.get(1).required(), "its own generator issued it");
        List<Claim> foreign = RangeProposal.ofFacts("a", new ClusterFacts("f", true, 3, 4L << 32, 1, 0, "i"), false);
        assertFalse(foreign.get(1).required(), "above its generator on the source: only where there is room");
        List<Claim> none = RangeProposal.ofFacts("a", new ClusterFacts("f", true, 3, -1, 1, 0, "i"), false);
        assertEquals(1, none.size(), "no ledger: only the generator");
    }

    @Test
    void anUnreadSourceMayHaveMovedOnByOneRange() {
        List<Claim> c = RangeProposal.ofUnreadSource(new IdWatermark(IdWatermark.FORMAT_VERSION, "a", 4, 7L << 32, 0,
                "precheck"));
        assertEquals(5, c.get(0).bits());
        assertTrue(c.get(0).required());
        assertEquals(8, c.get(1).bits());
        assertFalse(c.get(1).required());
        assertEquals(9, RangeProposal.of(c, "b").bits());
    }
}
