package io.bcswitch.bench;

import io.bcswitch.adapter.BookieClusterSwitchStorage;
import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.BookieClustersAdminException;
import io.bcswitch.client.DrainReport;
import io.bcswitch.client.Status;
import io.bcswitch.client.SwitchOutcome;
import io.bcswitch.testkit.SyntheticLedgers;
import io.bcswitch.testkit.TestCluster;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 4: inventory at scale. 100,000 managed ledgers (a quarter with a subscription) and 10,000 schemas,
 * written as synthetic metadata (the ledgers they name exist on the first cluster as closed, empty ledgers: their
 * metadata only), then, per setting of
 * {@code inventoryReadConcurrency} (the broker restarted with it): the drain report of the cluster they are on,
 * the switch to the other cluster until its migration is done (its plan and its final check each read the
 * inventory), the cleanup targets of the cluster switched away from, and verify. For each: time, the most
 * metadata-store reads the broker's inventory had in flight at once (must never exceed the setting), and the
 * JVM's heap peak above what was live before it. Stock Pulsar has no inventory, so there is no baseline; the
 * settings stand beside each other.
 */
final class InventoryAtScale implements Scenario {
    private static final String KEY = io.bcswitch.config.ConfigKey.INVENTORY_READ_CONCURRENCY.fullName();
    /** Overrides the number of managed ledgers (JAVA_OPTS=-Dbench.inventory.managedLedgers=N), to find where time goes. */
    static final String COUNT_PROPERTY = "bench.inventory.managedLedgers";
    /** Overrides the settings compared (JAVA_OPTS=-Dbench.inventory.limits=64,256). */
    static final String LIMITS_PROPERTY = "bench.inventory.limits";

    @Override
    public String name() {
        return "inventory";
    }

    @Override
    public String title() {
        return "Inventory at scale: drain report, migration, cleanup targets and verify over 100,000 managed ledgers";
    }

    /** What one setting measured over the rounds. */
    private static final class Figures {
        final Map<String, List<Double>> seconds = new LinkedHashMap<>();
        final Map<String, List<Double>> heapMb = new LinkedHashMap<>();
        int peak;
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        SyntheticLedgers synthetic = null;
        List<Integer> limits = limits(o);
        Map<Integer, Figures> figures = new LinkedHashMap<>();
        limits.forEach(l -> figures.put(l, new Figures()));
        List<String> notes = new ArrayList<>();
        double writeSeconds;
        try (TestCluster c = TestCluster.builder().bookieCluster(Sides.clusterName(0), 1)
                .bookieCluster(Sides.clusterName(1), 1).brokers(1).plugin(true)
                // a topic-policy lookup makes the broker own the namespace, which loads every topic with a
                // subscription: the synthetic ones (whose ledgers exist nowhere) would fail to load and be rolled
                // by every cutover; retention comes from the namespace policy instead
                .brokerConfig(p -> {
                    p.setProperty("topicLevelPoliciesEnabled", "false");
                    // the synthetic ledgers exist nowhere: at the default rate each would still be charged as a
                    // copy (16 KB), and the migration's time would be its pacing, not its inventory reads
                    p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "0");
                }).start()) {
            String ns = c.createTenant(Sides.NAMESPACE_TENANT);
            int count = Integer.getInteger(COUNT_PROPERTY, o.size(100_000, 300));
            synthetic = new SyntheticLedgers(ns, count, 4, 10, 1_000_000);
            long t0 = System.nanoTime();
            synthetic.write(c.broker(0).pulsar().getLocalMetadataStore());
            // the ledgers they name exist on the cluster they are on, closed and empty: verify reads their
            // metadata and the migration copies the schemas' as it would a real cluster's
            synthetic.writeLedgers(c.bookieCluster(Sides.clusterName(0)).clientConfiguration(),
                    c.bookieCluster(Sides.clusterName(0)).bookie(0).bookieId());
            writeSeconds = (System.nanoTime() - t0) / 1e9;
            try (BookieClustersAdmin first = admin(c)) {
                first.register(Sides.clusterName(1), c.bookieCluster(Sides.clusterName(1)).metadataServiceUri());
            }
            for (int r = 0; r < o.rounds(); r++) {
                for (int i = 0; i < limits.size(); i++) {
                    int limit = limits.get((i + r) % limits.size());
                    measure(c, limit, figures.get(limit), notes);
                }
            }
        }
        List<Comparison> comparisons = new ArrayList<>();
        for (Map.Entry<Integer, Figures> e : figures.entrySet()) {
            int limit = e.getKey();
            Figures f = e.getValue();
            f.seconds.forEach((what, s) -> comparisons.add(Comparison.absolute(what + " (limit " + limit + ")", "s",
                    Stat.of(s), "none", true)));
            f.heapMb.forEach((what, s) -> comparisons.add(Comparison.absolute("heap peak above live before, "
                    + what + " (limit " + limit + ")", "MB", Stat.of(s), "none", true)));
            comparisons.add(Comparison.absolute("most inventory reads in flight at once (limit " + limit + ")",
                    "reads", Stat.of(List.of((double) f.peak)), "<= " + limit, f.peak <= limit));
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("managedLedgers", synthetic.managedLedgers());
        settings.put("subscriptions", synthetic.cursors());
        settings.put("schemas", synthetic.schemas());
        settings.put("inventoryReadConcurrency", limits);
        settings.put("rounds", o.rounds());
        settings.put("shape", "ZooKeeper, 2 bookie clusters of 1 bookie, 1 broker with the plugin, "
                + "topic-level policies off");
        notes.add(0, String.format("synthetic metadata (managed ledgers, schemas, and the ledgers' own metadata on "
                + "the first cluster) written in %.1f s", writeSeconds));
        // one namespace's topic list is one ZooKeeper reply: past ZooKeeper's 1 MB default (about 50,000 topics) the
        // broker's session drops and reconnects in a loop, for Pulsar's own topic listing as for the inventory
        notes.add("jute.maxbuffer=" + System.getProperty("jute.maxbuffer", "(ZooKeeper's default, 1 MB)")
                + ": all topics are in one namespace, whose listing is one ZooKeeper reply");
        notes.add("heap figures are the whole JVM's (bench, ZooKeeper, bookies, broker): the sum of the heap pools' "
                + "peaks during the operation minus what was live after a GC before it, so an upper bound that "
                + "includes garbage");
        notes.add("the migration's time is from the switch call until it is DONE; it reads the inventory twice "
                + "(its plan and its final check) and copies the 10,000 schema ledgers (closed and empty, "
                + "unbounded: migrationBytesPerSecond=0, so that it measures the work, not the pacing)");
        return new ScenarioResult(name(), title(), Machine.describe(), settings, comparisons, notes, Map.of());
    }

