package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.testkit.TestCluster;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * What must hold over a cluster's life, however many switches it went through: after the cluster settled, no
 * migration older than the current switch is still between its start and its end, the active cluster is registered
 * and not DEPRECATED, and the resources the brokers hold (threads, BookKeeper client threads, metadata sessions and
 * watches) stay within a bound of what they held after the first switches, instead of growing with every switch.
 */
public final class LifeChecks {
    /** Switches accepted before the resources are measured the first time: every pool then has its clients. */
    static final int BASELINE_AFTER_SWITCHES = 6;
    /**
     * The last switch whose reading still goes into the baseline. One reading alone can catch the brokers at a low
     * (a broker restarted a moment ago, its clients not yet created), and every later ordinary reading then looked
     * like growth; the highest reading of each gauge over these switches is what the cluster holds at work.
     */
    static final int BASELINE_UNTIL_SWITCHES = 12;
    /**
     * How far each gauge may rise above its baseline: broker restarts and in-flight work move them, and a client a
     * switch replaced is closed only once its grace (30 s) is over, so the switches of the last half minute still
     * have theirs. A leak of one client per pool and switch passes these within a few switches.
     */
    private static final int THREAD_SLACK = 120;
    private static final int CLIENT_THREAD_SLACK = 60;
    private static final int SESSION_SLACK = 16;
    private static final double WATCH_FACTOR = 1.3;
    private static final int WATCH_SLACK = 200;
    /**
     * How long gauges above their bound are read again before they count: a replaced client's grace (30 s), the
     * broker's sweep of retired clients (every 5 s) and a margin.
     */
    private static final long AFTER_GRACE_MILLIS = 45_000;
    private static final Set<String> TERMINAL = Set.of("DONE", "DONE_WITH_FAILURES", "SUPERSEDED", "ROLLED_BACK");

    /** One reading of the gauges. */
    public record Gauges(int threads, int clientThreads, int sessions, int watches) {
        @Override
        public String toString() {
            return threads + " threads (" + clientThreads + " of BookKeeper clients), " + sessions
                    + " ZooKeeper sessions, " + watches + " watches";
        }
    }

    private final TestCluster cluster;
    private Gauges baseline;
    private int baselineSwitches;
    private Gauges peak;

    public LifeChecks(TestCluster cluster) {
        this.cluster = cluster;
    }

    /** The gauges now. */
    public Gauges read() {
        int clientThreads = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (n.startsWith("BookKeeperClientWorker") || n.startsWith("BookKeeperClientScheduler")
                    || n.startsWith("bcs-bookkeeper-worker") || n.contains("-SendThread(")) {
                clientThreads++;
            }
        }
        return new Gauges(ManagementFactory.getThreadMXBean().getThreadCount(), clientThreads,
                cluster.zooKeeperSessions(), cluster.zooKeeperWatches());
    }

    /**
     * Problems with the resources after {@code switches} accepted switches (empty: none). The baseline is the highest
     * reading of each gauge from switch {@value #BASELINE_AFTER_SWITCHES} to switch {@value #BASELINE_UNTIL_SWITCHES};
     * every later one must stay near it.
     */
    public List<String> resources(int switches) {
        Gauges now = read();
        if (peak == null || now.threads() > peak.threads()) {
            peak = now;
        }
        if (switches < BASELINE_AFTER_SWITCHES) {
            return List.of();
        }
        if (baseline == null || switches <= BASELINE_UNTIL_SWITCHES) {
            baseline = baseline == null ? now : new Gauges(Math.max(baseline.threads(), now.threads()),
                    Math.max(baseline.clientThreads(), now.clientThreads()),
                    Math.max(baseline.sessions(), now.sessions()), Math.max(baseline.watches(), now.watches()));
            baselineSwitches = switches;
            return List.of();
        }
        List<String> out = new ArrayList<>();
        if (over(now)) {
            // the clients the switches of the last half minute replaced are still in their grace: above the bound
            // only if it stays so once that grace is over for every one of them
            Gauges first = now;
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AFTER_GRACE_MILLIS);
            while (over(now) && System.nanoTime() < until) {
                try {
                    Thread.sleep(2_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                now = read();
            }
            if (over(now)) {
                out.add("resources grow with the switches: after " + switches + " switch(es) " + first + ", still "
                        + now + " " + AFTER_GRACE_MILLIS / 1000 + " s later, after " + baselineSwitches + " "
                        + baseline);
            }
        }
        return out;
    }

    private boolean over(Gauges now) {
        long watchBound = Math.round(baseline.watches() * WATCH_FACTOR) + WATCH_SLACK;
        return now.threads() > baseline.threads() + THREAD_SLACK
                || now.clientThreads() > baseline.clientThreads() + CLIENT_THREAD_SLACK
                || now.sessions() > baseline.sessions() + SESSION_SLACK || now.watches() > watchBound;
    }

    /** Live threads by name, numbers left out ("BookKeeperClientWorker-OrderedExecutor-N-N"), most first. */
    public static String threadNames() {
        java.util.Map<String, Integer> byName = new java.util.TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            byName.merge(t.getName().replaceAll("[0-9]+", "N"), 1, Integer::sum);
        }
        return byName.entrySet().stream().sorted(java.util.Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(25).map(e -> e.getValue() + " " + e.getKey()).toList().toString();
    }

    /** The baseline and the reading with the most threads, for the run's log. */
    public String summary() {
        return "baseline " + (baseline == null ? "(not reached)" : baseline + " after " + baselineSwitches
                + " switch(es)") + ", peak " + peak;
    }

    /**
     * Problems with the registry once settled: a migration older than the current switch that has not ended, an
     * active cluster that is not registered or is DEPRECATED.
     */
    public List<String> registry(JsonNode status, JsonNode clusters) throws Exception {
        List<String> out = new ArrayList<>();
        long epoch = status.path("epoch").asLong(0);
        Map<String, JsonNode> states = Registry.jsonChildren(cluster.zkConnectString(),
                "/admin/bookie-clusters/orchestrator");
        states.values().forEach(s -> {
            long e = s.path("switchEpoch").asLong();
            String phase = s.path("phase").asText();
            if (e < epoch && !TERMINAL.contains(phase)) {
                out.add("the migration of switch epoch " + e + " is still " + phase + " after the cluster settled on "
                        + "switch epoch " + epoch);
            }
        });
        String active = status.path("activeCluster").asText();
        JsonNode record = null;
        for (JsonNode c : clusters) {
            if (c.path("name").asText().equals(active)) {
                record = c;
            }
        }
        if (record == null) {
            out.add("the active cluster " + active + " is not registered");
        } else if (record.path("status").asText().equals("DEPRECATED")) {
            out.add("the active cluster " + active + " is DEPRECATED: " + record);
        }
        return out;
    }
}
