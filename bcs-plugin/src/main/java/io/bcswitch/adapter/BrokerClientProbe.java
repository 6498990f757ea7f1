package io.bcswitch.adapter;

import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.registry.IdSpace;
import io.bcswitch.registry.BookieClusterRecord;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.CreateBuilder;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ClusterProbe} with a client built by the broker's own BookKeeper client factory and settings, exactly as
 * the broker will build it once the cluster is active: creates a ledger with the broker's managed-ledger ensemble
 * and quorum sizes, writes one entry, reads it back, deletes the ledger. The probe ledger carries
 * {@value #PROBE_KEY} in its custom metadata, so that if its deletion fails cleanup recognises it.
 */
final class BrokerClientProbe implements ClusterProbe {
    private static final Logger log = LoggerFactory.getLogger(BrokerClientProbe.class);
    static final String PROBE_KEY = "bookie-cluster-switch/probe";
    private static final byte[] PAYLOAD = "bookie-cluster-switch probe".getBytes(StandardCharsets.UTF_8);
    /** How many ids the precheck's probe picks from: the whole probe band at the top of the id space. */
    private static final long PROBE_IDS = 1L << 32;

    private final Function<String, CompletableFuture<BookKeeper>> newClient;
    private final int ensemble;
    private final int writeQuorum;
    private final int ackQuorum;
    private final long timeoutMillis;
    private final Executor closer;

    /**
     * @param newClient builds a broker-style client for a metadata service URI (closed by the probe)
     * @param closer    runs the client's close, which blocks
     */
    BrokerClientProbe(Function<String, CompletableFuture<BookKeeper>> newClient, int ensemble, int writeQuorum,
                      int ackQuorum, long timeoutMillis, Executor closer) {
        this.newClient = newClient;
        this.ensemble = ensemble;
        this.writeQuorum = writeQuorum;
        this.ackQuorum = ackQuorum;
        this.timeoutMillis = timeoutMillis;
        this.closer = closer;
    }

    @Override
    public CompletableFuture<String> probe(BookieClusterRecord cluster) {
        long started = System.nanoTime();
        CompletableFuture<BookKeeper> client = newClient.apply(cluster.metadataServiceUri());
        CompletableFuture<Void> exercised = client.thenCompose(bk -> exerciseOutsideEveryRange(bk, cluster.name()));
        CompletableFuture<String> result = exercised.copy()
                .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .handle((v, e) -> {
                    if (e == null) {
                        log.info("bookie-cluster={} probe ledger created, written, read and deleted in {} ms with the "
                                + "broker's client (ensemble {}, write quorum {}, ack quorum {})", cluster.name(),
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), ensemble, writeQuorum,
                                ackQuorum);
                        return null;
                    }
                    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    String why = t instanceof java.util.concurrent.TimeoutException
                            ? "no probe ledger within " + timeoutMillis + " ms" : t.toString();
                    log.warn("bookie-cluster={} probe failed: {}", cluster.name(), why);
                    return "probe ledger (create, write, read, delete with ensemble " + ensemble + "/" + writeQuorum
                            + "/" + ackQuorum + ") failed: " + why;
                });
        // the client is closed once the probe's own steps are over (a ledger created after the answer's deadline is
        // still deleted through it first), and at the latest a while after the answer
        exercised.handle((v, e) -> null).orTimeout(CLEANUP_BOUND_FACTOR * timeoutMillis, TimeUnit.MILLISECONDS)
                .whenComplete((v, e) -> client.thenAcceptAsync(BrokerClientProbe::closeQuietly, closer));
        return result;
    }

    /** How many probe timeouts the deletion of a probe ledger may take after the probe answered. */
    private static final long CLEANUP_BOUND_FACTOR = 3;

    /**
     * One probe ledger through {@code bk}, a client prepared for a switch not committed yet: its first ledger
     * creation finds the id range and connects to the bookies, which would otherwise happen on the first ledgers
     * of the topics rolling onto the cluster. A failure is logged and returned, never fatal: the client is still
     * usable, it is only not warm.
     */
    CompletableFuture<Void> warm(BookKeeper bk, String cluster) {
        long started = System.nanoTime();
        return exercise(bk).orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).whenComplete((v, e) -> {
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            if (e == null) {
                log.info("bookie-cluster={} prepared client warmed up with a probe ledger in {} ms", cluster, ms);
            } else {
                log.warn("bookie-cluster={} prepared client could not write its probe ledger ({} ms): {}", cluster,
                        ms, e.toString());
            }
        });
    }

    /**
     * The precheck's probe: under an id of its own, in the band at the top of the id space that no switch's range
     * may use and no range counts ({@link IdSpace#PROBE_FIRST_ID}), so no generator ever issues it and a probe
     * ledger that could not be deleted never moves a range. Before a switch
     * the target's generator still issues ids of the active cluster's range: a probe ledger made with it, once
     * deleted and collected by the target's bookies, would make that id unwritable there for days, and the copy of
     * the active cluster's ledger with that id would later be refused ("fenced/deleted"). A random id, so that a
     * probe never reuses the id of an earlier one.
     */
    private CompletableFuture<Void> exerciseOutsideEveryRange(BookKeeper bk, String cluster) {
        long id = IdSpace.PROBE_FIRST_ID + ThreadLocalRandom.current().nextLong(PROBE_IDS);
        return probeLedger(bk).makeAdv().withLedgerId(id)
                .execute()
                // a write that hangs (a bookie that takes the connection and never answers) is given up at the probe
                // timeout, so that the ledger is deleted then, not when BookKeeper's own timeouts end it
                .thenCompose(w -> deletedAfter(bk, cluster, id, writeRead(bk, id, w::writeAsync, w::closeAsync)
                        .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)));
    }

    /**
     * A prepared client's probe: with the target's generator, which a switch has already moved to the target's new
     * range, so its id is never one of a ledger to be copied there.
     */
    private CompletableFuture<Void> exercise(BookKeeper bk) {
        return probeLedger(bk).execute()
                .thenCompose(w -> deletedAfter(bk, null, w.getId(), writeRead(bk, w.getId(),
                        (entry, payload) -> w.appendAsync(payload), w::closeAsync)));
    }

    /**
     * Deletes probe ledger {@code id} once {@code steps} (its write and read) are over, whether they succeeded or
     * not: a probe whose write failed leaves nothing behind. Completes as {@code steps} did; a delete that fails
     * fails a probe that had succeeded (a cluster that cannot delete is not one to switch to).
     */
    private static CompletableFuture<Void> deletedAfter(BookKeeper bk, String cluster, long id,
                                                        CompletableFuture<Void> steps) {
        return steps.handle((v, e) -> e).thenCompose(failed -> bk.newDeleteLedgerOp().withLedgerId(id).execute()
                .handle((v, e) -> {
                    if (e != null) {
                        log.warn("bookie-cluster={} ledger={} probe ledger could not be deleted (it carries {} and is in "
                                + "the id band no range counts): {}", cluster, id, PROBE_KEY, e.toString());
                    }
                    if (failed != null) {
                        throw failed instanceof CompletionException c ? c : new CompletionException(failed);
                    }
                    if (e != null) {
                        throw e instanceof CompletionException c ? c : new CompletionException(e);
                    }
                    return (Void) null;
                }));
    }

    /** A probe ledger of the configured quorums, marked as a probe so that nothing mistakes it for Pulsar's. */
    private CreateBuilder probeLedger(BookKeeper bk) {
        return bk.newCreateLedgerOp()
                .withEnsembleSize(ensemble).withWriteQuorumSize(writeQuorum).withAckQuorumSize(ackQuorum)
                .withDigestType(DigestType.CRC32C).withPassword(new byte[0])
                .withCustomMetadata(Map.of(PROBE_KEY, "1".getBytes(StandardCharsets.UTF_8)));
    }

    /** Writes entry 0 of ledger {@code id} with {@code write}, closes, reads it back. */
    private static CompletableFuture<Void> writeRead(BookKeeper bk, long id,
            java.util.function.BiFunction<Long, byte[], CompletableFuture<?>> write,
            java.util.function.Supplier<CompletableFuture<Void>> close) {
        return write.apply(0L, PAYLOAD)
                .thenCompose(entry -> close.get())
                .thenCompose(v -> bk.newOpenLedgerOp().withLedgerId(id).withRecovery(false)
                        .withDigestType(DigestType.CRC32C).withPassword(new byte[0]).execute())
                .thenCompose(r -> r.readAsync(0, 0).thenApply(entries -> {
                    try (LedgerEntries es = entries) {
                        if (!Arrays.equals(es.getEntry(0).getEntryBytes(), PAYLOAD)) {
                            throw new CompletionException(new IllegalStateException("probe entry read back differs"));
                        }
                    }
                    return r;
                }).whenComplete((x, e) -> r.closeAsync()))
                .thenApply(r -> null);
    }

    private static void closeQuietly(BookKeeper bk) {
        try {
            bk.close();
        } catch (Exception e) {
            log.warn("Error closing a probe client", e);
        } 
    }
}