    static List<Integer> limits(BenchOptions o) {
        String given = System.getProperty(LIMITS_PROPERTY);
        if (given != null && !given.isBlank()) {
            return Arrays.stream(given.split(",")).map(String::trim).map(Integer::valueOf).toList();
        }
        return o.smoke() ? List.of(4, 64) : List.of(64, 256, 1024);
    }

    /** Restarts the broker with {@code limit}, then times each operation once. */
    private static void measure(TestCluster c, int limit, Figures f, List<String> notes) throws Exception {
        c.broker(0).restart(p -> p.setProperty(KEY, Integer.toString(limit)));
        try (BookieClustersAdmin admin = admin(c)) {
            awaitBrokerCurrent(admin);
            timed(f, "drain report of the cluster holding them", notes,
                    () -> admin.drainReport(Sides.clusterName(0)));
            Status before = admin.status();
            String from = before.activeCluster();
            timed(f, "switch call to migration done", notes, () -> {
                SwitchOutcome out = admin.switchTo(Sides.otherCluster(from));
                awaitMigration(admin, out.directive().epoch());
                return out;
            });
            timed(f, "cleanup targets of the cluster switched away from", notes, () -> admin.cleanupTargets(from));
            timed(f, "verify", notes, () -> admin.verify(false));
            // the first report after the broker started runs its code cold; this one is what a running broker gives
            timed(f, "drain report again, the broker warm", notes, () -> admin.drainReport(Sides.clusterName(0)));
        }
        BookieClusterSwitchStorage storage = (BookieClusterSwitchStorage) c.broker(0).pulsar()
                .getManagedLedgerStorage();
        f.peak = Math.max(f.peak, storage.inventoryReadsPeak());
    }

    private static void timed(Figures f, String what, List<String> notes, Callable<?> operation) throws Exception {
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        System.gc();
        long live = heap.stream().mapToLong(p -> p.getUsage().getUsed()).sum();
        heap.forEach(MemoryPoolMXBean::resetPeakUsage);
        long t0 = System.nanoTime();
        Object result;
        try {
            result = operation.call();
        } catch (BookieClustersAdminException e) {
            // an answer the operator would not get either (the REST API gives up after 60 s): said, not timed
            notes.add(String.format("%s failed after %.1f s: %s", what, (System.nanoTime() - t0) / 1e9,
                    e.getMessage()));
            f.seconds.computeIfAbsent(what, k -> new ArrayList<>()).add(Double.NaN);
            return;
        }
        double s = (System.nanoTime() - t0) / 1e9;
        long peak = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        f.seconds.computeIfAbsent(what, k -> new ArrayList<>()).add(s);
        f.heapMb.computeIfAbsent(what, k -> new ArrayList<>()).add(Math.max(0, peak - live) / 1048576.0);
        if (result instanceof DrainReport d && !notes.stream().anyMatch(n -> n.startsWith("drain report:"))) {
            notes.add("drain report: " + d.ledgers() + " ledger(s) counted on " + d.cluster());
        }
    }

    /**
     * Until the restarted broker has published its record for the current epoch: before that a switch is refused
     * (409), since nothing says the broker would follow it.
     */
    private static void awaitBrokerCurrent(BookieClustersAdmin admin) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline) {
            Status st = admin.status();
            if (st.brokers() != null && !st.brokers().isEmpty()
                    && st.brokers().stream().allMatch(b -> b.appliedEpoch() == st.epoch())
                    && (st.pendingBrokers() == null || st.pendingBrokers().isEmpty())
                    && (st.brokersWithoutRecord() == null || st.brokersWithoutRecord().isEmpty())) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the restarted broker did not report the current epoch within 2 minutes");
    }

    private static void awaitMigration(BookieClustersAdmin admin, long epoch) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        while (System.nanoTime() < deadline) {
            Status st = admin.status();
            if (st.migration() != null && st.migration().switchEpoch() >= epoch
                    && st.migration().phase().startsWith("DONE")) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the migration after the switch did not end within 30 minutes");
    }

    /** Inventories of 100,000 managed ledgers take longer than a default HTTP request timeout. */
    private static BookieClustersAdmin admin(TestCluster c) {
        return BookieClustersAdmin.builder().serviceUrl(c.broker(0).webServiceUrl())
                .requestTimeout(Duration.ofMinutes(10)).build();
    }
}
