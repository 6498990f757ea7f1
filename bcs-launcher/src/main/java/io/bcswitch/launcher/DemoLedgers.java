package io.bcswitch.launcher;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;

/**
 * Schema ledgers (one per typed topic) and a compacted ledger on {@code cluster-a}: the migration moves metadata
 * ledgers, not data ledgers, so without these the demo's topics would give it little to move.
 */
final class DemoLedgers {
    private final Options options;
    private final PrintStream out;

    DemoLedgers(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /** Sample record for the typed topics. */
    public static final class Sample {
        public int id;
        public String text;

        public Sample() {
        }

        Sample(int id, String text) {
            this.id = id;
            this.text = text;
        }
    }

    void create(PulsarClient client, PulsarAdmin admin, String namespace) throws Exception {
        if (options.schemaTopics == 0 && options.compactedMb == 0) {
            return;
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < options.schemaTopics; i++) {
            try (var p = client.newProducer(Schema.JSON(Sample.class))
                    .topic("persistent://" + namespace + "/typed-" + i).create()) {
                p.send(new Sample(i, "schema " + i));
            }
        }
        int keys = options.compactedMb * 1024;
        if (keys > 0) {
            String compacted = "persistent://" + namespace + "/compacted";
            String value = "x".repeat(1000);
            try (var p = client.newProducer(Schema.STRING).topic(compacted)
                    .batchingMaxMessages(500).create()) {
                List<CompletableFuture<?>> sends = new ArrayList<>();
                for (int k = 0; k < keys; k++) {
                    sends.add(p.newMessage().key("key-" + k).value(value).sendAsync());
                }
                CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get();
            }
            admin.topics().triggerCompaction(compacted);
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (admin.topics().compactionStatus(compacted).status != LongRunningProcessStatus.Status.SUCCESS
                    && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
        }
        out.printf("  on %s: %d topics with a schema (one schema ledger each) and a compacted topic of %d keys x "
                + "1 KB, in %.1f s%n", Launcher.CLUSTER_A, options.schemaTopics, keys, (System.nanoTime() - t0) / 1e9);
    }
}
