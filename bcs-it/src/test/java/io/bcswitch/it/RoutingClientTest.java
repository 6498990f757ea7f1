package io.bcswitch.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.Rest;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.BookKeeper.DigestType;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The routing client the broker hands to managed ledgers, driven directly through every API family
 * (callback, sync, builder), against two real bookie clusters: where each ledger is created, opened,
 * read, checked and deleted is asked of each cluster.
 */
class RoutingClientTest extends ClusterTestBase {
    private static final byte[] PWD = new byte[0];

    @BeforeAll
    static void start() throws Exception {
        cluster = twoBookieClusters()
                .start();
    }

    /** The ledgers the (only) broker says it holds open on {@code clusterName}. */
    private static List<Long> openOn(Rest rest, String clusterName) {
        List<Long> ids = new ArrayList<>();
        rest.status().get("brokers").forEach(b -> {
            JsonNode l = b.path("openLedgers").path(clusterName);
            l.forEach(id -> ids.add(id.asLong()));
        });
        return ids;
    }

    private static boolean on(String clusterName, long id) throws Exception {
        return cluster.bookieCluster(clusterName).ledgerIds().contains(id);
    }

    @Test
    void everyApiFamilyIsRoutedByActiveClusterAndIdOwnership() throws Exception {
        BookKeeper bk = cluster.broker(0).pulsar().getBookKeeperClient();
        assertTrue(bk.getClass().getName().endsWith("RoutingBookKeeper"), bk.getClass().getName());
        assertTrue(bk.getMainWorkerPool() != null);

        // creates on A: sync, callback and builder forms
        LedgerHandle syncA = bk.createLedger(2, 2, 2, DigestType.CRC32C, PWD, Map.of("k", "v".getBytes()));
        syncA.addEntry("a0".getBytes(StandardCharsets.UTF_8));
        syncA.close();
        CompletableFuture<LedgerHandle> cb = new CompletableFuture<>();
        bk.asyncCreateLedger(2, 2, 2, DigestType.CRC32C, PWD, (rc, lh, ctx) -> {
            if (rc == BKException.Code.OK) {
                cb.complete(lh);
            } else {
                cb.completeExceptionally(BKException.create(rc));
            }
        }, null, Map.of());
        LedgerHandle cbA = cb.get();
        cbA.close();
        WriteHandle builderA = bk.newCreateLedgerOp().withEnsembleSize(2).withWriteQuorumSize(2)
                .withAckQuorumSize(2).withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C)
                .withPassword(PWD).execute().get();
        builderA.append("b0".getBytes(StandardCharsets.UTF_8));
        builderA.close();
        for (long id : new long[] {syncA.getId(), cbA.getId(), builderA.getId()}) {
            assertTrue(on("cluster-a", id) && !on("cluster-b", id), "ledger " + id + " must be on A only");
        }

        // written on A and never closed, as Pulsar leaves a cursor's previous ledger when it deletes it
        LedgerHandle heldSync = bk.createLedger(2, 2, DigestType.CRC32C, PWD);
        LedgerHandle heldCb = bk.createLedger(2, 2, DigestType.CRC32C, PWD);
        WriteHandle heldBuilder = bk.newCreateLedgerOp().withEnsembleSize(2).withWriteQuorumSize(2)
                .withAckQuorumSize(2).withPassword(PWD).execute().get();
        List<Long> held = List.of(heldSync.getId(), heldCb.getId(), heldBuilder.getId());

        // switch to B
        Rest rest = new Rest(cluster.broker(0).webServiceUrl());
        rest.registerAndSwitch("cluster-b", cluster.bookieCluster("cluster-b").metadataServiceUri());
        await("the broker publishes its handles left open on A").atMost(Duration.ofSeconds(30))
                .until(() -> openOn(rest, "cluster-a").containsAll(held));

