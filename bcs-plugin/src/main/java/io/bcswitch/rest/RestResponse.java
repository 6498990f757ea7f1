package io.bcswitch.rest;

import java.util.LinkedHashMap;
import java.util.Map;

/** An HTTP answer: status and a JSON-serialisable body. */
public record RestResponse(int status, Object body) {

    public static RestResponse ok(Object body) {
        return new RestResponse(200, body);
    }

    public static RestResponse error(int status, String message) {
        return new RestResponse(status, Map.of("error", message));
    }

    public static RestResponse error(int status, String message, String detailName, Object detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put(detailName, detail);
        return new RestResponse(status, body);
    }
}
