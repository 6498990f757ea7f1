package io.bcswitch.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.metadata.api.MetadataStore;

/**
 * Managed-ledger and schema metadata written straight into a broker metadata store, in the formats the broker
 * stores them, for topics that were never created: what an inventory over 100,000 topics reads, without 100,000
 * real topics. The ledgers they name exist on no bookie unless {@link #writeLedgers} makes them exist on a
 * cluster (as closed, empty ledgers). Cursors keep their position in the metadata (no cursor ledger), so a
 * migration has nothing of theirs to copy.
 *
 * @param namespace     {@code tenant/namespace} the topics are in (create it first: retention is read from it)
 * @param managedLedgers how many managed ledgers ({@code persistent://<namespace>/synthetic-<i>})
 * @param cursorEvery   every how many managed ledgers have one subscription ({@code 0}: none)
 * @param schemaEvery   every how many topics have a schema ({@code 0}: none)
 * @param firstLedgerId the first ledger id named; each managed ledger names one, each schema one after those
 */
public record SyntheticLedgers(String namespace, int managedLedgers, int cursorEvery, int schemaEvery,
                               long firstLedgerId) {

    private static final int IN_FLIGHT = 256;

    public int schemas() {
        return schemaEvery == 0 ? 0 : (managedLedgers + schemaEvery - 1) / schemaEvery;
    }

    public int cursors() {
        return cursorEvery == 0 ? 0 : (managedLedgers + cursorEvery - 1) / cursorEvery;
    }

    /** Every ledger id the metadata names: one per managed ledger, one per schema. */
    public List<Long> ledgerIds() {
        List<Long> ids = new ArrayList<>(managedLedgers + schemas());
        for (long i = 0; i < managedLedgers + schemas(); i++) {
            ids.add(firstLedgerId + i);
        }
        return ids;
    }

    public String managedLedgerName(int i) {
        return namespace + "/persistent/synthetic-" + i;
    }

    /** Writes it all; at most a few hundred writes in flight. */
    public void write(MetadataStore store) throws Exception {
        Semaphore inFlight = new Semaphore(IN_FLIGHT);
        List<CompletableFuture<?>> failed = new ArrayList<>();
        long closedAt = System.currentTimeMillis() - TimeUnit.HOURS.toMillis(1);
        int schema = 0;
        for (int i = 0; i < managedLedgers; i++) {
            long ledger = firstLedgerId + i;
            String ml = "/managed-ledgers/" + managedLedgerName(i);
            put(store, ml, LineMetadataRecords.managedLedger(ledger, 10, 10_240, closedAt), inFlight, failed);
            if (cursorEvery > 0 && i % cursorEvery == 0) {
                put(store, ml + "/sub", LineMetadataRecords.cursor(ledger, 9, closedAt), inFlight, failed);
            }
            if (schemaEvery > 0 && i % schemaEvery == 0) {
                put(store, "/schemas/" + namespace + "/synthetic-" + i,
                        LineMetadataRecords.schemaLocator(firstLedgerId + managedLedgers + schema), inFlight, failed);
                schema++;
            }
        }
        inFlight.acquire(IN_FLIGHT);
        for (CompletableFuture<?> f : failed) {
            f.join();
        }
    }

    /**
     * Makes every ledger {@link #ledgerIds()} names exist on a bookie cluster: its metadata written as that of a
     * closed, empty ledger on {@code bookieId} (no entry is written), so that what reads a real cluster's ledgers
     * (its listing, each ledger's metadata, a copy) finds them there, as it would after a real topic's life.
     */
    public void writeLedgers(org.apache.bookkeeper.conf.ClientConfiguration conf, String bookieId) throws Exception {
        org.apache.bookkeeper.client.BookKeeper bk = new org.apache.bookkeeper.client.BookKeeper(conf);
        try {
            org.apache.bookkeeper.meta.LedgerManager lm = bk.getLedgerManager();
            Semaphore inFlight = new Semaphore(IN_FLIGHT);
            List<Throwable> failed = java.util.Collections.synchronizedList(new ArrayList<>());
            for (long id : ledgerIds()) {
                org.apache.bookkeeper.client.api.LedgerMetadata m = org.apache.bookkeeper.client.LedgerMetadataBuilder
                        .create().withId(id).withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                        .withPassword(new byte[0]).withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C)
                        .newEnsembleEntry(0L, List.of(org.apache.bookkeeper.net.BookieId.parse(bookieId)))
                        .withClosedState().withLastEntryId(-1).withLength(0).build();
                inFlight.acquire();
                lm.createLedgerMetadata(id, m).whenComplete((v, e) -> {
                    if (e != null) {
                        failed.add(e);
                    }
                    inFlight.release();
                });
            }
            inFlight.acquire(IN_FLIGHT);
            if (!failed.isEmpty()) {
                throw new IllegalStateException(failed.size() + " ledger(s) not written", failed.get(0));
            }
        } finally {
            bk.close();
        }
    }

    private static void put(MetadataStore store, String path, byte[] value, Semaphore inFlight,
                            List<CompletableFuture<?>> failed) throws InterruptedException {
        inFlight.acquire();
        store.put(path, value, Optional.empty()).whenComplete((v, e) -> {
            if (e != null) {
                synchronized (failed) {
                    failed.add(CompletableFuture.failedFuture(e));
                }
            }
            inFlight.release();
        });
    }
}
