package io.bcswitch.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The shared verdict on a message account finds each kind of wrong delivery (pure logic, no cluster). */
class MessageAccountTest {

    private static MessageAccount sent(int acked, long... failed) {
        MessageAccount a = new MessageAccount("t");
        for (long s = 0; s < acked + failed.length; s++) {
            a.attempt();
        }
        for (long s = 0; s < acked; s++) {
            a.ack(s, 1);
        }
        for (long f : failed) {
            a.fail(f, new IllegalStateException("timed out"));
        }
        return a;
    }

    @Test
    void exactDeliveryHasNoProblem() {
        MessageAccount a = sent(3);
        List.of(0L, 1L, 2L).forEach(a::receive);
        assertEquals(List.of(), a.problems(0));
        assertTrue(a.receivedAllAcked());
        assertEquals(0, a.pending());
    }

    @Test
    void eachKindOfWrongDeliveryIsNamed() {
        MessageAccount a = sent(4, 4);
        List.of(0L, 2L, 1L, 2L, 9L).forEach(a::receive);
        List<String> p = a.problems(0);
        assertTrue(p.stream().anyMatch(s -> s.startsWith("1 acknowledged but never received (first: [3])")), "" + p);
        assertTrue(p.stream().anyMatch(s -> s.startsWith("1 received more than once (first: [2])")), "" + p);
        assertTrue(p.stream().anyMatch(s -> s.startsWith("1 out of the producer's order (first: [1 after 2])")),
                "" + p);
        assertTrue(p.stream().anyMatch(s -> s.startsWith("1 received but never sent (first: [9])")), "" + p);
        assertTrue(p.stream().anyMatch(s -> s.startsWith("1 failed sends, more than the 0 allowed")), "" + p);
        assertEquals(5, p.size());
        assertEquals(4, a.problems(1).size(), "one failed send allowed");
    }

    @Test
    void orderHoldsPerPartitionAndARedeliveryIsToleratedOnlyWhereTheScenarioAllowsIt() {
        MessageAccount a = sent(5);
        // one producer's messages spread over two partitions: the consumer interleaves them
        a.receive("p-0", 0);
        a.receive("p-1", 3);
        a.receive("p-0", 1);
        a.receive("p-1", 4);
        a.receive("p-0", 2);
        assertEquals(List.of(), a.problems(0));
        assertEquals(false, a.receive("p-0", 1), "a redelivery is not a first delivery");
        assertEquals(List.of(), a.problems(0, true), "redelivered after a reconnect: allowed");
        assertEquals(1, a.problems(0).size(), "but not where delivery must be exact");
        a.receive("p-1", 2);
        assertEquals(List.of(), a.problems(0, true), "a redelivery is never out of order");
        MessageAccount b = sent(3);
        b.receive("p-1", 2);
        b.receive("p-1", 1);
        b.receive("p-0", 0);
        assertEquals(List.of("1 out of the producer's order (first: [1 after 2 on p-1])"), b.problems(0, true));
        assertEquals(List.of(), b.missing());
    }

    @Test
    void aFailedSendThatWasWrittenAfterAllIsNoLoss() {
        MessageAccount a = sent(2, 2);
        List.of(0L, 1L, 2L).forEach(a::receive);
        assertEquals(List.of(), a.problems(1));
    }

    @Test
    void aSequenceMustBeExactlyZeroToN() {
        MessageAccount.assertSequence(List.of(0L, 1L, 2L), 3, "ok");
        AssertionError e = assertThrows(AssertionError.class,
                () -> MessageAccount.assertSequence(List.of(0L, 2L, 2L), 3, "t"));
        assertTrue(e.getMessage().contains("never received (first: [1])"), e.getMessage());
        assertTrue(e.getMessage().contains("more than once (first: [2])"), e.getMessage());
        assertThrows(AssertionError.class, () -> MessageAccount.assertSequence(List.of(0L, 1L, 2L, 3L), 3, "t"));
    }
}
