package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;

/** Topics with a JSON schema: one schema ledger each, the migration's bread and butter. */
final class SchemaTopics {
    private SchemaTopics() {
    }

    /** {@code n} topics {@code <ns>/t<i>}, each with its schema registered and one message. */
    static List<String> create(PulsarClient client, String ns, int n) throws Exception {
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String t = "persistent://" + ns + "/t" + i;
            topics.add(t);
            try (Producer<SchemaRoutingTest.V1> p = client.newProducer(Schema.JSON(SchemaRoutingTest.V1.class))
                    .topic(t).create()) {
                p.send(new SchemaRoutingTest.V1(i));
            }
        }
        return topics;
    }

    /** Every topic's schema resolves and every topic takes a typed producer's message {@code value}. */
    static void assertUsable(PulsarAdmin admin, PulsarClient client, List<String> topics, int value)
            throws Exception {
        for (String t : topics) {
            assertNotNull(admin.schemas().getSchemaInfo(t), t);
            try (Producer<SchemaRoutingTest.V1> p = client.newProducer(Schema.JSON(SchemaRoutingTest.V1.class))
                    .topic(t).sendTimeout(30, TimeUnit.SECONDS).create()) {
                p.send(new SchemaRoutingTest.V1(value));
            }
        }
    }
}
