package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Rest;
import io.bcswitch.testkit.TestCluster;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteAdvHandle;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * verify finds, on a real cluster after a real switch and migration, what it exists to find, each from the state an
 * operator's mistake or a broken disk leaves: a range table whose ranges do not increase (RANGES), a referenced
 * ledger no range covers (REFERENCED_MISSING, "no range"), and a copy whose entries differ from its home's while its
 * length and last entry agree, which only the deep check's entry comparison can see (COPY_DIFFERS). Each broken state
 * is made by hand in ZooKeeper or on the bookies, verified, and repaired byte for byte; verify is clean again after
 * each repair, so a check that always fails would fail this test too.
 *
 * <p>HOME_IS_CLEANUP_TARGET cross-checks cleanup's own plan, which by construction never names a referenced ledger
 * on its home (cleanup skips those before anything else): no state made by hand produces it without a broken
 * cleanup, so {@code InvariantAuditorTest} produces it with a cleanup that answers such a plan.
 */
class VerifyFindsWhatIsBrokenTest extends ClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(VerifyFindsWhatIsBrokenTest.class);
    private static final String RANGES = "/admin/bookie-clusters/ranges";
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().bookieCluster("cluster-a", 1).bookieCluster("cluster-b", 1).brokers(1).start();
    }

    @Test
    void brokenRangesAnUncoveredLedgerAndACorruptedCopyAreEachFound() throws Exception {
        String ns = cluster.createTenant("verify");
        PulsarAdmin admin = cluster.newAdmin();
        admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        String topic = "persistent://" + ns + "/data";
        long dataLedger;
        List<Long> schemaLedgers = new ArrayList<>();
        try (PulsarClient client = cluster.newClient()) {
            for (String t : SchemaTopics.create(client, ns, 3)) {
                admin.topics().getInternalStats(t, true).schemaLedgers.forEach(l -> schemaLedgers.add(l.ledgerId));
            }
            try (Producer<byte[]> p = client.newProducer().topic(topic).enableBatching(false).create()) {
                for (int i = 0; i < 10; i++) {
                    p.send(("m" + i).getBytes(StandardCharsets.UTF_8));
                }
            }
            dataLedger = admin.topics().getInternalStats(topic).ledgers.get(0).ledgerId;
        }
        assertEquals(3, schemaLedgers.size(), "a schema ledger per schema topic");
        assertTrue(cluster.bookieCluster("cluster-a").ledgerIds().contains(dataLedger));

        assertEquals(200, rest.register("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri()).status());
        assertEquals(200, rest.switchTo("cluster-b").status());
        rest.awaitCutoverComplete();
        JsonNode m = rest.awaitMigrationFinished();
        assertEquals("DONE", m.get("phase").asText(), m.toString());
        rest.awaitRelocationsApplied();
        assertClean(rest, true, "after the switch and its migration");

        // 1. ranges that do not increase: cluster-b's range made to start where cluster-a's does
        byte[] table = read(RANGES);
        JsonNode ranges = JSON.readTree(table);
        assertEquals(2, ranges.get("ranges").size(), ranges.toString());
        ObjectNode broken = ranges.deepCopy();
        ((ObjectNode) broken.get("ranges").get(1)).put("firstLedgerId",
                ranges.get("ranges").get(0).get("firstLedgerId").asLong());
        JsonNode v = withRanges(broken, table, () -> verify(rest, false));
        assertFound(v, "RANGES", null, "cluster-b");
        assertClean(rest, false, "after the range table was written back");

        // 2. a referenced ledger no range covers: cluster-a's range made to start just above the topic's first ledger
        ObjectNode uncovered = ranges.deepCopy();
        assertTrue(dataLedger + 1 < ranges.get("ranges").get(1).get("firstLedgerId").asLong());
        ((ObjectNode) uncovered.get("ranges").get(0)).put("firstLedgerId", dataLedger + 1);
        v = withRanges(uncovered, table, () -> verify(rest, false));
        JsonNode missing = assertFound(v, "REFERENCED_MISSING", dataLedger, null);
        assertTrue(missing.get("detail").asText().contains("no range"), missing.toString());
        assertClean(rest, false, "after the range table was written back");

        // 3. a copy whose entries differ, at the same length and last entry: the original on cluster-a of a schema
        // ledger the migration moved home to cluster-b, rewritten with one byte changed
        long moved = schemaLedgers.get(0);
        JsonNode relocation = Registry.relocations(cluster.zkConnectString()).get(moved);
        assertEquals("cluster-b", relocation.get("home").asText(), "schema ledger " + moved + " moved home");
        try (BookKeeper bkA = BookKeeper.newBuilder(cluster.bookieCluster("cluster-a").clientConfiguration()).build()) {
            Original original = Original.read(bkA, moved);
            List<byte[]> corrupted = new ArrayList<>(original.entries());
            byte[] first = corrupted.get(0).clone();
            first[first.length - 1] ^= 0x01;
            corrupted.set(0, first);
            rewrite(bkA, moved, original.metadata(), corrupted);
            JsonNode shallow = verify(rest, false);
            assertTrue(shallow.get("ok").asBoolean(), "same length and last entry: only the deep check can tell "
                    + shallow);
            JsonNode deep = verify(rest, true);
            assertFound(deep, "COPY_DIFFERS", moved, "cluster-a");
            assertEquals(1, deep.get("violations").size(), "nothing else is wrong: " + deep);
            rewrite(bkA, moved, original.metadata(), original.entries());
        }
        assertClean(rest, true, "after the original's entries were written back");
    }

    /** A ledger's metadata and every entry, read without recovery (nothing fences it). */
    private record Original(LedgerMetadata metadata, List<byte[]> entries) {
        static Original read(BookKeeper bk, long id) throws Exception {
            LedgerMetadata md = bk.getLedgerMetadata(id).get(30, TimeUnit.SECONDS);
            assertTrue(md.isClosed() && md.getLastEntryId() >= 0, "closed, with entries: " + md);
            List<byte[]> entries = new ArrayList<>();
            try (ReadHandle r = bk.newOpenLedgerOp().withLedgerId(id).withRecovery(false)
                    .withDigestType(md.getDigestType()).withPassword(md.getPassword()).execute().get();
                 LedgerEntries es = r.read(0, md.getLastEntryId())) {
                for (LedgerEntry e : es) {
                    entries.add(e.getEntryBytes());
                }
            }
            return new Original(md, List.copyOf(entries));
        }
    }

    /**
     * Deletes ledger {@code id} and writes it again, same id, metadata and entry ids, with {@code entries}, until it
     * reads back as written: a bookie's garbage collection that listed the ledgers while the id was deleted may drop
     * what was written after (at most three tries).
     */
    private static void rewrite(BookKeeper bk, long id, LedgerMetadata md, List<byte[]> entries) throws Exception {
        for (int attempt = 1; ; attempt++) {
            rewriteOnce(bk, id, md, entries);
            List<byte[]> back;
            try {
                back = Original.read(bk, id).entries();
            } catch (Exception e) {
                back = List.of();
            }
            boolean same = back.size() == entries.size();
            for (int i = 0; same && i < back.size(); i++) {
                same = java.util.Arrays.equals(back.get(i), entries.get(i));
            }
            if (same) {
                return;
            }
            log.warn("ledger {} did not read back as rewritten (try {})", id, attempt);
            assertTrue(attempt < 3, "ledger " + id + " reads back as rewritten");
        }
    }

    private static void rewriteOnce(BookKeeper bk, long id, LedgerMetadata md, List<byte[]> entries)
            throws Exception {
        bk.newDeleteLedgerOp().withLedgerId(id).execute().get(30, TimeUnit.SECONDS);
        try (WriteAdvHandle w = bk.newCreateLedgerOp().withEnsembleSize(md.getEnsembleSize())
                .withWriteQuorumSize(md.getWriteQuorumSize()).withAckQuorumSize(md.getAckQuorumSize())
                .withDigestType(md.getDigestType()).withPassword(md.getPassword())
                .withCustomMetadata(md.getCustomMetadata()).makeAdv().withLedgerId(id).execute()
                .get(30, TimeUnit.SECONDS)) {
            for (int i = 0; i < entries.size(); i++) {
                w.write(i, entries.get(i));
            }
        }
        LedgerMetadata now = bk.getLedgerMetadata(id).get(30, TimeUnit.SECONDS);
        assertEquals(md.getLastEntryId(), now.getLastEntryId(), "ledger " + id + " rewritten");
        assertEquals(md.getLength(), now.getLength(), "ledger " + id + " rewritten");
    }

    private static JsonNode verify(Rest rest, boolean deep) {
        Rest.Response r = rest.get(deep ? "/verify?deep=true" : "/verify");
        assertEquals(200, r.status(), r.raw());
        log.info("VERIFY deep={}: {}", deep, r.raw());
        return r.json();
    }

    private static void assertClean(Rest rest, boolean deep, String when) {
        JsonNode v = verify(rest, deep);
        assertTrue(v.get("ok").asBoolean(), when + ": " + v);
        assertEquals(0, v.get("unchecked").size(), when + ": " + v);
    }

    /** The violation of kind {@code check} (on {@code ledgerId} and {@code cluster} where given). */
    private static JsonNode assertFound(JsonNode verify, String check, Long ledgerId, String cluster) {
        assertFalse(verify.get("ok").asBoolean(), verify.toString());
        for (JsonNode x : verify.get("violations")) {
            if (x.get("check").asText().equals(check)
                    && (ledgerId == null || x.path("ledgerId").asLong(-1) == ledgerId)
                    && (cluster == null || x.path("cluster").asText().equals(cluster))) {
                return x;
            }
        }
        throw new AssertionError("no " + check + " violation" + (ledgerId != null ? " of ledger " + ledgerId : "")
                + (cluster != null ? " on " + cluster : "") + ": " + verify);
    }

    private interface Check {
        JsonNode run() throws Exception;
    }

    /** Runs {@code check} with the range table replaced by {@code broken}, then writes {@code original} back. */
    private static JsonNode withRanges(JsonNode broken, byte[] original, Check check) throws Exception {
        write(RANGES, JSON.writeValueAsBytes(broken));
        try {
            return check.run();
        } finally {
            write(RANGES, original);
            assertEquals(new String(original, StandardCharsets.UTF_8),
                    new String(read(RANGES), StandardCharsets.UTF_8), "the range table written back");
        }
    }

    private static byte[] read(String path) throws Exception {
        return Registry.get(cluster.zkConnectString(), path);
    }

    private static void write(String path, byte[] data) throws Exception {
        Registry.put(cluster.zkConnectString(), path, data);
    }
}
