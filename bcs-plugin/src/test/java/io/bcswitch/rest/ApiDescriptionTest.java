package io.bcswitch.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.registry.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The API description says what the API serves: each described route is routed (whatever the services behind it
 * answer, it is not "no such endpoint" nor "method not allowed"), routes it does not describe are not, and the
 * description is exactly the routes the resource's JAX-RS annotations declare, and the
 * OpenAPI document in docs/ is the one generated from it ({@code -Dbcs.writeDocs=true} rewrites it).
 */
class ApiDescriptionTest {
    private static final Path DOC = Path.of("..", "docs", "openapi.json");

    /** No services at all: every answer comes from the router or from the missing service behind a route. */
    private final InMemoryRest bare = new InMemoryRest(new BookieClustersApi(null, null, null));

    private RestResponse call(String method, String path) throws Exception {
        return bare.handle(method, path, "application/json", "{}".getBytes(StandardCharsets.UTF_8))
                .get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    private static String reason(RestResponse r) {
        return r.body() instanceof Map<?, ?> m ? String.valueOf(m.get("reason")) : "";
    }

    private static boolean routed(RestResponse r) {
        return r.status() != 405 && !(r.status() == 404 && reason(r).startsWith("no such endpoint"));
    }

    @Test
    void everyDescribedRouteIsServedAndOthersAreNot() throws Exception {
        List<String> missing = new ArrayList<>();
        for (ApiDescription.Route r : ApiDescription.ROUTES) {
            String path = r.path().replace("{name}", "cluster-x").replace("{id}", "drain-1-2")
                    .replace("{tenant}", "t").replace("{namespace}", "ns").replace("{topic}", "tp");
            RestResponse answer = call(r.method(), path);
            if (!routed(answer)) {
                missing.add(r.method() + " " + path + " -> " + answer.status() + " " + reason(answer));
            }
        }
        assertTrue(missing.isEmpty(), "described but not served: " + missing);
        for (String[] notServed : new String[][] {{"PUT", "/cluster-x"}, {"GET", "/switch"}, {"DELETE", "/status"},
            {"GET", "/drain"}, {"GET", "/operations/a/b"}, {"POST", "/operations"}, {"GET", "/migration/retry"},
            {"PUT", "/tuning"}, {"POST", "/verify"}, {"GET", "/cleanup"}}) {
            assertTrue(!routed(call(notServed[0], notServed[1])), String.join(" ", notServed) + " is served but not "
                    + "described");
        }
    }

    @Test
    void theDescriptionIsWhatTheResourceAnnotationsDeclare() {
        assertEquals(ApiDescription.described(), ApiDescription.served(),
                "the description and the resource's JAX-RS routes (method, path, parameters) differ");
        assertEquals(ApiDescription.ROUTES.size(), ApiDescription.served().size());
    }

    @Test
    void theShippedOpenApiDocumentIsTheGeneratedOne() throws Exception {
        String generated = Json.mapper().writerWithDefaultPrettyPrinter()
                .writeValueAsString(ApiDescription.openApi("/admin/v2/bookie-clusters")) + "\n";
        if (Boolean.getBoolean("bcs.writeDocs")) {
            Files.writeString(DOC, generated);
        }
        JsonNode doc = Json.mapper().readTree(generated);
        assertEquals(ApiDescription.ROUTES.size(), doc.get("paths").properties().stream()
                .mapToInt(e -> e.getValue().size()).sum(), "one operation per route");
        assertEquals(generated, Files.readString(DOC), DOC + " differs from what the API description generates: run "
                + "mvn -pl bcs-plugin test -Dtest=ApiDescriptionTest -Dbcs.writeDocs=true and commit it");
    }
}
