package io.bcswitch.rest;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The API's own words reached through the cluster-name route ({@code /{name}}): Jersey falls back to the name
 * template when the word's route does not take the method. Such a word is refused as a route (405 for a method its
 * route does not take, 404 for the first segment of a longer route alone, {@code /drain}, {@code /precheck}), not
 * looked up as a cluster; a word that is only reserved ({@code brokers}) goes on and is refused as a name.
 */
final class ApiWords {
    /** The single-word routes and the methods each takes. */
    private static final Map<String, String> WORD_ROUTES = Map.of("status", "GET", "switch", "POST",
            "rollback", "POST", "cleanup", "POST", "cleanup-targets", "GET", "verify", "GET", "operations", "GET",
            "tuning", "GET, POST", "topics", "GET", "read-mode", "POST");

    /** First segments of longer routes only ({@code internal}: PIP-477's hidden RPC, which has no use here). */
    private static final Set<String> PREFIXES_ONLY = Set.of("migration", "drain", "close-client", "precheck",
            "internal");

    private ApiWords() {
    }

    /** The answer to {@code method} on {@code /name} when {@code name} is one of the API's words; else empty. */
    static Optional<RestResponse> refusal(String name, String method) {
        if (PREFIXES_ONLY.contains(name)) {
            return Optional.of(RestResponse.error(404, "no such endpoint: /" + name));
        }
        String allowed = WORD_ROUTES.get(name);
        if (allowed != null) {
            return Optional.of(RestResponse.error(405, "method " + method + " is not allowed here (allowed: "
                    + allowed + ")"));
        }
        return Optional.empty();
    }
}
