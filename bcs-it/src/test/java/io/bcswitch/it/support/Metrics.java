package io.bcswitch.it.support;

import io.bcswitch.testkit.TestBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/** What a broker's own {@code /metrics} endpoint serves, read the way Prometheus reads it. */
public final class Metrics {
    private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build();

    private Metrics() {
    }

    /** The text of {@code b}'s {@code /metrics}; fails unless it answers 200. */
    public static String scrape(TestBroker b) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(b.webServiceUrl() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError("/metrics of " + b.webServiceUrl() + " answered " + r.statusCode());
        }
        return r.body();
    }

    /**
     * The value of the one sample of {@code name} whose labels include {@code labels}; empty when there is none, an
     * error when several match (the labels given do not name one series).
     */
    public static OptionalDouble sample(String text, String name, Map<String, String> labels) {
        List<Double> found = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = labels.entrySet().stream().allMatch(l -> line.contains(l.getKey() + "=\"" + l.getValue()
                    + "\""));
            if (all) {
                found.add(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        if (found.size() > 1) {
            throw new AssertionError(name + labels + " matches several samples: " + found);
        }
        return found.isEmpty() ? OptionalDouble.empty() : OptionalDouble.of(found.get(0));
    }
}
