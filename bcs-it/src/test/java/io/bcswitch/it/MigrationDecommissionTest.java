package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.it.SchemaRoutingTest.V1;
import io.bcswitch.it.SchemaRoutingTest.V2;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.NoSchemaFallback;
import io.bcswitch.it.support.Compacted;
import io.bcswitch.it.support.LogCapture;
import io.bcswitch.it.support.Placement;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Unload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decommissioning the old bookie cluster end to end (issue acceptance 1 and 5): topics with several
 * schema versions, a compacted topic, an active and an idle subscription, short retention. Switch
 * A -> B; the migration copies and promotes the schema, cursor and compacted-topic ledgers; cleanup
 * (dry run first) never deletes a referenced ledger; retention removes A's data ledgers; the drain
 * report says A is empty; A's bookies are stopped and the broker restarted; everything still works.
 */
@ExtendWith(NoSchemaFallback.class)
class MigrationDecommissionTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(MigrationDecommissionTest.class);

    private static int metricsPort;

    @BeforeAll
    static void start() throws Exception {
        // the broker's OpenTelemetry metrics, exported the way an operator enables them (Prometheus exporter)
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            metricsPort = s.getLocalPort();
        }
        System.setProperty("otel.sdk.disabled", "false");
        System.setProperty("otel.metrics.exporter", "prometheus");
        System.setProperty("otel.exporter.prometheus.port", String.valueOf(metricsPort));
        cluster = twoBookieClusters()
                .brokerConfig(p -> {
                    p.setProperty("retentionCheckIntervalInSeconds", "1");
                    p.setProperty("forceDeleteNamespaceAllowed", "true");
                    // deduplication's snapshots of each producer's sequence id (into its cursor's properties): every
                    // 2 s here, 120 s by default
                    p.setProperty("brokerDeduplicationSnapshotFrequencyInSeconds", "1");
                    p.setProperty("brokerDeduplicationSnapshotIntervalSeconds", "2");
                })
                .start();
    }

    private static Map<String, String> schemasAndCursors() throws Exception {
        Map<String, String> all = Registry.snapshot(cluster.zkConnectString(), "/schemas", "/managed-ledgers");
        Map<String, String> out = new TreeMap<>();
        // schema locators, and cursor records (a child of a managed-ledger node: 6 path segments)
        all.forEach((path, v) -> {
            // (not deduplication's cursor: Pulsar writes its snapshots on its own)
            if (path.startsWith("/schemas") || path.split("/").length == 7 && !path.endsWith("/pulsar.dedup")) {
                out.put(path, v);
            }
        });
        return out;
    }

    @Test
    void oldClusterIsEmptiedAndCanBeSwitchedOff() throws Exception {
        String ns = cluster.createTenant("decom");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(0, 0));
        PulsarClient client = cluster.newClient();
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String typed = "persistent://" + ns + "/typed";
        String compacted = "persistent://" + ns + "/compacted";
        String idle = "persistent://" + ns + "/idle";

        // on A: two schema versions, an active subscription
        Consumer<V2> active = client.newConsumer(Schema.JSON(V2.class)).topic(typed).subscriptionName("active")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
        try (Producer<V1> p1 = client.newProducer(Schema.JSON(V1.class)).topic(typed).create();
             Producer<V2> p2 = client.newProducer(Schema.JSON(V2.class)).topic(typed).create()) {
            for (int i = 0; i < 10; i++) {
                p1.send(new V1(i));
                p2.send(new V2(100 + i, "v2"));
            }
        }
        for (int i = 0; i < 20; i++) {
            active.acknowledge(active.receive(10, TimeUnit.SECONDS));
        }
        // a compacted topic, compacted on A
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(compacted).enableBatching(false).create()) {
            for (int i = 0; i < 30; i++) {
                p.newMessage().key("k" + (i % 5)).value("v" + i).send();
            }
        }
        Compacted.compact(admin, compacted);
        Map<String, String> compactedView = Compacted.view(client, compacted);
        assertEquals(5, compactedView.size());
        // an idle subscription, caught up, on a topic that is then unloaded (its cursor ledger closed on A)
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(idle).subscriptionName("idle")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
             Producer<String> p = client.newProducer(Schema.STRING).topic(idle).create()) {
            for (int i = 0; i < 10; i++) {
                p.send("idle-" + i);
            }
            for (int i = 0; i < 10; i++) {
                c.acknowledge(c.receive(10, TimeUnit.SECONDS));
            }
        }
        Unload.cleanly(admin, idle);
        // from now on deduplication keeps each producer's last sequence id among its cursor's properties: small
        // numbers, in A's id range, that must not pin A (unregister below was refused for them)
        admin.namespaces().setDeduplicationStatus(ns, true);
        // a topic whose own retention policy (90 min) overrides its namespace's (0); in a namespace of its own,
        // deleted before A is drained (topic policies live in that namespace's __change_events system topic)
        String keptNs = ns + "-kept";
        admin.namespaces().createNamespace(keptNs);
        admin.namespaces().setRetention(keptNs, new RetentionPolicies(0, 0));
        String kept = "persistent://" + keptNs + "/kept";
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(kept).create()) {
            p.send("kept-0");
        }
        admin.topicPolicies().setRetention(kept, new RetentionPolicies(90, -1));
        await().atMost(Duration.ofSeconds(30)).until(() -> admin.topicPolicies().getRetention(kept) != null);
        Set<Long> onABefore = cluster.bookieCluster("cluster-a").ledgerIds();

        // switch A -> B; the migration runs on its own
        Rest.Response sw = rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        long firstIdOfB = sw.json().get("directive").get("firstLedgerId").asLong();
        Map<String, String> recordsBefore = schemasAndCursors();
        JsonNode migration = rest.awaitMigrationFinished();
        log.info("MIGRATION state: {}", migration);
        assertEquals("DONE", migration.get("phase").asText(), migration.toString());
        assertTrue(migration.get("promoted").asInt() >= 4, "schema versions, compacted ledger, idle cursor: "
                + migration);
        assertEquals(migration.get("planned").asInt(), migration.get("copied").asInt(), migration.toString());
        assertEquals(migration.get("planned").asInt(), migration.get("promoted").asInt(), migration.toString());
        // no cursor or schema record was rewritten by the migration
        // (the compacted topic was unloaded once its compacted view moved to B, so that its cached handle on A is let
        // go: closing its cursors rewrote the compaction cursor's record, as any unload does)
        Map<String, String> recordsAfter = schemasAndCursors();
        String compactionCursor = "/managed-ledgers/decom/ns/persistent/compacted/__compaction";
        recordsBefore.remove(compactionCursor);
        recordsAfter.remove(compactionCursor);
        assertEquals(recordsBefore, recordsAfter, "schema and cursor records are untouched by PROMOTE");
        // every relocated ledger: home on B per the registry, present on both clusters
        Map<String, String> relocations = Registry.snapshot(cluster.zkConnectString(), "/admin/bookie-clusters/relocations");
        Set<Long> onB = cluster.bookieCluster("cluster-b").ledgerIds();
        Set<Long> onA = cluster.bookieCluster("cluster-a").ledgerIds();
        int relocated = 0;
        for (String path : relocations.keySet()) {
            String last = path.substring(path.lastIndexOf('/') + 1);
            if (!last.matches("\\d+")) {
                continue;
            }
            long id = Long.parseLong(last);
            relocated++;
            assertTrue(id < firstIdOfB && onB.contains(id) && onA.contains(id), "relocated ledger " + id
                    + " is in A's range and on both clusters");
        }
        assertEquals(migration.get("promoted").asInt(), relocated);
        String metrics = scrape();
        for (String name : List.of("bookie_cluster_switch_migration_ledger_copied", "bookie_cluster_switch_migration_bytes_copied",
                "bookie_cluster_switch_migration_ledger_promoted", "bookie_cluster_switch_active")) {
            List<String> lines = metrics.lines().filter(l -> l.contains(name) && !l.startsWith("#")).toList();
            log.info("MIGRATION metric {}: {}", name, lines);
            assertFalse(lines.isEmpty(), name + " exported");
        }
        assertTrue(metrics.lines().anyMatch(l -> l.contains("bookie_cluster_switch_active")
                && l.contains("cluster-b")), "active cluster gauge names cluster-b");
        JsonNode drain = rest.get("/drain/cluster-a").json();
        log.info("MIGRATION drain report of cluster-a after migration: {}", drain);
        for (JsonNode k : drain.get("byKind")) {
            assertEquals("DATA", k.get("kind").asText(), "only data ledgers still pin A: " + drain);
        }
        // while data ledgers pin A, the plugin cannot be removed, and verify says why
        JsonNode pinned = rest.get("/verify").json().get("removal");
        log.info("MIGRATION removal verdict while A is pinned: {}", pinned);
        assertFalse(pinned.get("safe").asBoolean(), pinned.toString());
        assertTrue(pinned.get("because").get(0).asText().contains("are not on cluster-b: ledger "), pinned.toString());
        List<Long> keptOnA = Placement.ledgers(admin, kept).stream().filter(id -> id < firstIdOfB).toList();
        assertFalse(keptOnA.isEmpty());
        int keptRows = 0;
        for (JsonNode d : drain.get("dataLedgers")) {
            if (keptOnA.contains(d.get("ledgerId").asLong())) {
                keptRows++;
                assertEquals("90 min (topic " + kept + ")", d.get("retention").asText(), d.toString());
                assertTrue(d.get("removableAfter").asLong() > System.currentTimeMillis() + 80 * 60_000L, d.toString());
            }
        }
        assertEquals(keptOnA.size(), keptRows, "the topic's ledgers on A are listed: " + drain);
        assertTrue(drain.get("switchOffAfter").asLong() > System.currentTimeMillis() + 80 * 60_000L,
                "the topic's own retention decides when A can go: " + drain);

        // cleanup before retention: a dry run lists exactly what the real run deletes, never a referenced ledger
        Map<Long, String> referencedData = new TreeMap<>(); // ledger id -> its topic
        for (String t : List.of(typed, compacted, idle)) {
            for (long id : Placement.ledgers(admin, t)) {
                if (id < firstIdOfB) {
                    referencedData.put(id, t);
                }
            }
        }
        Rest.Response refusedInWindow = rest.post("/cleanup", "{\"srcCluster\":\"cluster-a\",\"dryRun\":false}");
        assertEquals(409, refusedInWindow.status(), refusedInWindow.raw());
        assertTrue(refusedInWindow.error().contains("rollback window"), refusedInWindow.raw());
        // handles the broker opened on A before the migration (cursor recovery, schema reads) are let go first.
        // A handle Pulsar drops without closing counts until it is garbage collected: a broker at work collects
        // all the time, this quiet test JVM (which runs the broker) may not for minutes, so it is asked to.
        long waitStart = System.nanoTime();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            if (System.nanoTime() - waitStart > TimeUnit.SECONDS.toNanos(40)) {
                System.gc();
            }
            JsonNode handles = rest.get("/drain/cluster-a").json().get("openHandles");
            if (!handles.isEmpty()) {
                log.info("MIGRATION handles on A after {} s: {}; broker records: {}",
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - waitStart), handles,
                        Registry.snapshot(cluster.zkConnectString(), "/admin/bookie-clusters/brokers"));
            }
            assertTrue(handles.isEmpty(), "handles still open on A: " + handles + "; broker records: "
                    + Registry.snapshot(cluster.zkConnectString(), "/admin/bookie-clusters/brokers"));
        });
        JsonNode dry = rest.post("/cleanup", "{\"srcCluster\":\"cluster-a\",\"force\":true}").json();
        log.info("MIGRATION cleanup dry run: {}", dry);
        assertTrue(dry.get("dryRun").asBoolean());
        Set<Long> planned = ids(dry.get("targets"));
        assertEquals(planned, ids(rest.get("/cleanup-targets/cluster-a").json()));
        for (long id : referencedData.keySet()) {
            assertFalse(planned.contains(id), "referenced data ledger " + id + " is not a cleanup target");
        }
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().containsAll(planned), "a dry run deletes nothing");
        JsonNode real = rest.post("/cleanup", "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"force\":true}").json();
        log.info("MIGRATION cleanup: {}", real);
        assertEquals(planned, ids(real.get("targets")));
        assertEquals(planned.size(), real.get("deleted").asInt());
        Set<Long> onAAfter = cluster.bookieCluster("cluster-a").ledgerIds();
        for (long id : planned) {
            assertFalse(onAAfter.contains(id), "deleted " + id);
        }
        for (Map.Entry<Long, String> r : referencedData.entrySet()) {
            // kept, unless its own topic dropped it meanwhile (consumed and past retention)
            assertTrue(onAAfter.contains(r.getKey()) || !Placement.ledgers(admin, r.getValue()).contains(r.getKey()),
                    "ledger " + r.getKey() + " of " + r.getValue() + " deleted although the topic still uses it");
        }

        // retention removes A's data ledgers once consumed; the idle topic trims when it is loaded again; the
        // topic with 90 min retention pins A until it is deleted
        admin.namespaces().deleteNamespace(keptNs, true);
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(idle).create()) {
            p.send("idle-after");
        }
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            JsonNode d = rest.get("/drain/cluster-a").json();
            assertTrue(d.get("empty").asBoolean(), "drain report of A: " + d);
        });
        JsonNode finalClean = rest.post("/cleanup", "{\"srcCluster\":\"cluster-a\",\"dryRun\":false,\"force\":true}")
                .json();
        log.info("MIGRATION final cleanup: {}", finalClean);
        // refused (409, naming the handles) while the broker may still read through a handle on A: a read handle
        // whose close the plugin cannot see counts as held for 30 s after it was opened
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            Rest.Response close = rest.post("/close-client/cluster-a", "");
            if (close.status() == 409) {
                log.info("MIGRATION close-client refused for now: {}; drain: {}", close.raw(),
                        rest.get("/drain/cluster-a").json().get("openHandles"));
            }
            assertEquals(200, close.status(), close.raw());
        });
        assertEquals("DEPRECATED", rest.get("/cluster-a").json().get("status").asText());
        log.info("MIGRATION cluster-a still holds {} ledgers (unreferenced, not created by Pulsar, or none): {}",
                cluster.bookieCluster("cluster-a").ledgerIds().size(), cluster.bookieCluster("cluster-a").ledgerIds());

        // switch A off, restart the broker: everything works from B
        active.close();
        cluster.bookieCluster("cluster-a").stopBookies();
        cluster.broker(0).restart();
        try (PulsarClient c2 = cluster.newClient()) {
            try (Consumer<V2> resumed = c2.newConsumer(Schema.JSON(V2.class)).topic(typed).subscriptionName("active")
                    .subscribe();
                 Producer<V2> p = c2.newProducer(Schema.JSON(V2.class)).topic(typed).create()) {
                p.send(new V2(999, "after"));
                Message<V2> m = resumed.receive(30, TimeUnit.SECONDS);
                assertNotNull(m, "active subscription resumes");
                assertEquals(999, m.getValue().id, "active subscription resumes at its position");
                resumed.acknowledge(m);
            }
            assertEquals(2, admin.schemas().getAllSchemas(typed).size(), "both schema versions resolve");
            assertNotNull(admin.schemas().getSchemaInfo(typed, 0));
            assertNotNull(admin.schemas().getSchemaInfo(typed, 1));
            try (Producer<V1> p = c2.newProducer(Schema.JSON(V1.class)).topic(typed).create()) {
                p.send(new V1(1000));
            }
            assertEquals(compactedView, Compacted.view(c2, compacted), "compacted view after A is gone");
            // a new compaction (same view) deletes the compacted ledger the migration moved from A: the broker must
            // not build a client for A again, retired and its bookies off, to look for the original or copies there
            long moved = admin.topics().getInternalStats(compacted).compactedLedger.ledgerId;
            LogCapture builds = LogCapture.install("io.bcswitch.routing.ClusterClientPool",
                    "creating BookKeeper client");
            try {
                try (Producer<String> p = c2.newProducer(Schema.STRING).topic(compacted).enableBatching(false)
                        .create()) {
                    for (Map.Entry<String, String> e : new TreeMap<>(compactedView).entrySet()) {
                        p.newMessage().key(e.getKey()).value(e.getValue()).send();
                    }
                }
                assertNotEquals(moved, Compacted.compact(admin, compacted));
                await().atMost(Duration.ofSeconds(30)).until(() -> !cluster.bookieCluster("cluster-b").ledgerIds()
                        .contains(moved));
                assertEquals(List.of(), builds.take().stream().filter(l -> l.contains("bookie-cluster=cluster-a ")
                        && !l.contains("[migration]")).toList(), "clients built for the retired cluster-a");
            } finally {
                builds.remove();
            }
            assertEquals(compactedView, Compacted.view(c2, compacted), "compacted view after a new compaction");
            try (Consumer<String> c = c2.newConsumer(Schema.STRING).topic(idle).subscriptionName("idle").subscribe()) {
                Message<String> m = c.receive(30, TimeUnit.SECONDS);
                assertNotNull(m);
                assertEquals("idle-after", m.getValue(), "idle subscription resumes at its position");
            }
        }
        // nothing references A any more: it can be unregistered (its bookies are already gone)
        Rest restarted = new Rest(cluster.broker(0).webServiceUrl());
        Rest.Response unregister = restarted.request("DELETE", "/cluster-a", null, null);
        assertEquals(200, unregister.status(), unregister.raw());
        assertEquals(404, restarted.get("/cluster-a").status());

        // the plugin can be removed now: verify says so and names B's URI
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        JsonNode removal = restarted.get("/verify").json().get("removal");
        log.info("MIGRATION removal verdict after unregister: {}", removal);
        assertTrue(removal.get("safe").asBoolean(), removal.toString());
        assertEquals(uriB, removal.get("metadataServiceUri").asText());
        // messages on B nobody consumed yet, read back after the plugin is gone
        String after = "persistent://" + ns + "/after";
        List<String> sent = new ArrayList<>();
        try (PulsarClient c3 = cluster.newClient();
             Consumer<String> subscribe = c3.newConsumer(Schema.STRING).topic(after).subscriptionName("later")
                     .subscribe();
             Producer<String> p = c3.newProducer(Schema.STRING).topic(after).enableBatching(false).create()) {
            for (int i = 0; i < 30; i++) {
                sent.add("after-" + i);
                p.send("after-" + i);
            }
        }

        // remove the plugin: stock storage pointed at B, A's bookies still off
        cluster.broker(0).restartWithoutPlugin(uriB);
        assertEquals(404, new Rest(cluster.broker(0).webServiceUrl()).get("/").status(), "no plugin API any more");
        try (PulsarClient c4 = cluster.newClient()) {
            try (Consumer<String> later = c4.newConsumer(Schema.STRING).topic(after).subscriptionName("later")
                    .subscribe()) {
                List<String> got = new ArrayList<>();
                for (Message<String> m = later.receive(30, TimeUnit.SECONDS); m != null;
                     m = later.receive(2, TimeUnit.SECONDS)) {
                    got.add(m.getValue());
                    later.acknowledge(m);
                }
                assertEquals(sent, got, "every message, once, in order, after the plugin is gone");
            }
            assertEquals(2, admin.schemas().getAllSchemas(typed).size(), "both schema versions resolve from B");
            assertNotNull(admin.schemas().getSchemaInfo(typed, 0));
            assertEquals(compactedView, Compacted.view(c4, compacted), "compacted view from B without the plugin");
            try (Consumer<String> c = c4.newConsumer(Schema.STRING).topic(idle).subscriptionName("idle").subscribe()) {
                Message<String> m = c.receive(30, TimeUnit.SECONDS);
                assertNotNull(m, "the idle subscription's position survives the removal");
                assertEquals("idle-after", m.getValue());
            }
            try (Consumer<V2> resumed = c4.newConsumer(Schema.JSON(V2.class)).topic(typed).subscriptionName("active")
                    .subscribe();
                 Producer<V2> p = c4.newProducer(Schema.JSON(V2.class)).topic(typed).create()) {
                p.send(new V2(2000, "without plugin"));
                Message<V2> m;
                do {
                    m = resumed.receive(30, TimeUnit.SECONDS);
                    assertNotNull(m, "the active subscription resumes without the plugin");
                    resumed.acknowledge(m);
                } while (m.getValue().id != 2000);
            }
        }
    }

    private static String scrape() throws Exception {
        var http = java.net.http.HttpClient.newHttpClient();
        var resp = http.send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resp.statusCode());
        return resp.body();
    }

    private static Set<Long> ids(JsonNode targets) {
        Set<Long> out = new HashSet<>();
        targets.forEach(t -> out.add(t.get("ledgerId").asLong()));
        return out;
    }
}
