package io.bcswitch.it.support;

import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;

/** Messages "p:{seq}" written in lock-step to several topics ({@link MessageAccount#assertSequence} reads them back). */
public final class Sequences {
    private Sequences() {
    }

    /** One unbatched producer named "p" per topic. */
    public static List<Producer<String>> producers(PulsarClient client, List<String> topics)
            throws PulsarClientException {
        List<Producer<String>> out = new ArrayList<>();
        for (String t : topics) {
            out.add(client.newProducer(Schema.STRING).topic(t).producerName("p").enableBatching(false).create());
        }
        return out;
    }

    /** Sends sequence numbers {@code from .. from+count-1} to every producer; returns the next number. */
    public static long produce(List<Producer<String>> producers, long from, int count) throws PulsarClientException {
        long seq = from;
        for (int i = 0; i < count; i++, seq++) {
            for (Producer<String> p : producers) {
                p.send("p:" + seq);
            }
        }
        return seq;
    }
}
