package io.bcswitch.migration;

import io.bcswitch.concurrent.Windows;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/** Builds {@link DrainReport}s from the inventory, the registry and each ledger's BookKeeper metadata. */
public final class DrainReports {
    private static final int MAX_DATA_LEDGERS = 1000;
    /** Ledgers whose metadata the report reads at once. */
    private static final int PARALLEL_READS = 32;

    private final RegistryStore registry;
    private final LedgerInventory inventory;
    private final LedgerCopier copier;
    private final RetentionLookup retention;
    private final java.time.Clock clock;
    private final Map<String, Latest> latest = new ConcurrentHashMap<>();

    /** The last report this broker made of a cluster, and when (epoch millis). */
    public record Latest(DrainReport report, long at) {
    }

    public DrainReports(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                        RetentionLookup retention) {
        this(registry, inventory, copier, retention, java.time.Clock.systemUTC());
    }

    public DrainReports(RegistryStore registry, LedgerInventory inventory, LedgerCopier copier,
                        RetentionLookup retention, java.time.Clock clock) {
        this.registry = registry;
        this.inventory = inventory;
        this.copier = copier;
        this.retention = retention;
        this.clock = clock;
    }

    /** The last report this broker made of each cluster (for metrics: a scrape never builds one). */
    public Map<String, Latest> latest() {
        return Map.copyOf(latest);
    }

    /** A ledger the brokers reference, its metadata on the cluster (null: not asked) and its topic's retention. */
    record Row(LedgerReference ref, Optional<LedgerCopier.LedgerFacts> facts, RetentionLookup.Retention retention) {
    }

    public CompletableFuture<DrainReport> report(String cluster) {
        String problem = io.bcswitch.registry.ClusterNames.problem(cluster);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        return registry.getCluster(cluster).thenCompose(rec -> {
            if (rec.isEmpty()) {
                throw RegistryException.notFound("bookie cluster '" + cluster + "' is not registered");
            }
            return RegistryView.read(registry).thenCombine(io.bcswitch.registry.BrokerView.read(registry),
                    (view, brokers) -> new Object[] {view, brokers}).thenCompose(vb -> {
                RegistryView view = (RegistryView) vb[0];
                Map<String, Integer> handles = ((io.bcswitch.registry.BrokerView) vb[1]).handlesOn(cluster);
                return inventory.references().thenCompose(refs -> {
                Map<Long, LedgerReference> mine = new LinkedHashMap<>();
                for (LedgerReference r : refs) {
                    if (view.home(r.ledgerId()).map(cluster::equals).orElse(false)) {
                        // one row per ledger; a data reference wins (it carries size and close time)
                        mine.merge(r.ledgerId(), r, (a, b) -> a.kind() == LedgerKind.DATA ? a : b);
                    }
                }
                Map<String, CompletableFuture<RetentionLookup.Retention>> retentions = new ConcurrentHashMap<>();
                return Windows.map(new ArrayList<>(mine.values()), PARALLEL_READS, r -> {
                    // a data ledger its managed ledger lists as closed has its size and close time there: asking
                    // the bookie cluster would tell nothing more (and costs one read per topic on 100,000 topics)
                    CompletableFuture<Optional<LedgerCopier.LedgerFacts>> facts = closedData(r)
                            ? CompletableFuture.completedFuture(null)
                            : copier.facts(r.ledgerId(), cluster).exceptionally(e -> null);
                    CompletableFuture<RetentionLookup.Retention> ret = r.kind() != LedgerKind.DATA
                            ? CompletableFuture.completedFuture(null)
                            : retentions.computeIfAbsent(r.referencedBy(), ml -> retention.retention(ml)
                                    .exceptionally(e -> new RetentionLookup.Retention(-1, "unknown: " + e)));
                    return facts.thenCombine(ret, (f, t) -> new Row(r, f, t));
                }).thenApply(rows -> remember(build(cluster, rec.get().status().name(),
                        cluster.equals(view.activeCluster()), rows, handles)));
                });
            });
        });
    }

    private DrainReport remember(DrainReport r) {
        latest.put(r.cluster(), new Latest(r, clock.millis()));
        return r;
    }

    private static boolean closedData(LedgerReference r) {
        return r.kind() == LedgerKind.DATA && r.closedAt() != null && r.size() != null;
    }

    static DrainReport build(String cluster, String status, boolean active, List<Row> rows,
                             Map<String, Integer> handles) {
        Map<LedgerKind, long[]> totals = new EnumMap<>(LedgerKind.class);
        List<DrainReport.DataLedger> data = new ArrayList<>();
        int open = 0;
        int counted = 0;
        long bytes = 0;
        boolean knowable = true;
        boolean nonData = false;
        long latest = 0;
        for (Row row : rows) {
            LedgerReference r = row.ref();
            Optional<LedgerCopier.LedgerFacts> f = row.facts();
            if (r.kind() == LedgerKind.OTHER && f != null && f.isEmpty()) {
                continue; // a property value that is not a ledger here (unknown when the cluster did not answer)
            }
            long size = r.size() != null ? r.size() : f != null && f.isPresent() ? f.get().length() : 0;
            boolean closed = f != null && f.isPresent() ? f.get().closed() : r.closedAt() != null;
            counted++;
            bytes += size;
            long[] t = totals.computeIfAbsent(r.kind(), k -> new long[2]);
            t[0]++;
            t[1] += size;
            if (!closed) {
                open++;
                knowable = false;
            }
            if (r.kind() != LedgerKind.DATA) {
                nonData = true;
                continue;
            }
            RetentionLookup.Retention ret = row.retention();
            Long removable = null;
            if (closed && r.closedAt() != null && ret != null && ret.minutes() >= 0) {
                removable = r.closedAt() + ret.minutes() * 60_000L;
                latest = Math.max(latest, removable);
            } else {
                knowable = false;
            }
            String retText = ret == null ? "unknown" : (ret.minutes() < 0 ? "infinite" : ret.minutes() + " min")
                    + " (" + ret.source() + ")";
            data.add(new DrainReport.DataLedger(r.ledgerId(), r.referencedBy(), size, removable, retText));
        }
        data.sort(Comparator.comparingLong(DrainReport.DataLedger::ledgerId));
        List<DrainReport.KindTotal> byKind = new ArrayList<>();
        totals.forEach((k, t) -> byKind.add(new DrainReport.KindTotal(k.name(), (int) t[0], t[1])));
        boolean empty = counted == 0;
        Long switchOff = empty ? null : knowable && !nonData ? latest : null;
        String note = empty ? "nothing the brokers reference is on " + cluster + (active ? ", but it is the active cluster"
                : "; run cleanup, then it can be switched off")
                : switchOff != null ? "retention removes the last data ledger by then, provided every subscription "
                        + "has consumed it; then run cleanup"
                : nonData ? "cursor, schema or compacted-topic ledgers are still home here: let the migration "
                        + "finish (see status) or check its issues"
                : "some data ledgers have infinite or unknown retention, or are open: they pin the cluster until "
                        + "their topics are deleted or retention is changed";
        if (empty && !handles.isEmpty()) {
            note = "nothing the brokers reference is on " + cluster + ", but broker(s) " + handles.keySet()
                    + " still hold ledger handles there (for example a compacted topic's view read before the "
                    + "migration): unload those topics, then run cleanup";
        }
        return new DrainReport(cluster, active, status, empty, counted, bytes, byKind, open,
                data.size() > MAX_DATA_LEDGERS ? data.subList(0, MAX_DATA_LEDGERS) : data, switchOff, note,
                handles);
    }
}
