package io.bcswitch.rest;

import static io.bcswitch.concurrent.TestWaits.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.adapter.PulsarMetadataPort;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A long route called synchronously answers what its work answers while that comes within the broker's
 * {@code operationAfterSeconds}, and becomes an operation (202, its record RUNNING, then its answer) when it runs
 * longer: never the 503 of a request that ran out of time.
 */
class RouteAnswersTest {
    /** A request check that lets the call through. */
    private static final Supplier<CompletableFuture<?>> PASSES = () -> CompletableFuture.completedFuture(null);
    private MetadataStoreExtended store;
    private RegistryStore registry;
    private Operations operations;
    private final ExecutorService starter = Executors.newSingleThreadExecutor();

    @BeforeEach
    void setUp() throws Exception {
        store = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        registry = new RegistryStore(new PulsarMetadataPort(store), new RegistryPaths("/bcs"));
        store.put(RegistryStore.PULSAR_BROKER_REGISTRY + "/b1:8080", new byte[0], java.util.Optional.empty()).get();
        operations = new Operations(registry, () -> "b1:8080", Clock.systemUTC(), starter);
    }

    @AfterEach
    void tearDown() throws Exception {
        starter.shutdownNow();
        store.close();
    }

    @Test
    void anAnswerThatComesInTimeIsTheAnswerAndRecordsNothing() throws Exception {
        RouteAnswers routes = new RouteAnswers(Runnable::run, operations, TimeUnit.SECONDS.toMillis(30));
        RestResponse r = get(routes.maybeAsync(null, "respond-async", "verify", Map.of("deep", false), PASSES,
                () -> CompletableFuture.completedFuture(RestResponse.ok(Map.of("ok", true)))));
        assertEquals(200, r.status());
        assertEquals(Map.of("ok", true), r.body());
        Thread.sleep(100);
        assertTrue(get(registry.listOperationIds()).isEmpty(), "no operation recorded");
    }

    @Test
    void workThatRunsLongerBecomesAnOperationThatEndsWithItsAnswer() throws Exception {
        RouteAnswers routes = new RouteAnswers(Runnable::run, operations, 50);
        CompletableFuture<RestResponse> work = new CompletableFuture<>();
        RestResponse r = get(routes.maybeAsync("false", "wait=5, Respond-Async", "drain",
                Map.of("cluster", "cluster-a"), PASSES,
                () -> work));
        assertEquals(202, r.status(), String.valueOf(r.body()));
        JsonNode started = Json.mapper().valueToTree(r.body());
        assertEquals("drain", started.get("operation").asText());
        assertEquals("RUNNING", started.get("state").asText());
        assertEquals("cluster-a", started.get("parameters").get("cluster").asText());
        String id = started.get("id").asText();
        assertFalse(work.isDone(), "the work goes on");

        work.complete(RestResponse.ok(Map.of("cluster", "cluster-a", "ledgers", 7)));
        JsonNode done = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            done = Json.mapper().valueToTree(get(operations.get(id)).body());
            if (!"RUNNING".equals(done.get("state").asText())) {
                break;
            }
            Thread.sleep(20);
        }
        assertEquals("DONE", done.get("state").asText(), done.toString());
        assertEquals(200, done.get("httpStatus").asInt());
        assertEquals(7, done.get("result").get("ledgers").asInt());
    }

    @Test
    void withoutOperationsTheCallWaitsForItsWork() throws Exception {
        RouteAnswers routes = new RouteAnswers(Runnable::run, null, 0);
        CompletableFuture<RestResponse> work = new CompletableFuture<>();
        CompletableFuture<RestResponse> answer = routes.maybeAsync(null, "respond-async", "verify", Map.of(), PASSES,
                () -> work);
        Thread.sleep(100);
        assertFalse(answer.isDone());
        work.complete(RestResponse.ok(Map.of()));
        assertEquals(200, get(answer).status());
    }

    @Test
    void aCallerThatDoesNotSayItCanFollowAnOperationWaitsForTheAnswer() throws Exception {
        RouteAnswers routes = new RouteAnswers(Runnable::run, operations, 0);
        for (String prefer : new String[] {null, "return=minimal", "respond-asynchronously"}) {
            CompletableFuture<RestResponse> work = new CompletableFuture<>();
            CompletableFuture<RestResponse> answer = routes.maybeAsync(null, prefer, "verify", Map.of(), PASSES,
                    () -> work);
            Thread.sleep(50);
            assertFalse(answer.isDone(), "Prefer: " + prefer);
            work.complete(RestResponse.ok(Map.of()));
            assertEquals(200, get(answer).status());
        }
        assertTrue(get(registry.listOperationIds()).isEmpty(), "no operation recorded");
    }

    /** A call its check refuses is answered with its refusal and records nothing, even at operationAfterSeconds=0. */
    @Test
    void aRefusedCallIsNotRecordedAsAnOperation() throws Exception {
        RouteAnswers routes = new RouteAnswers(Runnable::run, operations, 0);
        CompletableFuture<RestResponse> work = new CompletableFuture<>();
        CompletableFuture<RestResponse> answer = routes.maybeAsync(null, "respond-async", "drain",
                Map.of("cluster", "cluster-x"), () -> CompletableFuture.failedFuture(
                        new IllegalArgumentException("bookie cluster 'cluster-x' is not registered")), () -> work);
        Thread.sleep(100);
        assertFalse(answer.isDone(), "it waits for the work's own answer");
        work.complete(RestResponse.error(404, "bookie cluster 'cluster-x' is not registered"));
        assertEquals(404, get(answer).status());
        assertTrue(get(registry.listOperationIds()).isEmpty(), "no operation recorded");
        assertTrue(get(registry.children("/bcs")).stream().noneMatch(c -> c.startsWith("operation")),
                "nothing written");
    }
}
