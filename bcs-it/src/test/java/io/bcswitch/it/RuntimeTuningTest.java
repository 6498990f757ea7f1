package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.Tuning;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The pacing settings changed while the brokers run: a change made through one broker (the Java admin client) is
 * applied by every broker within seconds, shown in status, kept across a broker restart, and a reset goes back to
 * each broker's broker.conf value. And the pace itself changes: a migration is held back by a low rate set at
 * runtime, and finishes once the rate is raised while it runs, faster than the low rate allows.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RuntimeTuningTest extends ClusterTestBase {
    /** The copy rate the migration is held at: its schema ledgers hold about 16 KB, minutes' worth at this rate. */
    private static final long SLOW = 100;

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters().brokers(2).start();
    }

    private static JsonNode tuningOn(int broker) {
        Rest.Response r = new Rest(cluster.broker(broker).webServiceUrl()).get("/tuning");
        assertEquals(200, r.status(), r.raw());
        return r.json();
    }

    /** Polls broker {@code broker}'s own values until {@code field} is {@code value} (at most 10 s). */
    private static void awaitEffective(int broker, String field, double value) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        JsonNode t = tuningOn(broker);
        while (t.get("effective").get(field).asDouble() != value && System.nanoTime() < deadline) {
            Thread.sleep(100);
            t = tuningOn(broker);
        }
        assertEquals(value, t.get("effective").get(field).asDouble(), "broker " + broker + ": " + t);
    }

    @Test
    @Order(1)
    void aChangeThroughOneBrokerIsAppliedByEveryBrokerAndSurvivesARestart() throws Exception {
        JsonNode initial = tuningOn(1);
        assertEquals(initial.get("brokerConf"), initial.get("effective"), "nothing changed yet: " + initial);
        assertEquals(1_048_576, initial.get("brokerConf").get("migrationBytesPerSecond").asLong());

        try (BookieClustersAdmin admin = BookieClustersAdmin.builder().serviceUrl(cluster.broker(0).webServiceUrl())
                .build()) {
            Tuning t = admin.setTuning(new Tuning.Change().migrationBytesPerSecond(5_000_000).migrationConcurrency(8)
                    .cutoverTopicsPerSecond(40));
            assertEquals(new Tuning.Values(5_000_000, 8, 40), t.effective(), "applied at once where it was asked");
            awaitEffective(1, "migrationBytesPerSecond", 5_000_000);
            awaitEffective(1, "migrationConcurrency", 8);
            awaitEffective(1, "cutoverTopicsPerSecond", 40);

            var status = admin.status();
            assertEquals(5_000_000L, status.tuning().migrationBytesPerSecond(), String.valueOf(status.tuning()));
            assertEquals(8, status.tuning().migrationConcurrency());

            // a broker that starts applies what is stored before it does any work
            cluster.broker(1).restart();
            JsonNode afterRestart = tuningOn(1);
            assertEquals(5_000_000, afterRestart.get("effective").get("migrationBytesPerSecond").asLong(),
                    afterRestart.toString());

            // reset: every broker goes back to its broker.conf's value; the other settings stay
            admin.setTuning(new Tuning.Change().reset("migrationConcurrency"));
            awaitEffective(0, "migrationConcurrency", 4);
            awaitEffective(1, "migrationConcurrency", 4);
            JsonNode after = tuningOn(1);
            assertEquals(5_000_000, after.get("effective").get("migrationBytesPerSecond").asLong(), after.toString());
            assertTrue(after.get("stored").get("migrationConcurrency").isNull(), after.toString());
        }
    }

    @Test
    @Order(2)
    void theMigrationCopiesAtTheRateSetAtRuntimeAndFinishesOnceItIsRaised() throws Exception {
        String ns = cluster.createTenant("paced");
        try (PulsarClient client = cluster.newClient()) {
            SchemaTopics.create(client, ns, 24);
        }
        Rest rest = new Rest(cluster.broker(1).webServiceUrl());
        try (BookieClustersAdmin admin = BookieClustersAdmin.builder().serviceUrl(cluster.broker(0).webServiceUrl())
                .build()) {
            admin.setTuning(new Tuning.Change().migrationBytesPerSecond(SLOW));
            awaitEffective(0, "migrationBytesPerSecond", SLOW);
            awaitEffective(1, "migrationBytesPerSecond", SLOW);
            assertEquals(200, rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri())
                    .status());
            Rest.Response sw = rest.switchTo("cluster-b");
            assertEquals(200, sw.status(), sw.raw());

            // held: the schema ledgers (about 16 KB, read twice: copied, then verified) take well over two minutes at
            // this rate, and under a second at broker.conf's 1 MB/s
            await("BUILD").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                JsonNode m = rest.status().get("migration");
                return m != null && !m.isNull() && m.get("phase").asText().equals("BUILD");
            });
            Thread.sleep(10_000);
            JsonNode held = rest.status().get("migration");
            assertEquals("BUILD", held.get("phase").asText(), "held in BUILD at " + SLOW + " B/s: " + held);

            // raised while it runs: what was left is copied (and read back) faster than the old rate could have
            long raised = System.nanoTime();
            admin.setTuning(new Tuning.Change().migrationBytesPerSecond(10_000_000));
            JsonNode done = rest.awaitMigrationFinished();
            long took = Math.max(1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - raised));
            assertEquals("DONE", done.get("phase").asText(), done.toString());
            assertEquals(done.get("planned").asInt(), done.get("copied").asInt() + done.get("alreadyPresent").asInt(),
                    done.toString());
            long left = done.get("bytesCopied").asLong() - held.get("bytesCopied").asLong();
            assertTrue(left * 1000 / took > SLOW, left + " bytes copied in the " + took + " ms after the raise: no "
                    + "faster than the old " + SLOW + " B/s (" + held + " -> " + done + ")");
        } finally {
            try (BookieClustersAdmin admin = BookieClustersAdmin.builder()
                    .serviceUrl(cluster.broker(0).webServiceUrl()).build()) {
                admin.setTuning(new Tuning.Change().reset("migrationBytesPerSecond"));
            }
        }
    }
}
