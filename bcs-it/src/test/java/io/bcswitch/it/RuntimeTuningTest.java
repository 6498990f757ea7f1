package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.Tuning;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pacing settings changed while the brokers run: a change made through one broker (the Java admin client) is
 * applied by every broker within seconds, shown in status, kept across a broker restart, and a reset goes back to
 * each broker's broker.conf value.
 */
class RuntimeTuningTest extends ClusterTestBase {

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
}
