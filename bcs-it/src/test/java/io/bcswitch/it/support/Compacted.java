package io.bcswitch.it.support;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;

/**
 * What a {@code readCompacted} reader sees from the start of a string topic: key to latest value. For a topic
 * compacted up to its end, and written with several values per key, that map alone does not prove the compacted
 * ledger was read: the raw backlog (kept by a long retention) gives the same map. So a key read twice fails the
 * read: only the compacted ledger holds each key once.
 */
public final class Compacted {
    private Compacted() {
    }

    public static Map<String, String> view(PulsarClient client, String topic) throws Exception {
        Map<String, String> view = new TreeMap<>();
        try (Reader<String> r = client.newReader(Schema.STRING).topic(topic).readCompacted(true)
                .startMessageId(MessageId.earliest).create()) {
            while (r.hasMessageAvailable()) {
                Message<String> m = r.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                if (view.put(m.getKey(), m.getValue()) != null) {
                    throw new IllegalStateException(topic + ": key " + m.getKey() + " read twice (at " + m.getMessageId()
                            + "): the reader got the raw backlog, not only the compacted ledger");
                }
            }
        }
        return view;
    }
}
