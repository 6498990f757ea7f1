package io.bcswitch.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;

/** A compacted ledger of a given size for the migration to move: 1 KB values under distinct keys, compacted. */
final class CompactedTopic {
    private CompactedTopic() {
    }

    static void create(PulsarClient client, PulsarAdmin admin, String topic, int mb) throws Exception {
        String value = "x".repeat(1000);
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).batchingMaxMessages(500)
                .blockIfQueueFull(true).create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int k = 0; k < mb * 1024; k++) {
                sends.add(p.newMessage().key("key-" + k).value(value).sendAsync());
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        }
        admin.topics().triggerCompaction(topic);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (admin.topics().compactionStatus(topic).status != LongRunningProcessStatus.Status.SUCCESS) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("compaction of " + topic + " did not finish");
            }
            Thread.sleep(100);
        }
    }
}
