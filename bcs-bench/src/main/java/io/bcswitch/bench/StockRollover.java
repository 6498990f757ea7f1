package io.bcswitch.bench;

import io.bcswitch.bench.rollover.PacedRollover;
import io.bcswitch.bench.rollover.RolloverProtocolHandler;
import io.bcswitch.testkit.ProcessBroker;
import io.bcswitch.testkit.ProcessCluster;
import io.bcswitch.testkit.PulsarAccess;
import io.bcswitch.testkit.TestBroker;
import io.bcswitch.testkit.TestCluster;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The baseline of the cutover: stock Pulsar rolling the same topics over to new ledgers, with no switch. Pulsar has
 * no admin call for it, so each broker's managed ledgers are rolled with the plugin's own rollover
 * ({@link PacedRollover}), at the cutover's pace: in-process directly, on brokers that are processes of their own
 * through the rollover endpoint the bench loads into them ({@link RolloverProtocolHandler}).
 */
final class StockRollover {
    private static final Duration DEADLINE = Duration.ofMinutes(2);
    /** One for the bench's life (Java 17's client cannot be closed); the endpoint speaks HTTP/1.1. */
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private StockRollover() {
    }

    /**
     * Rolls every managed ledger whose name contains {@code namePart}, on every broker, each broker at
     * {@code topicsPerSecond}; completes when each of them writes a new ledger.
     */
    static CompletableFuture<Void> rollAll(PulsarAccess cluster, String namePart, int topicsPerSecond) {
        List<CompletableFuture<?>> each = new ArrayList<>();
        if (cluster instanceof TestCluster c) {
            for (int i = 0; i < c.brokerCount(); i++) {
                TestBroker b = c.broker(i);
                each.add(CompletableFuture.runAsync(() -> PacedRollover.rollAll(
                        b.pulsar().getDefaultManagedLedgerFactory().getManagedLedgers(),
                        name -> name.contains(namePart), topicsPerSecond, DEADLINE)));
            }
        } else if (cluster instanceof ProcessCluster c) {
            for (int i = 0; i < c.brokerCount(); i++) {
                each.add(rollOver(c.broker(i), namePart, topicsPerSecond));
            }
        } else {
            throw new IllegalArgumentException("no rollover for " + cluster);
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
    }

    private static CompletableFuture<String> rollOver(ProcessBroker broker, String namePart, int topicsPerSecond) {
        String port = broker.setting(RolloverProtocolHandler.PORT_KEY);
        URI uri = URI.create("http://127.0.0.1:" + port + RolloverProtocolHandler.PATH + "?match="
                + URLEncoder.encode(namePart, StandardCharsets.UTF_8) + "&perSecond=" + topicsPerSecond);
        HttpRequest post = HttpRequest.newBuilder(uri).timeout(DEADLINE.multipliedBy(2))
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        return HTTP.sendAsync(post, HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
            if (r.statusCode() != 200) {
                throw new IllegalStateException("rollover on broker-" + broker.index() + ": " + r.statusCode() + " "
                        + r.body().trim(), null);
            }
            return r.body();
        });
    }
}
