package io.bcswitch.it;

import org.junit.jupiter.api.Test;

/**
 * Part 2 of the sequences the explorer found ({@link SequenceExplorerTest#FOUND}): the scripts take the longest of
 * the end-to-end classes, so they are split in two classes that run side by side.
 */
class FoundSequencesPart2Test {
    @Test
    void foundSequencesStayFixed() {
        SequenceExplorerTest.runScripts(SequenceExplorerTest.part(1, 2));
    }
}
