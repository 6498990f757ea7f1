package io.bcswitch.rest;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.registry.Json;
import io.bcswitch.rest.ApiErrors.ApiError;
import java.io.IOException;
import java.io.InputStream;
import java.util.Iterator;
import java.util.Locale;
import java.util.Set;

/**
 * Reading a request's input: bodies (bounded, JSON objects with known fields only), fields and query flags. What
 * cannot be read is refused with a 4xx {@link ApiErrors.ApiError} before anything is done.
 */
final class RequestInput {
    private static final int MAX_BODY_BYTES = BookieClustersApi.MAX_BODY_BYTES;

    private RequestInput() {
    }

    static Long wholeOrNull(JsonNode json, String field) {
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

    static Double numberOrNull(JsonNode json, String field) {
        JsonNode v = json.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber()) {
            throw new ApiError(400, "field '" + field + "' must be a number (or null for broker.conf's value)");
        }
        return v.asDouble();
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
