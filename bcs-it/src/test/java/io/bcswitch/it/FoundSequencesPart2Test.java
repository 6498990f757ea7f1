package io.bcswitch.it;

import org.junit.jupiter.api.Test;

/**
 * Part 2 of the sequences the explorer found ({@link SequenceExplorerTest#FOUND}): together the scripts take
 * longer than any other end-to-end class, so they are split over {@value SequenceExplorerTest#PARTS} classes that run
 * side by side.
 */
class FoundSequencesPart2Test {
    @Test
    void foundSequencesStayFixed() {
        SequenceExplorerTest.runScripts(SequenceExplorerTest.part(1, SequenceExplorerTest.PARTS));
    }
}
