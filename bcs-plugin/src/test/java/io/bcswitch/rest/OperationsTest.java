package io.bcswitch.rest;

import static io.bcswitch.concurrent.TestWaits.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.OperationRecord;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Long operations started asynchronously: 202 with a RUNNING record at once; the synchronous answer's status and body
 * once it ends, readable through another broker; LOST when the broker running it is gone or restarted; only the
 * newest finished ones are kept.
 */
class OperationsTest {
    private MetadataStoreExtended store;
    private RegistryStore registry;
    /** Where operations start their work (the broker uses its own thread, not the metadata store's). */
    private final ExecutorService starter = Executors.newSingleThreadExecutor();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        // two live brokers, as Pulsar registers them
        store.put(RegistryStore.PULSAR_BROKER_REGISTRY + "/b1:8080", new byte[0], java.util.Optional.empty()).get();
        store.put(RegistryStore.PULSAR_BROKER_REGISTRY + "/b2:8080", new byte[0], java.util.Optional.empty()).get();
    }

    @AfterEach
    void tearDown() throws Exception {
        starter.shutdownNow();
        store.close();
    }


    private static JsonNode json(RestResponse r) {
        return Json.mapper().valueToTree(r.body());
    }

    @Test
    void startedAtOnceFinishedWithTheSynchronousAnswerAndReadableThroughAnotherBroker() throws Exception {
        Operations one = new Operations(registry, () -> "b1:8080", Clock.systemUTC(), starter);
        Operations two = new Operations(registry, () -> "b2:8080", Clock.systemUTC(), starter);
        CompletableFuture<RestResponse> work = new CompletableFuture<>();
        RestResponse started = get(one.start("drain", Map.of("cluster", "cluster-a"), () -> work));
        assertEquals(202, started.status());
        String id = json(started).get("id").asText();
        assertTrue(id.startsWith("drain-"), id);
        assertEquals("RUNNING", json(started).get("state").asText());
        assertEquals("RUNNING", json(get(two.get(id))).get("state").asText(), "b1 is live and runs it");
        assertEquals("RUNNING", json(get(one.get(id))).get("state").asText());

        work.complete(RestResponse.ok(Map.of("cluster", "cluster-a", "bytes", 440)));
        JsonNode done = awaitState(two, id, "DONE");
        assertEquals(200, done.get("httpStatus").asInt());
        assertEquals(440, done.get("result").get("bytes").asInt());
        assertEquals("cluster-a", done.get("parameters").get("cluster").asText());
        assertEquals("b1:8080", done.get("broker").asText());

        // an answer that is an error ends FAILED with that error
        RestResponse refused = get(one.start("cleanup", Map.of("srcCluster", "cluster-a"),
                () -> CompletableFuture.completedFuture(RestResponse.error(409, "a cutover is unfinished"))));
        JsonNode failed = awaitState(two, json(refused).get("id").asText(), "FAILED");
        assertEquals(409, failed.get("httpStatus").asInt());
        assertEquals("a cutover is unfinished", failed.get("result").get("reason").asText());

        JsonNode list = json(get(two.list()));
        assertEquals(2, list.size());
        assertEquals("cleanup", list.get(0).get("operation").asText(), "newest first: " + list);
        assertTrue(list.get(1).get("result").isNull(), "a listing carries no results: " + list);
        assertEquals(404, get(two.get("drain-nope")).status());
    }

    @Test
    void anOperationWhoseBrokerIsGoneOrRestartedIsLost() throws Exception {
        Operations one = new Operations(registry, () -> "b1:8080", Clock.systemUTC(), starter);
        String id = json(get(one.start("verify", Map.of("deep", true), CompletableFuture::new))).get("id").asText();
        Operations restarted = new Operations(registry, () -> "b1:8080", Clock.systemUTC(), starter);
        assertEquals("LOST", json(get(restarted.get(id))).get("state").asText(), "b1 restarted: it does not run it");
        Operations two = new Operations(registry, () -> "b2:8080", Clock.systemUTC(), starter);
        assertEquals("RUNNING", json(get(two.get(id))).get("state").asText());
        store.delete(RegistryStore.PULSAR_BROKER_REGISTRY + "/b1:8080", java.util.Optional.empty()).get();
        assertEquals("LOST", json(get(two.get(id))).get("state").asText(), "b1 is gone");
        Operations dayLater = new Operations(registry, () -> "b2:8080", Clock.offset(Clock.systemUTC(),
                Duration.ofHours(25)), starter);
        store.put(RegistryStore.PULSAR_BROKER_REGISTRY + "/b1:8080", new byte[0], java.util.Optional.empty()).get();
        assertEquals("LOST", json(get(dayLater.get(id))).get("state").asText(), "running for over a day");
    }

    @Test
    void onlyTheNewestFinishedOperationsAreKeptAndLargeResultsInChunks() throws Exception {
        long t0 = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
        // a result larger than a node should be: stored in chunks beside its record, answered whole
        String big = "x".repeat(Operations.MAX_RESULT_BYTES);
        Operations first = new Operations(registry, () -> "b1:8080",
                Clock.fixed(Instant.ofEpochMilli(t0 - 1000), ZoneOffset.UTC), starter);
        String bigId = json(get(first.start("verify", Map.of(), () -> CompletableFuture.completedFuture(
                RestResponse.ok(List.of(big, "end")))))).get("id").asText();
        JsonNode done = awaitState(first, bigId, "DONE");
        assertEquals(200, done.get("httpStatus").asInt());
        assertEquals(big, done.get("result").get(0).asText());
        assertEquals("end", done.get("result").get(1).asText());
        assertNull(done.get("resultChunks"), "answered whole, not said to be in chunks: " + done);
        OperationRecord stored = get(registry.readOperation(bigId)).value();
        assertTrue(stored.result() == null || stored.result().isNull(), "not in the record: " + stored.result());
        assertEquals(2, stored.resultChunks());
        assertEquals(2, get(registry.children(registry.paths().operationResult(bigId))).size());

        // chunks whose record is gone (removed by an older version, say) are swept by the next prune
        get(registry.writeOperationResult("verify-orphan", new byte[10], 4));
        for (int i = 0; i < Operations.KEEP + 5; i++) {
            Operations o = new Operations(registry, () -> "b1:8080",
                    Clock.fixed(Instant.ofEpochMilli(t0 + i * Operations.FOLLOW_MILLIS), ZoneOffset.UTC), starter);
            String id = json(get(o.start("drain", Map.of("n", i),
                    () -> CompletableFuture.completedFuture(RestResponse.ok(Map.of()))))).get("id").asText();
            awaitState(o, id, "DONE");
        }
        Operations last = new Operations(registry, () -> "b1:8080",
                Clock.fixed(Instant.ofEpochMilli(t0 + (Operations.KEEP + 5) * Operations.FOLLOW_MILLIS),
                        ZoneOffset.UTC), starter);
        eventually(() -> get(registry.listOperationIds()).size() == Operations.KEEP);
        JsonNode list = json(get(last.list()));
        assertEquals(Operations.KEEP + 4, list.get(0).get("parameters").get("n").asInt(), "the newest is kept");
        assertEquals(5, list.get(Operations.KEEP - 1).get("parameters").get("n").asInt(), "the oldest are gone");
        assertEquals(404, get(last.get(bigId)).status());
        assertTrue(get(store.exists(registry.paths().operationResult(bigId))) == Boolean.FALSE,
                "its chunks went with it");
        eventually(() -> !get(store.exists(registry.paths().operationResult("verify-orphan"))));
    }

    @Test
    void anAnswerTooLargeToKeepEndsTheOperationFailedSayingHowTheWorkEnded() throws Exception {
        Operations o = new Operations(registry, () -> "b1:8080", Clock.systemUTC(), starter);
        String huge = "x".repeat(Operations.MAX_RESULT_BYTES * Operations.MAX_RESULT_CHUNKS);
        String id = json(get(o.start("cleanup", Map.of(), () -> CompletableFuture.completedFuture(
                RestResponse.ok(List.of(huge)))))).get("id").asText();
        JsonNode failed = awaitState(o, id, "FAILED");
        assertEquals(Operations.TOO_LARGE, failed.get("httpStatus").asInt());
        assertTrue(failed.get("result").get("reason").asText().contains("ended with HTTP 200"), failed.toString());
        assertTrue(get(registry.listOperationResultIds()).isEmpty(), "no chunk stored");
    }

    @Test
    void anOperationThatFinishedJustNowIsKeptBeyondTheNewest() throws Exception {
        long t0 = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < Operations.KEEP + 3; i++) {
            Operations o = new Operations(registry, () -> "b1:8080",
                    Clock.fixed(Instant.ofEpochMilli(t0 + i * 1000L), ZoneOffset.UTC), starter);
            String id = json(get(o.start("verify", Map.of("n", i),
                    () -> CompletableFuture.completedFuture(RestResponse.ok(Map.of()))))).get("id").asText();
            awaitState(o, id, "DONE");
            ids.add(id);
        }
        Thread.sleep(200); // the prunes after each
        assertEquals(Operations.KEEP + 3, get(registry.listOperationIds()).size(),
                "each finished within the last minutes: its caller may still be polling it");
    }

    private static JsonNode awaitState(Operations o, String id, String state) throws Exception {
        JsonNode[] seen = new JsonNode[1];
        eventually(() -> {
            seen[0] = json(get(o.get(id)));
            return state.equals(seen[0].get("state").asText());
        });
        return seen[0];
    }

    /** Waits (10 s at most) until {@code condition} holds; the writes it waits for are asynchronous. */
    private static void eventually(java.util.concurrent.Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s");
            }
            Thread.sleep(20);
        }
    }
}
