package io.bcswitch.rest;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.registry.Json;
import io.bcswitch.rest.ApiErrors.ApiError;
import io.bcswitch.tuning.TuningService;
import java.io.IOException;
import java.io.InputStream;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reading a request's input: bodies (bounded, JSON objects with known fields only), fields and query flags. What
 * cannot be read is refused with a 4xx {@link ApiErrors.ApiError} before anything is done.
 */
final class RequestInput {
    private static final int MAX_BODY_BYTES = BookieClustersApi.MAX_BODY_BYTES;

    private RequestInput() {
    }

    private static Long wholeOrNull(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new ApiError(400, "field '" + field
                    + "' must be a whole number (or null for broker.conf's value)");
        }
        return v.asLong();
    }

    private static Double numberOrNull(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber()) {
            throw new ApiError(400, "field '" + field + "' must be a number (or null for broker.conf's value)");
        }
        return v.asDouble();
    }

    /**
     * The tenant, namespace and topic of {@code GET /topics/{tenant}/{namespace}/{topic}}, from what follows
     * "topics": a v2 topic's local name cannot contain '/' (it arrives URL-encoded), so exactly three non-empty
     * segments; any other shape is a malformed path (400).
     */
    static List<String> topicPath(String rest) {
        String p = rest.startsWith("/") ? rest.substring(1) : rest;
        List<String> seg = List.of((p.endsWith("/") ? p.substring(0, p.length() - 1) : p).split("/", -1));
        if (seg.size() != 3 || seg.stream().anyMatch(String::isEmpty)) {
            throw new ApiError(400, "malformed path: expected /topics/{tenant}/{namespace}/{topic} "
                    + "(a persistent topic, its local name URL-encoded)");
        }
        return seg;
    }

    /**
     * A {@code POST /tuning} body: each field given is set (a number) or goes back to broker.conf's value
     * ({@code null}); the fields not given stay as they are.
     */
    static TuningService.Change tuningChange(String contentType, byte[] body) {
        JsonNode json = jsonBody(contentType, body, new TreeSet<>(TuningService.KEYS));
        Set<String> reset = new TreeSet<>();
        json.fieldNames().forEachRemaining(f -> {
            if (json.get(f).isNull()) {
                reset.add(f);
            }
        });
        Long bytes = wholeOrNull(json, TuningService.MIGRATION_BYTES_PER_SECOND);
        Long concurrency = wholeOrNull(json, TuningService.MIGRATION_CONCURRENCY);
        if (concurrency != null && (concurrency < Integer.MIN_VALUE || concurrency > Integer.MAX_VALUE)) {
            throw new ApiError(400, "field 'migrationConcurrency' must be between 1 and 1024");
        }
        Double rate = numberOrNull(json, TuningService.CUTOVER_TOPICS_PER_SECOND);
        return new TuningService.Change(bytes, concurrency == null ? null : concurrency.intValue(), rate, reset);
    }

    /** A body that must be absent or an empty JSON object (POST /rollback, POST /migration/retry). */
    static void emptyOrEmptyObject(String contentType, byte[] body) {
        if (body.length > 0) {
            jsonBody(contentType, body, Set.of());
        }
    }

    /**
     * A true/false query parameter: absent is false, the name alone ({@code ?deep}, which arrives empty) is true.
     */
    static boolean flag(String name, String value) {
        if (value == null) {
            return false;
        }
        if (value.isEmpty() || value.equals("true")) {
            return true;
        }
        if (value.equals("false")) {
            return false;
        }
        throw new ApiError(400, "query parameter '" + name + "' must be true or false");
    }

    /**
     * Reads at most {@link BookieClustersApi#MAX_BODY_BYTES} + 1 bytes: enough to tell an oversized body without
     * buffering it all.
     */
    static byte[] read(InputStream body) {
        if (body == null) {
            return new byte[0];
        }
        try {
            return body.readNBytes(MAX_BODY_BYTES + 1);
        } catch (IOException e) {
            throw new ApiError(400, "cannot read the request body: " + e.getMessage());
        }
    }

    static boolean optionalBoolean(JsonNode json, String field, boolean dflt) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw new ApiError(400, "field '" + field + "' must be true or false");
        }
        return v.asBoolean();
    }

    static int optionalInt(JsonNode json, String field, int dflt) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 0) {
            throw new ApiError(400, "field '" + field + "' must be a whole number >= 0");
        }
        return v.asInt();
    }

    static JsonNode jsonBody(String contentType, byte[] body, Set<String> fields) {
        if (body != null && body.length > MAX_BODY_BYTES) {
            throw new ApiError(413, "request body is larger than " + MAX_BODY_BYTES + " bytes");
        }
        if (contentType == null || !contentType.toLowerCase(Locale.ROOT).split(";")[0].trim()
                .equals("application/json")) {
            throw new ApiError(415, "request body must be application/json");
        }
        if (body == null || body.length == 0) {
            throw new ApiError(400, "request body is empty; expected a JSON object");
        }
        JsonNode node;
        try {
            node = Json.mapper().reader().with(
                    DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(body);
        } catch (IOException e) {
            throw new ApiError(400, "request body is not valid JSON: " + firstLine(e.getMessage()));
        }
        if (node == null || !node.isObject()) {
            throw new ApiError(400, "request body must be a JSON object");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!fields.contains(f)) {
                throw new ApiError(400, "unknown field '" + f + "' (expected: " + String.join(", ", fields)
                        + ")");
            }
        }
        return node;
    }

    /**
     * The metadata service URI of a registration body {@code {"metadataServiceUri": ...}}; PIP-477's {@code name}
     * (it must be {@code pathName}) and {@code status} (only STANDBY: a cluster becomes ACTIVE by a switch and
     * DEPRECATED by close-client) are accepted as well.
     */
    static String registration(JsonNode json, String pathName) {
        String uri = requiredString(json, "metadataServiceUri");
        String named = optionalString(json, "name");
        if (named != null && !named.equals(pathName)) {
            throw new ApiError(400, "field 'name' ('" + named + "') must be the cluster name of the path ('"
                    + pathName + "')");
        }
        String status = optionalString(json, "status");
        if (status != null && !status.equals("STANDBY")) {
            throw new ApiError(400, "field 'status' may only be STANDBY: a cluster registers as STANDBY, becomes "
                    + "ACTIVE by a switch to it and DEPRECATED by close-client (statuses follow the switch)");
        }
        return uri;
    }

    /** A string field that may be absent (null). */
    static String optionalString(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new ApiError(400, "field '" + field + "' must be a string");
        }
        return v.asText();
    }

    static String requiredString(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            throw new ApiError(400, "field '" + field + "' is required");
        }
        if (!v.isTextual()) {
            throw new ApiError(400, "field '" + field + "' must be a string");
        }
        return v.asText();
    }

    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
