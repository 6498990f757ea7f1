package io.bcswitch.client;

import java.util.LinkedHashMap;
import java.util.Map;

/** The JSON bodies of the API's requests that carry more than one fixed field. */
final class RequestBodies {
    private RequestBodies() {
    }

    static Map<String, Object> switchTo(String target, boolean allowUnknownSourceIds) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("target", target);
        if (allowUnknownSourceIds) {
            // sent only when set: brokers that do not know the field refuse it (400 unknown field)
            body.put("allowUnknownSourceIds", true);
        }
        return body;
    }

    static Map<String, Object> register(String metadataServiceUri, String status) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("metadataServiceUri", metadataServiceUri);
        if (status != null) {
            // sent only when given: brokers that do not know the field refuse it (400 unknown field)
            body.put("status", status);
        }
        return body;
    }

    static Map<String, Object> cleanup(String srcCluster, boolean dryRun, int maxDeletions, boolean force) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("srcCluster", srcCluster);
        body.put("dryRun", dryRun);
        body.put("maxDeletions", maxDeletions);
        body.put("force", force);
        return body;
    }
}
