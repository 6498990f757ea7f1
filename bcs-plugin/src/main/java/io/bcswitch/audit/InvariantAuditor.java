package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.migration.CleanupService;
import io.bcswitch.migration.LedgerCopier;
import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.RegistryStore;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Checks, from the metadata store and every bookie cluster's own metadata, the invariants the plugin lives by, and
 * names every violation (an operator tool: {@code GET /verify}, {@code pulsar-admin bookie-clusters verify}; and the
 * sequence explorer's oracle):
 * <ol>
 *   <li>every ledger Pulsar references (data, cursor, schema, compaction) exists on the cluster routing says
 *       holds it, closed where the reference says it is;</li>
 *   <li>no ledger id exists on two clusters unless the relocation table explains it (its home, the cluster that
 *       issued it, or a copy the migration made and marked), and every copy of a ledger has its home's content
 *       (closed, same last entry and length; with {@code deep}, the same CRC32C of every entry); and no copy the
 *       migration made is left where it is not home once its ledger is gone from everywhere else;</li>
 *   <li>the range table's first ids and epochs strictly increase, and the active cluster's id generator issues
 *       ids in its own range;</li>
 *   <li>every live broker runs the plugin, applied the current switch and routes with the current relocation
 *       epoch;</li>
 *   <li>nothing any of this references is scheduled for deletion: no copy a rollback will delete, and no cleanup
 *       target, is a ledger's home.</li>
 * </ol>
 * Besides, it names what the operator should know though nothing is broken ({@link KeptHomesCheck}: a ledger a
 * rollback could not route back, still home on the rolled-back cluster).
 * Read only: it changes nothing. It reads the world once ({@link WorldReader}), runs each invariant's check on it
 * ({@link ReferencedLedgersCheck}, {@link CopiesCheck}, {@link IdRangesCheck}, {@link BrokersCheck},
 * {@link DeletionsCheck}) and says whether the plugin could be removed ({@link RemovalVerdict}).
 */
public final class InvariantAuditor {
    /** At most this many ledgers are checked at once (their metadata read, and with deep, their entries). */
    static final int PARALLEL_CHECKS = 32;
    /**
     * How long one metadata read of a bookie cluster (one ledger's) may take in a verify before that cluster counts as
     * silent for the rest of it ({@link BoundedClusterReads}).
     */
    public static final long CLUSTER_ANSWER_MILLIS = 15_000;
    /**
     * How long listing a bookie cluster's ledgers may take in a verify before that cluster counts as silent: seconds on
     * a large healthy cluster; with one read bound after it, still inside the REST limit of 60 s.
     */
    public static final long CLUSTER_LISTING_MILLIS = 40_000;

    private final Clock clock;
    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts;
    private final LongFunction<CompletableFuture<Void>> pace;
    private final Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf;
    private final CleanupService cleanup;
    private final BrokersCheck brokers;
    private final long clusterListingMillis;
    private final long clusterAnswerMillis;

    /**
     * @param facts   reads a cluster's metadata (id generator) without touching its bookies
     * @param pace    paces the entry reads of a deep check (the migration's rate limit)
     * @param compactedLedgerOf the compacted ledger a managed ledger's topic uses now, as its owning broker knows it
     *                (empty: none, or the topic is not loaded): the metadata store's copy of the compaction cursor's
     *                properties lags behind until the cursor next switches ledgers
     */
    public InvariantAuditor(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                            Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts,
                            CleanupService cleanup, LongFunction<CompletableFuture<Void>> pace,
                            Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf, Clock clock) {
        this(registry, inventory, copier, facts, cleanup, pace, compactedLedgerOf, clock, CLUSTER_LISTING_MILLIS,
                CLUSTER_ANSWER_MILLIS);
    }

    /**
     * @param clusterListingMillis how long listing a cluster's ledgers may take ({@link BoundedClusterReads})
     * @param clusterAnswerMillis  how long any other metadata read of a cluster may take
     */
    InvariantAuditor(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                     Function<BookieClusterRecord, CompletableFuture<ClusterFacts>> facts,
                     CleanupService cleanup, LongFunction<CompletableFuture<Void>> pace,
                     Function<String, CompletableFuture<Optional<Long>>> compactedLedgerOf, Clock clock,
                     long clusterListingMillis, long clusterAnswerMillis) {
        this.clock = clock;
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
        this.facts = facts;
        this.pace = pace;
        this.compactedLedgerOf = compactedLedgerOf;
        this.cleanup = cleanup;
        this.brokers = new BrokersCheck();
        this.clusterListingMillis = clusterListingMillis;
        this.clusterAnswerMillis = clusterAnswerMillis;
    }

    public CompletableFuture<VerifyReport> verify(boolean deep) {
        Findings found = new Findings();
        // every read of a cluster's metadata in this verify goes through one bound: a silent cluster is found once
        BoundedClusterReads reads = new BoundedClusterReads(copier, clusterListingMillis, clusterAnswerMillis);
        WorldReader reader = new WorldReader(registry, inventory, reads);
        ReferencedLedgersCheck referenced = new ReferencedLedgersCheck(reads, compactedLedgerOf,
                () -> inventory.picture().thenApply(LedgerInventory.Picture::references));
        CopiesCheck copies = new CopiesCheck(reads, reads::factsAfresh, pace);
        IdRangesCheck idRanges = new IdRangesCheck(r -> reads.bounded(r.name(), () -> facts.apply(r)));
        DeletionsCheck deletions = new DeletionsCheck(registry, cleanup, reads);
        return reader.read(found).thenCompose(w -> {
            idRanges.checkTable(w, found);
            brokers.check(w, found);
            KeptHomesCheck.check(w, found);
            return CompletableFuture.allOf(
                    referenced.check(w, found),
                    copies.check(w, deep, found),
                    idRanges.checkGenerator(w, found),
                    deletions.check(w, found)).thenApply(v -> {
                        List<Violation> sorted = found.sortedViolations();
                        List<String> u = found.sortedUnchecked();
                        return new VerifyReport(sorted.isEmpty(), clock.millis(), deep,
                                (int) w.refs().stream().map(LedgerReference::ledgerId).distinct().count(),
                                List.copyOf(w.ledgers().keySet()), w.view().relocations().size(), List.copyOf(sorted),
                                List.copyOf(u), RemovalVerdict.of(w, sorted, u, found.replacedCompactedLedgers()),
                                List.copyOf(found.sortedNotices()));
                    });
        });
    }
}