        // a deleted ledger's handle is done with, whichever API deleted it, though its holder never closed it
        bk.deleteLedger(heldSync.getId());
        CompletableFuture<Integer> heldDeleted = new CompletableFuture<>();
        bk.asyncDeleteLedger(heldCb.getId(), (rc, ctx) -> heldDeleted.complete(rc), null);
        assertEquals(BKException.Code.OK, heldDeleted.get());
        bk.newDeleteLedgerOp().withLedgerId(heldBuilder.getId()).execute().get();
        await("handles of deleted ledgers no longer count as open on A").atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> {
                    List<Long> open = openOn(rest, "cluster-a");
                    assertTrue(held.stream().noneMatch(open::contains), "still listed open on A: " + open);
                });
        assertTrue(List.of(heldSync, heldCb, heldBuilder).size() == 3); // held until here

        // creates now on B, with ids above A's
        LedgerHandle syncB = bk.createLedger(2, 2, DigestType.CRC32C, PWD);
        syncB.addEntry("x".getBytes(StandardCharsets.UTF_8));
        syncB.close();
        org.apache.bookkeeper.client.api.WriteAdvHandle adv = bk.newCreateLedgerOp().withEnsembleSize(2).withWriteQuorumSize(2).withAckQuorumSize(2)
                .withPassword(PWD).makeAdv().execute().get();
        adv.write(0L, "adv".getBytes(StandardCharsets.UTF_8));
        adv.close();
        for (long id : new long[] {syncB.getId(), adv.getId()}) {
            assertTrue(on("cluster-b", id) && !on("cluster-a", id), "ledger " + id + " must be on B only");
            assertTrue(id > builderA.getId(), "ids increase across the switch");
        }

        // A's ledgers are still found on A, through every open form
        LedgerHandle noRecovery = bk.openLedgerNoRecovery(syncA.getId(), DigestType.CRC32C, PWD);
        assertArrayEquals("a0".getBytes(StandardCharsets.UTF_8), noRecovery.readEntries(0, 0).nextElement().getEntry());
        noRecovery.close();
        LedgerHandle recovered = bk.openLedger(cbA.getId(), DigestType.CRC32C, PWD);
        assertEquals(-1, recovered.getLastAddConfirmed());
        recovered.close();
        try (ReadHandle rh = bk.newOpenLedgerOp().withLedgerId(builderA.getId()).withRecovery(false)
                .withPassword(PWD).execute().get()) {
            assertArrayEquals("b0".getBytes(StandardCharsets.UTF_8),
                    rh.read(0, 0).getEntry(0).getEntryBytes());
        }
        CompletableFuture<LedgerHandle> opened = new CompletableFuture<>();
        bk.asyncOpenLedger(syncB.getId(), DigestType.CRC32C, PWD, (rc, lh, ctx) -> {
            if (rc == BKException.Code.OK) {
                opened.complete(lh);
            } else {
                opened.completeExceptionally(BKException.create(rc));
            }
        }, null);
        assertEquals(0, opened.get().getLastAddConfirmed());
        opened.get().close();

        // metadata and closed-checks follow ownership too
        assertEquals("v", new String(bk.getLedgerMetadata(syncA.getId()).get().getCustomMetadata().get("k")));
        assertTrue(bk.isClosed(syncA.getId()));
        assertTrue(bk.isClosed(syncB.getId()));

        // deletes go to the owner: builder on A, callback on B, sync on A
        bk.newDeleteLedgerOp().withLedgerId(builderA.getId()).execute().get();
        CompletableFuture<Integer> deleted = new CompletableFuture<>();
        bk.asyncDeleteLedger(syncB.getId(), (rc, ctx) -> deleted.complete(rc), null);
        assertEquals(BKException.Code.OK, deleted.get());
        bk.deleteLedger(cbA.getId());
        assertFalse(on("cluster-a", builderA.getId()));
        assertFalse(on("cluster-a", cbA.getId()));
        assertFalse(on("cluster-b", syncB.getId()));
        assertTrue(on("cluster-a", syncA.getId()), "an unrelated ledger is untouched");

        // an id no cluster owns fails with an error naming it
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> bk.newOpenLedgerOp().withLedgerId(-5).withPassword(PWD).execute().get());
        assertTrue(e.getCause().getMessage().contains("-5"), e.getCause().getMessage());
        CompletableFuture<Integer> rcUnknown = new CompletableFuture<>();
        bk.asyncOpenLedgerNoRecovery(-5, DigestType.CRC32C, PWD, (rc, lh, ctx) -> rcUnknown.complete(rc), null);
        assertTrue(rcUnknown.get() != BKException.Code.OK);
    }
}
