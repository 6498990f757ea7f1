package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.bcswitch.testkit.TestBookieCluster;
import io.bcswitch.testkit.TestBroker;
import io.bcswitch.testkit.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A seeded, randomized sequence of operator actions and faults on a real in-process cluster (three bookie clusters,
 * two brokers, a mixed workload on twenty topics), checked after every step and at the end:
 * <ul>
 *   <li>after every step the cluster must settle (every live broker applied the switch and finished its cutover,
 *       the latest switch's migration started and finished, no older one left between its start and its end, every
 *       broker on the current relocation epoch) within a bound: a sequence that never settles is a wedge; then
 *       {@code GET /verify} must report no violation, the active cluster must be registered and not DEPRECATED, no
 *       broker's pool may have built a client for a cluster that stayed DEPRECATED, and in a long run the brokers'
 *       threads, sessions and watches must stay near what they were after the first switches;</li>
 *   <li>every REST answer must be a success or a refusal (4xx): a 5xx is a failure;</li>
 *   <li>when verify says the plugin could be removed, every ledger the topics use (as their brokers list them) is on
 *       the active bookie cluster;</li>
 *   <li>at the end, the copies rollbacks and superseded migrations list for deletion on inactive clusters must be
 *       worked off within a minute (verify does not name a listed copy an orphan), then every inactive cluster is
 *       cleaned up (which must be accepted) and the removal verdict may wait only for what retention keeps;</li>
 *   <li>at the end, every acknowledged message must have been received by its subscription, new messages in
 *       order per producer and partition, and no message whose acknowledgement the broker confirmed may come
 *       again, unless it crossed a step that moved topics between brokers abruptly (a broker cut off longer than its
 *       session, the active cluster's bookies stopped), up to 30 s after the cluster settled from it;</li>
 *   <li>at the end, every topic read again from the earliest position holds every acknowledged message exactly once
 *       (the brokers deduplicate), in the producer's order;</li>
 *   <li>last, after a run with a switch, the old data let go (backlogs skipped, retention off, topics trimmed):
 *       verify must then say the plugin can be removed, and that claim is checked as above.</li>
 * </ul>
 * A failure names the seed and the steps taken; the same seed replays the same choices (outcomes that depend on
 * timing can still differ).
 */
public final class SequenceExplorer {
    private static final Logger log = LoggerFactory.getLogger(SequenceExplorer.class);
    static final String[] CLUSTERS = {"cluster-a", "cluster-b", "cluster-c"};
    private static final int SESSION_TIMEOUT_MILLIS = 6_000;
    private static final Duration SETTLE = Duration.ofSeconds(120);
    private static final Set<String> TERMINAL_PHASES = Set.of("DONE", "DONE_WITH_FAILURES", "SUPERSEDED",
            "ROLLED_BACK");

    /**
     * What one run did and found.
     *
     * @param switches switches the brokers accepted (rollbacks' switches back not included)
     * @param rollbacksFinished rollbacks the ROLLBACK step had accepted whose migration then settled ROLLED_BACK
     * @param removalChecksAfterASwitch whether (1) verify's "the plugin can be removed" was checked against the
     *                                  topics' own ledgers at the end of a run with a switch, once the old data was
     *                                  let go
     */
    public record Result(long seed, List<String> steps, List<String> problems, int switches, int rollbacksFinished,
                         int removalChecksAfterASwitch) {
        public boolean ok() {
            return problems.isEmpty();
        }

        public String describe() {
            return "seed " + seed + " (replay: -Dbcs.explorer.seed=" + seed + " -Dbcs.explorer.steps=" + steps.size()
                    + ")\nsteps:\n  " + String.join("\n  ", steps) + "\nproblems:\n  " + String.join("\n  ", problems);
        }
    }

    /** The actions a step can take. */
    public enum Action {
        SWITCH(7), SWITCH_BACK(3), ROLLBACK(3), RETRY_MIGRATION(1), CLEANUP_DRY(1), CLEANUP(2), CLOSE_CLIENT(1),
        UNREGISTER(1), REGISTER(2), BROKER_RESTART(2), PAUSE_SHORT(1), PAUSE_LONG(2), BOOKIES_DOWN(1), BOOKIES_UP(2),
        ACTIVATION_FAILURE(2), COMPACT(1), FEED_IDLE(1), REGISTER_DUPLICATE(1), BROKER_WITHOUT_PLUGIN(1),
        DISASTER(1), CLEANUP_DURING_SUBSCRIPTION_CHURN(1), ABANDONED_ANNOUNCEMENT(1), TUNING_WHILE_MOVING(2),
        // weight 0: only scripts take it. With weight 1, a seed CI then ran drew a new sequence (compact, switch,
        // broker without the plugin, restart) that lets the broker without the plugin load topics after a switch:
        // Pulsar's managed ledger there drops a last ledger its client cannot find on its own cluster ("Ledger not
        // found"), damage the plugin cannot prevent (it makes it seen: BROKER_WITHOUT_PLUGIN checks the
        // brokers_without_plugin metric), and verify fails now and then
        SCHEMAS_DELETED_WHILE_MOVED(0),
        // weight 0 for the same reason: a ledger another application wrote straight into the active bookie cluster (no
        // Pulsar metadata, an id of that cluster's range) must survive cleanups of that cluster and never fail them
        FOREIGN_LEDGER(0),
        // weight 0: a broker cut off while two switches are made comes back two epochs behind, with ledgers of the
        // epoch in between it never saw; a script runs it
        PAUSE_ACROSS_TWO_SWITCHES(0),
        // an operator's command while an earlier one's work still runs (a cutover, a migration's PENDING, BUILD or
        // PROMOTE, a rollback, a cleanup), through the other broker: nothing waits for the cluster to settle first
        OVERLAP(3),
        // two operators at the same moment, one through each broker
        TWO_OPERATORS(2),
        // another application's ledger with an id near the end of the 63-bit space, in a registered cluster
        FOREIGN_TOP_LEDGER(1),
        // a precheck whose probe ledger is created but cannot be written (the target's bookies do not answer)
        PROBE_WRITE_FAILS(1),
        // a switch while the previous switch's migration is still PENDING or copying (slowed down): the older
        // migration must end, and the newer must not wait for it
        SWITCH_WHILE_MIGRATING(1),
        // close-client or cleanup of a cluster at the same moment as a switch to it, through the two brokers: the
        // cluster switched to must never end up DEPRECATED
        DEPRECATE_RACING_SWITCH(1),
        // the broker running a migration's BUILD is cut off from the metadata store past its session timeout while
        // it copies (a long GC pause): the other broker takes the migration over, and what the cut-off one still
        // writes when it comes back must not overwrite the new owner's records
        PAUSE_DURING_BUILD(1),
        // weight 0 (a script runs it): the bookies of the cluster a migration copies from stop for a few seconds
        // while it copies, as a bookie restarts after its metadata session expired; the migration must end DONE,
        // the copies that failed meanwhile tried again, not left for the operator
        BOOKIES_RESTART_DURING_BUILD(0),
        // weight 0 (a script runs it): an inactive cluster's client closed (close-client), then two cleanups of it and
        // another close-client at once through the two brokers: each cleanup's end deprecates the cluster again, which
        // closes its clients on every broker while the other cleanup still lists and deletes through them
        CLEANUPS_OF_A_RETIRED_CLUSTER(0),
        // the metadata service (its own ZooKeeper) of an inactive registered cluster stops for the length of a verify:
        // verify must answer, saying it could not list that cluster's ledgers, never pass on what it did not read (a
        // listing that ended half way once passed for the cluster's whole content; one that hung made verify 503)
        METADATA_DOWN(1);

        final int weight;

        Action(int weight) {
            this.weight = weight;
        }
    }

    private final long seed;
    private final int stepCount;
    private final Random random;
    /** Which broker answers a REST call: apart from {@link #random}, so that polling never shifts the steps. */
    private final Random restRandom;
    private final List<String> steps = new ArrayList<>();
    /** Added to from the threads of concurrent operators too. */
    private final List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
    private TestCluster cluster;
    private PulsarAdmin admin;
    private Workload workload;
    private final Set<String> bookiesDown = java.util.Collections.synchronizedSet(new TreeSet<>());
    /** Ledgers written straight into a cluster by something that is not Pulsar: cluster to ids. */
    private final java.util.Map<String, Set<Long>> foreignLedgers = new java.util.TreeMap<>();
    /**
     * When topics moved between brokers abruptly (a broker cut off past its session, one without the plugin serving
     * meanwhile, the active cluster's bookies stopped): {from, to} in wall-clock ms, to open ({@code Long.MAX_VALUE})
     * until the cluster settles with every bookie up. A message whose acknowledgement a broker confirmed may come again
     * only across such a window; anywhere else it means a cursor went back.
     */
    private final List<long[]> abruptWindows = java.util.Collections.synchronizedList(new ArrayList<>());
    /** After a window closes, the consumers may still be receiving what the new owner sent them again. */
    private static final long ABRUPT_GRACE_MILLIS = 30_000;
    /** The switch epoch a rollback of the current step rolled back (0: none), and how many settled ROLLED_BACK. */
    private long rolledBack;
    private int rollbacksFinished;
    /** Switches the brokers accepted (POST /switch answered 200), rollbacks' switches back not included. */
    private int switches;
    private final Map<String, Rest> rests = new java.util.concurrent.ConcurrentHashMap<>();
    /** The BookKeeper clients the brokers' pools build ({@link #clientsOfRetired}). */
    private LogCapture clientBuilds;
    /** The DEPRECATED clusters, and the switch epoch, of the last check of {@link #clientsOfRetired}. */
    private Set<String> retired = Set.of();
    private long retiredEpoch = -1;
    private LifeChecks life;

    /** The actions of a scripted run, in order (null: picked by the seed). */
    private final List<Action> script;
    /** A long run goes on until this many switches were accepted (0: a run of {@link #stepCount} steps). */
    private final int minSwitches;
    /** Steps of a long run without an accepted switch after which the operator repairs (see {@link #run}). */
    private static final int STUCK_STEPS = 12;

    public SequenceExplorer(long seed, int stepCount) {
        this(seed, stepCount, null, 0);
    }

    /**
     * A long run: steps picked by the seed until {@code minSwitches} switches were accepted (at most four steps per
     * switch), checking after each that the resources the brokers hold stay bounded ({@link LifeChecks}).
     */
    public static SequenceExplorer longRun(long seed, int minSwitches) {
        return new SequenceExplorer(seed, 0, null, minSwitches);
    }

    /**
     * A scripted run: exactly {@code script}'s actions, in order; the seed still picks their details (which
     * cluster, which broker). Found sequences are kept this way, so they keep their meaning when actions are added.
     */
    public SequenceExplorer(long seed, List<Action> script) {
        this(seed, script.size(), List.copyOf(script), 0);
    }

    /**
     * Whether this run's brokers make every drain report, cleanup and verify an operation at once (the path a long
     * one takes over a large cluster), which the calls follow to the end: half the seeds, so that kills, restarts
     * and metadata cuts also land while operations run.
     */
    private final boolean viaOperations;

    private SequenceExplorer(long seed, int stepCount, List<Action> script, int minSwitches) {
        this.minSwitches = minSwitches;
        this.seed = seed;
        this.stepCount = stepCount;
        this.script = script;
        this.random = new Random(seed);
        this.restRandom = new Random(~seed);
        // drawn from the seed's last bit, not its random stream: found sequences keep their steps (of the CI's
        // plans, seed 2 goes through operations, seed 1 not)
        this.viaOperations = (seed & 1) == 0;
    }

    public Result run() {
        long start = System.nanoTime();
        log.info("EXPLORE seed={}: drain, cleanup and verify {}", seed, viaOperations
                ? "become operations at once (operationAfterSeconds=0), followed to their end" : "answered directly");
        try {
            cluster = TestCluster.builder()
                    .bookieCluster(CLUSTERS[0], 1)
                    .bookieCluster(CLUSTERS[1], 1)
                    // the third on a ZooKeeper of its own, as a separate bookie cluster usually is (METADATA_DOWN)
                    .bookieClusterWithOwnZooKeeper(CLUSTERS[2], 1)
                    .brokers(2)
                    .pausableMetadataLinks()
                    .brokerConfig(p -> {
                        p.setProperty("metadataStoreSessionTimeoutMillis", Integer.toString(SESSION_TIMEOUT_MILLIS));
                        p.setProperty("zookeeperSessionExpiredPolicy", "reconnect");
                        p.setProperty(io.bcswitch.config.ConfigKey.RESYNC_INTERVAL_SECONDS.fullName(), "5");
                        p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "0");
                        p.setProperty(io.bcswitch.config.ConfigKey.MIGRATION_PROMOTE_BATCH_SIZE.fullName(), "5");
                        p.setProperty("brokerDeleteInactiveTopicsEnabled", "false");
                        // a producer resends what a broker persisted but could not confirm before it went away (a
                        // restart, a kill, a cut-off): without deduplication that is a second stored copy, Pulsar's
                        // at-least-once; with it the re-read at the end can demand every message exactly once. The
                        // dedup cursor then follows every switch like the other cursors, and snapshots often enough
                        // that it does not keep the old data pinned at the end
                        p.setProperty("brokerDeduplicationEnabled", "true");
                        p.setProperty("brokerDeduplicationSnapshotIntervalSeconds", "5");
                        p.setProperty("brokerDeduplicationSnapshotFrequencyInSeconds", "5");
                        if (viaOperations) {
                            p.setProperty(io.bcswitch.config.ConfigKey.OPERATION_AFTER_SECONDS.fullName(), "0");
                        }
                    })
                    .start();
            admin = cluster.newAdmin();
            String ns = cluster.createTenant("explore");
            admin.namespaces().setRetention(ns, new RetentionPolicies(-1, -1));
            PulsarClient client = cluster.newClient();
            workload = new Workload(client, admin, ns, 10, 4, 2, 3, 4, 5);
            for (String c : List.of(CLUSTERS[1], CLUSTERS[2])) {
                expectOk(rest().register(c, cluster.bookieCluster(c).metadataServiceUri()), "register " + c);
            }
            if (!workload.feedIdleTopics(5, 60)) {
                throw new IllegalStateException("the idle-subscription topics do not take messages at the start");
            }
            Map<String, String> notCompacted = workload.compact();
            if (!notCompacted.isEmpty()) {
                throw new IllegalStateException("the compacted topics refuse a compaction at the start: " + notCompacted);
            }
            life = new LifeChecks(cluster);
            clientBuilds = LogCapture.install("io.bcswitch.routing.ClusterClientPool", "creating BookKeeper client");
            int switchesBefore = 0;
            int stepsWithoutSwitch = 0;
            for (int i = 0; (i < stepCount || (switches < minSwitches && i < 8 * minSwitches)) && problems.isEmpty();
                 i++) {
                Action a = script != null ? script.get(i) : pick();
                stepsWithoutSwitch = switches > switchesBefore ? 0 : stepsWithoutSwitch + 1;
                switchesBefore = switches;
                if (minSwitches > 0 && script == null && stepsWithoutSwitch >= STUCK_STEPS) {
                    // a long run is there to check resources over many switches; a walk that stopped the bookies of
                    // every cluster but the active one (or unregistered them) can go on for hundreds of steps with
                    // every switch refused (seed 6209411098687921644: 14 of 40 in 320 steps). The operator repairs:
                    // bookies back, clusters registered again (the drawn action is replaced, the draw still made)
                    a = !bookiesDown.isEmpty() ? Action.BOOKIES_UP : Action.REGISTER;
                    stepsWithoutSwitch = 0;
                }
                String what = step(a);
                steps.add((i + 1) + ". " + what);
                log.info("EXPLORE seed={} step {}: {}", seed, i + 1, what);
                if (problems.isEmpty()) {
                    settleAndVerify("after step " + (i + 1) + " (" + what + ")");
                    settledAfterAbrupt();
                }
                if (problems.isEmpty() && rolledBack > 0) {
                    String phase = Registry.jsonChildren(cluster.zkConnectString(),
                            "/admin/bookie-clusters/orchestrator").getOrDefault(Long.toString(rolledBack),
                            MissingNode.getInstance()).path("phase").asText("none");
                    log.info("EXPLORE seed={} the rollback of switch epoch {} accepted at step {}: migration {}", seed,
                            rolledBack, i + 1, phase);
                    rollbacksFinished += phase.equals("ROLLED_BACK") ? 1 : 0;
                    rolledBack = 0;
                }
            }
            if (problems.isEmpty() && switches < minSwitches) {
                // its resources were checked over fewer switches than asked, maybe never: not a long run
                problems.add("a long run: only " + switches + " of " + minSwitches + " switches accepted in "
                        + steps.size() + " steps");
            }
            if (problems.isEmpty()) {
                finish();
            }
        } catch (Throwable e) {
            problems.add("exception: " + e);
            log.error("EXPLORE seed={} failed with an exception", seed, e);
            if (e instanceof InterruptedException) {
                // the test's timeout: the caller must stop too, not start the next run
                Thread.currentThread().interrupt();
            }
        } finally {
            if (clientBuilds != null) {
                clientBuilds.remove();
            }
            if (workload != null) {
                workload.close();
            }
            if (cluster != null) {
                cluster.close();
            }
        }
        log.info("EXPLORE seed={} {} in {} s: {} step(s), {} switch(es), removal verdict checked {} time(s), "
                + "resources: {}, {}", seed, problems.isEmpty() ? "passed" : "FAILED",
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), steps.size(), switches, removalChecks,
                life == null ? "not read" : life.summary(), problems.isEmpty() ? "nothing found" : problems);
        return new Result(seed, List.copyOf(steps), List.copyOf(problems), switches, rollbacksFinished,
                removalChecksAfterASwitch);
    }

    private void abrupt() {
        synchronized (abruptWindows) {
            if (abruptWindows.isEmpty() || abruptWindows.get(abruptWindows.size() - 1)[1] != Long.MAX_VALUE) {
                abruptWindows.add(new long[] {System.currentTimeMillis(), Long.MAX_VALUE});
            }
        }
    }

    /** Closes the open abrupt window once the cluster settled with every bookie up. */
    private void settledAfterAbrupt() {
        synchronized (abruptWindows) {
            if (bookiesDown.isEmpty() && !abruptWindows.isEmpty()
                    && abruptWindows.get(abruptWindows.size() - 1)[1] == Long.MAX_VALUE) {
                abruptWindows.get(abruptWindows.size() - 1)[1] = System.currentTimeMillis();
            }
        }
    }

    /** Whether a message confirmed at {@code confirmedAt} and delivered again at {@code at} crossed a window. */
    private boolean acrossAbruptWindow(long confirmedAt, long at) {
        synchronized (abruptWindows) {
            for (long[] w : abruptWindows) {
                long end = w[1] == Long.MAX_VALUE ? Long.MAX_VALUE : w[1] + ABRUPT_GRACE_MILLIS;
                if (confirmedAt <= w[1] && at >= w[0] && at <= end) {
                    return true;
                }
            }
            return false;
        }
    }

    private Action pick() {
        int total = 0;
        for (Action a : Action.values()) {
            total += a.weight;
        }
        int r = random.nextInt(total);
        for (Action a : Action.values()) {
            r -= a.weight;
            if (r < 0) {
                return a;
            }
        }
        throw new IllegalStateException();
    }

    /** REST through a running broker (chosen by the seed when both run). */
    private Rest rest() {
        List<TestBroker> running = new ArrayList<>();
        for (int i = 0; i < cluster.brokerCount(); i++) {
            if (cluster.broker(i).isRunning()) {
                running.add(cluster.broker(i));
            }
        }
        return restOf(running.get(restRandom.nextInt(running.size())));
    }

    /**
     * REST through broker {@code b}: every answer is looked at, wherever it comes from (a step, a status poll, a
     * verify): a server error (5xx) is a problem, and an accepted switch is counted.
     */
    private Rest restOf(TestBroker b) {
        // one per address: each holds an HTTP client, whose threads would otherwise pile up in the resources read
        return rests.computeIfAbsent(b.webServiceUrl(), url -> Rest.observed(url, (call, r) -> {
            // 503 says "not now, retry": right while a bookie cluster is stopped (topics on it cannot load, so what
            // they reference cannot be known); any other 5xx, or a 503 with every bookie up, is a failure
            if (r.status() >= 500 && !(r.status() == 503 && !bookiesDown.isEmpty())) {
                problems.add("server error " + r.status() + " for " + call + ": " + r.raw());
            }
            if (r.status() == 200 && call.equals("POST /switch")) {
                synchronized (this) {
                    switches++;
                }
            }
        }, viaOperations));
    }

    private JsonNode status() {
        return rest().status();
    }

    private String active() {
        return status().get("activeCluster").asText();
    }

    private List<String> registered() {
        List<String> out = new ArrayList<>();
        rest().get("/").json().forEach(c -> out.add(c.get("name").asText()));
        return out;
    }

    private String anyOf(List<String> names) {
        return names.isEmpty() ? null : names.get(random.nextInt(names.size()));
    }

    /** Registered clusters other than the active one. */
    private List<String> inactive() {
        String active = active();
        return registered().stream().filter(c -> !c.equals(active)).toList();
    }

    private String step(Action a) throws Exception {
        switch (a) {
            case SWITCH -> {
                String t = anyOf(inactive());
                return t == null ? "switch: nothing to switch to"
                        : "switch to " + t + " -> " + answer(rest().switchTo(t));
            }
            case SWITCH_BACK -> {
                JsonNode d = status().get("directive");
                if (d == null || d.isNull()) {
                    return "switch back: no switch yet";
                }
                String origin = d.get("origin").asText();
                return "switch back to " + origin + " -> " + answer(rest().switchTo(origin));
            }
            case ROLLBACK -> {
                JsonNode d = status().get("directive");
                Rest.Response r = rest().post("/rollback", "");
                // steps run one at a time: an accepted rollback's switch back is the latest switch, and the answer
                // names it even when a background pass finished the rollback before the request's own finish ran
                JsonNode back = r.json() == null ? null : r.json().path("switched").path("directive");
                if (r.status() == 200 && d != null && !d.isNull()
                        && (back == null || !d.get("origin").asText().equals(back.path("target").asText()))) {
                    problems.add("an accepted rollback of the switch to " + d.get("target").asText() + " does not "
                            + "name its switch back to " + d.get("origin").asText() + ": " + r.raw());
                }
                if (r.status() == 200 && d != null && !d.isNull()) {
                    rolledBack = d.get("epoch").asLong();
                }
                return "rollback -> " + answer(r);
            }
            case RETRY_MIGRATION -> {
                return "retry-migration -> " + answer(rest().post("/migration/retry", ""));
            }
            case CLEANUP_DRY, CLEANUP -> {
                String c = anyOf(inactive());
                if (c == null) {
                    return "cleanup: no inactive cluster";
                }
                boolean dry = a == Action.CLEANUP_DRY;
                return "cleanup " + c + (dry ? " (dry run)" : "") + " -> " + answer(rest().post("/cleanup",
                        "{\"srcCluster\":\"" + c + "\",\"dryRun\":" + dry + ",\"force\":true}"));
            }
            case CLOSE_CLIENT -> {
                String c = anyOf(inactive());
                return c == null ? "close-client: no inactive cluster"
                        : "close-client " + c + " -> " + answer(rest().post("/close-client/" + c, ""));
            }
            case UNREGISTER -> {
                String c = anyOf(inactive());
                return c == null ? "unregister: no inactive cluster"
                        : "unregister " + c + " -> " + answer(rest().request("DELETE", "/" + c, null, null));
            }
            case REGISTER -> {
                List<String> gone = new ArrayList<>(List.of(CLUSTERS));
                gone.removeAll(registered());
                String c = anyOf(gone);
                return c == null ? "register: all registered" : "register " + c + " -> "
                        + answer(rest().register(c, cluster.bookieCluster(c).metadataServiceUri()));
            }
            case BROKER_RESTART -> {
                int i = random.nextInt(cluster.brokerCount());
                cluster.broker(i).restart();
                return "restart broker " + i;
            }
            case PAUSE_SHORT -> {
                int i = random.nextInt(cluster.brokerCount());
                long ms = SESSION_TIMEOUT_MILLIS / 3;
                pause(i, ms);
                return "cut broker " + i + " off the metadata store for " + ms + " ms (its session survives)";
            }
            case PAUSE_LONG -> {
                int i = random.nextInt(cluster.brokerCount());
                // a switch made meanwhile is missed by the cut-off broker's notifications
                String t = anyOf(inactive());
                TestBroker b = cluster.broker(i);
                abrupt();
                b.metadataLink().pause();
                String sw = "";
                try {
                    Thread.sleep(1_000);
                    if (t != null && random.nextBoolean()) {
                        sw = ", switch to " + t + " meanwhile -> " + answer(restOf(cluster.broker(1 - i)).switchTo(t));
                    }
                    Thread.sleep(SESSION_TIMEOUT_MILLIS + 3_000);
                } finally {
                    b.metadataLink().resume();
                }
                return "cut broker " + i + " off the metadata store past its session timeout" + sw;
            }
            case PAUSE_ACROSS_TWO_SWITCHES -> {
                // the epoch-gap class: a broker that missed switches N+1 and N+2 while cut off may apply N+2's
                // directive before it reads N+1's range again, and an id of that range then lies between two known
                // ranges whose epochs are not consecutive; it must never be routed to epoch N's cluster. The other
                // broker writes ledgers in N+1's range meanwhile; once the cut-off broker is back, the other one
                // restarts, so the broker that came back loads every topic and reads those ledgers
                int i = random.nextInt(cluster.brokerCount());
                String from = active();
                List<String> healthy = inactive().stream().filter(x -> !bookiesDown.contains(x)).toList();
                String t1 = anyOf(healthy);
                if (t1 == null) {
                    return "pause across two switches: no healthy cluster to switch to";
                }
                // the third cluster when there is one, so that epochs N, N+1 and N+2 each have their own cluster and
                // an id of N+1's range routed to N's cluster cannot be found there by chance
                List<String> third = healthy.stream().filter(x -> !x.equals(t1)).toList();
                String t2 = third.isEmpty() ? from : anyOf(third);
                Rest other = restOf(cluster.broker(1 - i));
                TestBroker b = cluster.broker(i);
                abrupt();
                b.metadataLink().pause();
                String sw;
                try {
                    Thread.sleep(1_000);
                    // allowed: the cut-off broker is live and confirmed the current epoch (it misses this one)
                    Rest.Response first = other.switchTo(t1);
                    sw = "switch to " + t1 + " -> " + answer(first);
                    if (first.status() == 200) {
                        // past the session timeout the cut-off broker is no longer live, so the next switch need
                        // not wait for it; its topics move to the other broker, which writes them on t1
                        Thread.sleep(SESSION_TIMEOUT_MILLIS + 3_000);
                        sw += ", then to " + t2 + " -> " + answer(other.switchTo(t2));
                        Thread.sleep(2_000);
                    }
                } finally {
                    b.metadataLink().resume();
                }
                awaitLiveInPulsar(b);
                long deadline = System.nanoTime() + SETTLE.toNanos();
                while (unsettled() != null && System.nanoTime() < deadline) {
                    Thread.sleep(500);
                }
                cluster.broker(1 - i).restart();
                return "cut broker " + i + " off the metadata store past its session timeout; " + sw
                        + "; broker " + i + " back, broker " + (1 - i) + " restarted";
            }
            case BOOKIES_DOWN -> {
                String c = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
                if (c == null) {
                    return "bookies down: no candidate";
                }
                cluster.bookieCluster(c).stopBookies();
                bookiesDown.add(c);
                return "stop the bookies of " + c;
            }
            case BOOKIES_UP -> {
                String c = anyOf(new ArrayList<>(bookiesDown));
                if (c == null) {
                    return "bookies up: none down";
                }
                startBookies(c);
                return "restart the bookies of " + c;
            }
            case ACTIVATION_FAILURE -> {
                String t = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
                if (t == null) {
                    return "activation failure: no target";
                }
                int i = random.nextInt(cluster.brokerCount());
                TestBroker b = cluster.broker(i);
                b.failBookKeeperClients(cluster.bookieCluster(t).metadataServiceUri());
                String sw;
                String back = "";
                boolean rollBack = random.nextBoolean();
                try {
                    Rest other = restOf(cluster.broker(1 - i));
                    sw = answer(other.switchTo(t));
                    Thread.sleep(1_500);
                    if (rollBack) {
                        // the operator's cure: roll back while that broker still cannot reach the target
                        Rest.Response r = other.post("/rollback", "");
                        back = ", rollback meanwhile -> " + answer(r);
                        if (sw.startsWith("200") && r.status() == 409 && r.raw().contains("would not follow")) {
                            problems.add("a rollback was refused because of the broker that cannot activate the "
                                    + "switch it undoes: " + r.raw());
                        }
                    }
                    Thread.sleep(1_500);
                } finally {
                    b.healBookKeeperClients();
                }
                return "switch to " + t + " while broker " + i + " cannot build its client for 3 s -> " + sw + back;
            }
            case ABANDONED_ANNOUNCEMENT -> {
                // a switch announced by a broker that died before committing it (its brokers prepared clients of the
                // target for a range the target was never given), then a real switch to the same cluster: no broker
                // may create a ledger through a client prepared for the abandoned range
                String t = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
                if (t == null) {
                    return "abandoned announcement: no target";
                }
                JsonNode d = status().get("directive");
                long epoch = (d == null || d.isNull() ? 0 : d.get("epoch").asLong()) + 1;
                long bogusFirstId = (60L + random.nextInt(60)) << 32;
                Registry.put(cluster.zkConnectString(), "/admin/bookie-clusters/switch-prepare",
                        "{\"formatVersion\":1,\"target\":\"" + t + "\",\"epoch\":" + epoch
                                + ",\"firstLedgerId\":" + bogusFirstId + ",\"ts\":" + System.currentTimeMillis() + "}");
                Thread.sleep(1_000);
                return "announce a switch to " + t + " (epoch " + epoch + ", first id " + bogusFirstId + ") that is "
                        + "never committed, then switch to " + t + " -> " + answer(rest().switchTo(t));
            }
            case FOREIGN_LEDGER -> {
                // on the active cluster: its id generator issues ids of its own range (a standby's may still issue
                // ids of another cluster's range, a different case: a collision the migration reports)
                String c = active();
                if (bookiesDown.contains(c)) {
                    return "foreign ledger: the active cluster's bookies are down";
                }
                long id;
                try (org.apache.bookkeeper.client.BookKeeper bk = new org.apache.bookkeeper.client.BookKeeper(
                        cluster.bookieCluster(c).clientConfiguration())) {
                    org.apache.bookkeeper.client.LedgerHandle h = bk.createLedger(1, 1, 1,
                            org.apache.bookkeeper.client.BookKeeper.DigestType.CRC32, new byte[0]);
                    h.addEntry("not pulsar's".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    h.close();
                    id = h.getId();
                }
                foreignLedgers.computeIfAbsent(c, k -> new TreeSet<>()).add(id);
                return "another application writes ledger " + id + " straight into " + c;
            }
            case SCHEMAS_DELETED_WHILE_MOVED -> {
                // Pulsar deletes ledgers while the migration moves them (before, while and after it copies them),
                // and a broker may restart in between: no copy may be left where nothing reads or deletes it
                String t = anyOf(inactive());
                if (t == null) {
                    return "schemas deleted while moved: nothing to switch to";
                }
                List<String> doomed = workload.schemaTopicsToDelete(3);
                String switched = "switch to " + t + " -> " + answer(rest().switchTo(t));
                int restartBefore = random.nextInt(doomed.size() + 1);
                List<String> then = new ArrayList<>();
                for (int i = 0; i < doomed.size(); i++) {
                    if (i == restartBefore) {
                        int b = random.nextInt(cluster.brokerCount());
                        cluster.broker(b).restart();
                        then.add("restart broker " + b);
                    }
                    Thread.sleep(random.nextInt(800));
                    if (i == doomed.size() - 1) {
                        // the last one while copies are promoted: a delete routed to the old home just before its
                        // copy became home must not leave that copy behind (verify names an ORPHAN_COPY at its home)
                        then.add("migration " + awaitMigrationPhase("PROMOTE", 30));
                    }
                    String topic = doomed.get(i);
                    then.add("delete the schema of " + topic.substring(topic.lastIndexOf('/') + 1) + " -> "
                            + deleteSchema(topic));
                }
                return switched + ", then " + String.join(", ", then);
            }
            case REGISTER_DUPLICATE -> {
                // the same bookie cluster under another name and another spelling of its ZooKeeper address
                String c = anyOf(registered());
                String uri = cluster.bookieCluster(c).metadataServiceUri().replace("127.0.0.1", "127.1");
                Rest.Response r = rest().register(c + "-again", uri);
                if (r.status() != 409) {
                    problems.add("a second registration of " + c + " as " + c + "-again (" + uri + ") was not refused: "
                            + r.status() + " " + r.raw());
                }
                return "register " + c + " again as " + c + "-again -> " + answer(r);
            }
            case BROKER_WITHOUT_PLUGIN -> {
                int i = random.nextInt(cluster.brokerCount());
                String t = anyOf(inactive());
                if (switches > 0) {
                    // after a switch a stock broker that loads a topic drops a ledger its own cluster does not hold
                    // (a cursor's or the last data ledger: "Ledger not found", or an orphaned copy at its new home),
                    // which the plugin cannot prevent today, only show. Until a broker without the plugin is made
                    // unable to do that harm, the step is taken only before the first switch (its draws are made all
                    // the same, so the rest of a seed's sequence stays as it was drawn)
                    return "broker " + i + " without the plugin: not after a switch";
                }
                TestBroker b = cluster.broker(i);
                abrupt(); // the broker without the plugin may serve topics meanwhile
                b.restart(false);
                String sw = "";
                try {
                    // until Pulsar lists it as live, the broker is simply not there: wait for that
                    awaitLiveInPulsar(b);
                    // the brokers with the plugin make it seen (a broker without the plugin loses the last ledger
                    // of a topic it loads after a switch; the plugin cannot stop it, only show it)
                    String seen = awaitBrokersWithoutPlugin(cluster.broker(1 - i));
                    if (seen != null) {
                        problems.add("broker " + i + " runs without the plugin, but broker " + (1 - i)
                                + "'s /metrics does not show it: " + seen);
                    }
                    if (t != null) {
                        Rest.Response r = restOf(cluster.broker(1 - i)).switchTo(t);
                        if (r.status() != 409) {
                            problems.add("a switch while broker " + i + " runs without the plugin was not refused: "
                                    + r.status() + " " + r.raw());
                        }
                        sw = ", switch to " + t + " -> " + answer(r);
                    }
                } finally {
                    b.restart(true);
                }
                return "restart broker " + i + " without the plugin" + sw + ", then with it again";
            }
            case DISASTER -> {
                String from = active();
                String t = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
                if (t == null) {
                    return "disaster: no healthy target";
                }
                // acknowledgements whose cursor update was in flight to those bookies are lost: at-least-once
                // delivery redelivers them, as it does when a stock broker's only bookie cluster dies
                abrupt();
                cluster.bookieCluster(from).stopBookies();
                bookiesDown.add(from);
                return "stop the bookies of the active cluster " + from + ", switch to " + t + " -> "
                        + answer(rest().switchTo(t));
            }
            case CLEANUP_DURING_SUBSCRIPTION_CHURN -> {
                // the inventory behind cleanup reads every managed ledger while subscriptions come and go: Pulsar
                // answers "not found" for a managed ledger whose cursor is removed during the read, which must not
                // make its ledgers look unreferenced (they were deleted once)
                String c = anyOf(inactive());
                if (c == null) {
                    return "cleanup during subscription churn: no inactive cluster";
                }
                boolean dry = random.nextBoolean();
                AtomicBoolean stop = new AtomicBoolean();
                AtomicInteger churned = new AtomicInteger();
                AtomicInteger refused = new AtomicInteger();
                java.util.concurrent.atomic.AtomicReference<String> firstRefusal =
                        new java.util.concurrent.atomic.AtomicReference<>();
                CompletableFuture<Void> churn = CompletableFuture.runAsync(
                        () -> {
                            while (!stop.get()) {
                                String topic = "persistent://" + workload.namespace() + "/plain-"
                                        + ((churned.get() + refused.get()) % 3);
                                try {
                                    admin.topics().createSubscription(topic, "churn",
                                            MessageId.latest);
                                    admin.topics().deleteSubscription(topic, "churn");
                                    churned.incrementAndGet();
                                } catch (Exception e) {
                                    // a topic that cannot load meanwhile (bookies down) refuses: go on with the next
                                    refused.incrementAndGet();
                                    firstRefusal.compareAndSet(null, topic + ": " + e);
                                    try {
                                        Thread.sleep(100);
                                    } catch (InterruptedException ie) {
                                        return;
                                    }
                                }
                            }
                        });
                Rest.Response r;
                try {
                    Thread.sleep(300);
                    r = rest().post("/cleanup", "{\"srcCluster\":\"" + c + "\",\"dryRun\":" + dry
                            + ",\"force\":true}");
                } finally {
                    stop.set(true);
                    churn.get(60, TimeUnit.SECONDS);
                }
                if (refused.get() > 0 && bookiesDown.isEmpty()) {
                    // with every bookie up each topic loads: a refusal is not the churn the step is there for
                    problems.add("subscription churn during a cleanup refused " + refused.get() + " time(s) with every "
                            + "bookie up, first: " + firstRefusal.get());
                }
                return "cleanup " + c + (dry ? " (dry run)" : "") + " while " + churned.get() + " subscription(s) "
                        + "came and went (" + refused.get() + " refused) -> " + answer(r);
            }
            case TUNING_WHILE_MOVING -> {
                // the pace at its slowest (a copy rate of 1 byte/s, one copy at a time, a topic every 10 s) when a
                // switch starts; the cutover's pace is raised again after some seconds (rolls already waiting must
                // follow), the copy rate only once the migration copies (BUILD), so that copies wait on it; then it is
                // raised too (or reset), and the run must settle and lose nothing
                String low = "{\"migrationBytesPerSecond\":1,\"migrationConcurrency\":1,"
                        + "\"cutoverTopicsPerSecond\":0.1}";
                StringBuilder what = new StringBuilder("tuning to its slowest -> ")
                        .append(answer(rest().post("/tuning", low)));
                String t = anyOf(inactive());
                boolean switched = false;
                if (t != null) {
                    Rest.Response sw = rest().switchTo(t);
                    switched = sw.status() == 200;
                    what.append(", switch to ").append(t).append(" -> ").append(answer(sw));
                }
                long ms = 1_000 + random.nextInt(4_000);
                Thread.sleep(ms);
                String pace = random.nextBoolean() ? "null" : Integer.toString(20 + random.nextInt(500));
                what.append(", ").append(ms).append(" ms later cutoverTopicsPerSecond ").append(pace).append(" -> ")
                        .append(answer(rest().post("/tuning", "{\"cutoverTopicsPerSecond\":" + pace + "}")));
                String phase = switched ? awaitMigrationPhase("BUILD", 30) : "not started";
                long copying = 1_000 + random.nextInt(3_000);
                Thread.sleep(copying);
                String raised = random.nextBoolean()
                        ? "{\"migrationBytesPerSecond\":null,\"migrationConcurrency\":null}"
                        : "{\"migrationBytesPerSecond\":" + (1 + random.nextInt(10)) * 1_000_000L
                                + ",\"migrationConcurrency\":" + (1 + random.nextInt(4)) + "}";
                return what.append(", migration ").append(phase).append(", ").append(copying).append(" ms later ")
                        .append(raised).append(" -> ").append(answer(rest().post("/tuning", raised))).toString();
            }
            case OVERLAP -> {
                return overlap();
            }
            case TWO_OPERATORS -> {
                return twoOperators();
            }
            case FOREIGN_TOP_LEDGER -> {
                return foreignTopLedger();
            }
            case PROBE_WRITE_FAILS -> {
                return probeWriteFails();
            }
            case SWITCH_WHILE_MIGRATING -> {
                return switchWhileMigrating();
            }
            case DEPRECATE_RACING_SWITCH -> {
                return deprecateRacingSwitch();
            }
            case PAUSE_DURING_BUILD -> {
                return pauseDuringBuild();
            }
            case BOOKIES_RESTART_DURING_BUILD -> {
                return bookiesRestartDuringBuild();
            }
            case CLEANUPS_OF_A_RETIRED_CLUSTER -> {
                return cleanupsOfARetiredCluster();
            }
            case METADATA_DOWN -> {
                return metadataDown();
            }
            case COMPACT -> {
                Map<String, String> refused = workload.compact();
                if (!refused.isEmpty() && bookiesDown.isEmpty()) {
                    // with every bookie up each compacted topic loads and takes a compaction (or has one running)
                    problems.add("compaction refused with every bookie up: " + refused);
                }
                return "compact the compacted topics" + (refused.isEmpty() ? "" : " (refused: " + refused.keySet() + ")");
            }
            case FEED_IDLE -> {
                if (workload.feedIdleTopics(3, 120)) {
                    return "send to the idle-subscription topics";
                }
                if (bookiesDown.isEmpty()) {
                    problems.add("publishing to the idle-subscription topics did not complete within 120 s, with "
                            + "every bookie cluster up");
                }
                // a topic whose last ledger is on a cluster whose bookies are down cannot be loaded (its last
                // entry cannot be known) until they are back: its sends complete then
                return "send to the idle-subscription topics: not acknowledged within 120 s (bookies down: "
                        + bookiesDown + ")";
            }
            default -> throw new IllegalStateException(a.toString());
        }
    }

    /** An operator's command that a step can fire at any moment. */
    private enum Command {
        SWITCH, SWITCH_BACK, ROLLBACK, RETRY, CLEANUP_DELETE, CLOSE_CLIENT, UNREGISTER, TUNING
    }

    /**
     * Fires {@code c} through {@code via}, on {@code cluster} when it names one (null: one picked among the inactive
     * clusters); returns what it did and the answer's gist.
     */
    private String fire(Command c, Rest via, String cluster) {
        String on = cluster != null ? cluster : anyOf(inactive());
        return switch (c) {
            case SWITCH -> on == null ? "switch: nothing to switch to" : "switch to " + on + " -> "
                    + answer(via.switchTo(on));
            case SWITCH_BACK -> {
                JsonNode d = status().get("directive");
                yield d == null || d.isNull() ? "switch back: no switch yet" : "switch back to "
                        + d.get("origin").asText() + " -> " + answer(via.switchTo(d.get("origin").asText()));
            }
            case ROLLBACK -> "rollback -> " + answer(via.post("/rollback", ""));
            case RETRY -> "retry-migration -> " + answer(via.post("/migration/retry", ""));
            case CLEANUP_DELETE -> on == null ? "cleanup: no inactive cluster" : "cleanup " + on + " -> "
                    + answer(via.post("/cleanup", "{\"srcCluster\":\"" + on + "\",\"dryRun\":false,\"force\":true}"));
            case CLOSE_CLIENT -> on == null ? "close-client: no inactive cluster" : "close-client " + on + " -> "
                    + answer(via.post("/close-client/" + on, ""));
            case UNREGISTER -> on == null ? "unregister: no inactive cluster" : "unregister " + on + " -> "
                    + answer(via.request("DELETE", "/" + on, null, null));
            case TUNING -> {
                String t = random.nextBoolean() ? "{\"migrationBytesPerSecond\":null,\"migrationConcurrency\":null,"
                        + "\"cutoverTopicsPerSecond\":null}" : "{\"migrationConcurrency\":" + (1 + random.nextInt(4))
                        + ",\"cutoverTopicsPerSecond\":" + (5 + random.nextInt(200)) + "}";
                yield "tuning " + t + " -> " + answer(via.post("/tuning", t));
            }
        };
    }

    private Command anyCommand() {
        return Command.values()[random.nextInt(Command.values().length)];
    }

    /** The brokers' REST APIs in a random order (the first for the first operator, the other for the second). */
    private Rest[] twoBrokers() {
        int first = random.nextInt(cluster.brokerCount());
        TestBroker a = cluster.broker(first);
        TestBroker b = cluster.broker(1 - first);
        return new Rest[] {restOf(a.isRunning() ? a : b), restOf(b.isRunning() ? b : a)};
    }

    /**
     * OVERLAP: a switch, a rollback or a cleanup that deletes, and, while its work still runs (the cutover, or the
     * migration in PENDING, BUILD or PROMOTE, or the cleanup's deletions), another command through the other broker.
     * The copying is slowed down first half of the time, so that BUILD lasts long enough to be overlapped.
     */
    private String overlap() throws Exception {
        Rest[] via = twoBrokers();
        boolean slow = random.nextBoolean();
        StringBuilder what = new StringBuilder();
        if (slow) {
            what.append("copying slowed -> ").append(answer(via[0].post("/tuning",
                    "{\"migrationBytesPerSecond\":20000,\"migrationConcurrency\":1}"))).append(", ");
        }
        int first = random.nextInt(4);
        String target = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
        CompletableFuture<String> earlier;
        String awaited;
        if (first < 2) {
            String sw = first == 0 ? fire(Command.SWITCH, via[0], target) : fire(Command.SWITCH_BACK, via[0], null);
            earlier = CompletableFuture.completedFuture(sw);
            String[] moments = {"cutover", "PENDING", "BUILD", "PROMOTE"};
            String moment = moments[random.nextInt(moments.length)];
            awaited = moment.equals("cutover") || !sw.contains("-> 200") ? "at once"
                    : "migration " + awaitMigrationPhase(moment, 20);
        } else {
            // the earlier command runs on its own thread: the second one is fired while it is answered
            Command c = first == 2 ? Command.ROLLBACK : Command.CLEANUP_DELETE;
            earlier = CompletableFuture.supplyAsync(() -> fire(c, via[0], null));
            long ms = random.nextInt(1_500);
            Thread.sleep(ms);
            awaited = ms + " ms later";
        }
        Command second = anyCommand();
        // the second operator aims at the first one's cluster half of the time
        String second0 = fire(second, via[1], random.nextBoolean() ? target : null);
        what.append(earlier.get(120, TimeUnit.SECONDS)).append("; ").append(awaited).append(", meanwhile ")
                .append(second0);
        if (slow) {
            what.append(", copying at full speed again -> ").append(answer(via[0].post("/tuning",
                    "{\"migrationBytesPerSecond\":null,\"migrationConcurrency\":null}")));
        }
        return what.toString();
    }

    /** TWO_OPERATORS: two commands fired at the same moment, one through each broker, often on the same cluster. */
    private String twoOperators() throws Exception {
        Rest[] via = twoBrokers();
        Command a = anyCommand();
        Command b = anyCommand();
        String target = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
        String ta = random.nextInt(3) > 0 ? target : null;
        String tb = random.nextInt(3) > 0 ? target : null;
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> awaitThen(go, () -> fire(a, via[0], ta)));
        CompletableFuture<String> other = CompletableFuture.supplyAsync(() -> awaitThen(go, () -> fire(b, via[1], tb)));
        go.countDown();
        return "at once: " + first.get(120, TimeUnit.SECONDS) + " | " + other.get(120, TimeUnit.SECONDS);
    }

    private static String awaitThen(java.util.concurrent.CountDownLatch go, java.util.function.Supplier<String> then) {
        try {
            go.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        return then.get();
    }

    /**
     * FOREIGN_TOP_LEDGER: another application writes a ledger with an id of its choice near the end of the id space
     * into a registered cluster: in the band the precheck's probes use, or at the last high-order bits a range could
     * start at (that cluster can then take no switch: it must be refused with a reason, never answered 5xx, and no
     * other switch may be blocked by it). The ledger must survive every cleanup.
     */
    private String foreignTopLedger() throws Exception {
        String c = anyOf(registered().stream().filter(x -> !bookiesDown.contains(x)).toList());
        if (c == null) {
            return "foreign top ledger: no cluster with its bookies up";
        }
        // a long run writes only into the probe band: a ledger with no room above it makes its cluster refuse
        // every later switch (rightly), and a run whose clusters all refuse never gets to its switches
        boolean probeBand = random.nextBoolean() || minSwitches > 0;
        long id = probeBand ? Long.MAX_VALUE - random.nextInt(1_000)
                : ((long) io.bcswitch.registry.IdSpace.MAX_RANGE_BITS << 32) | random.nextInt(1_000);
        try (org.apache.bookkeeper.client.BookKeeper bk = new org.apache.bookkeeper.client.BookKeeper(
                cluster.bookieCluster(c).clientConfiguration())) {
            org.apache.bookkeeper.client.LedgerHandle h = bk.createLedgerAdv(id, 1, 1, 1,
                    org.apache.bookkeeper.client.BookKeeper.DigestType.CRC32, new byte[0], null);
            h.addEntry(0, "not pulsar's".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            h.close();
        }
        foreignLedgers.computeIfAbsent(c, k -> new TreeSet<>()).add(id);
        String what = "another application writes ledger " + id + (probeBand ? " (probe band)" : " (no room above)")
                + " into " + c;
        if (c.equals(active())) {
            return what;
        }
        Rest.Response pre = rest().get("/precheck/" + c);
        boolean ok = pre.json() != null && pre.json().path("ok").asBoolean();
        if (!probeBand && ok) {
            problems.add("the precheck of " + c + ", which holds ledger " + id + " at the last high-order bits a range "
                    + "could use, says it can take a switch: " + pre.raw());
        }
        return what + ", precheck -> " + pre.status() + (ok ? " ok" : " refused: " + pre.json().path("problems"));
    }

    /**
     * PROBE_WRITE_FAILS: the precheck of a cluster whose bookies are registered but answer nothing: its probe ledger
     * is created and cannot be written. The precheck refuses, and no probe ledger may be left on the cluster.
     */
    private String probeWriteFails() throws Exception {
        String c = anyOf(inactive().stream().filter(x -> !bookiesDown.contains(x)).toList());
        if (c == null) {
            return "probe write fails: no inactive cluster with its bookies up";
        }
        TestBookieCluster bk = cluster.bookieCluster(c);
        Set<Long> before = probeBand(bk);
        bk.bookies().forEach(b -> b.suspend());
        Rest.Response pre;
        Set<Long> left;
        try {
            pre = rest().get("/precheck/" + c);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            do {
                Thread.sleep(500);
                left = probeBand(bk);
                left.removeAll(before);
            } while (!left.isEmpty() && System.nanoTime() < deadline);
        } finally {
            bk.bookies().forEach(b -> b.resume());
        }
        if (pre.json() != null && pre.json().path("ok").asBoolean()) {
            problems.add("the precheck of " + c + " passed while its bookies answered nothing: " + pre.raw());
        }
        if (!left.isEmpty()) {
            problems.add("probe ledger(s) " + left + " left on " + c + " after a precheck whose write failed");
        }
        return "precheck of " + c + " while its bookies answer nothing -> " + pre.status() + " "
                + pre.json().path("problems") + (left.isEmpty() ? ", no probe ledger left" : "");
    }

    private static final String SLOW_COPYING = "{\"migrationBytesPerSecond\":20000,\"migrationConcurrency\":1}";
    private static final String FULL_SPEED = "{\"migrationBytesPerSecond\":null,\"migrationConcurrency\":null}";

    /** Healthy inactive clusters (their bookies up). */
    private List<String> healthyInactive() {
        return inactive().stream().filter(x -> !bookiesDown.contains(x)).toList();
    }

    /**
     * SWITCH_WHILE_MIGRATING: a switch, then, while its migration is PENDING or copying (slowed down), a switch to
     * another cluster through the other broker.
     */
    private String switchWhileMigrating() throws Exception {
        Rest[] via = twoBrokers();
        String t1 = anyOf(healthyInactive());
        if (t1 == null) {
            return "switch while migrating: no healthy cluster to switch to";
        }
        String slowed = answer(via[0].post("/tuning", SLOW_COPYING));
        Rest.Response first = via[0].switchTo(t1);
        String phase = random.nextBoolean() ? "PENDING" : "BUILD";
        String seen = first.status() == 200 ? awaitMigrationPhase(phase, 20) : "not started";
        String t2 = anyOf(healthyInactive());
        String second = t2 == null ? "nothing to switch to" : "switch to " + t2 + " -> " + answer(via[1].switchTo(t2));
        return "copying slowed -> " + slowed + ", switch to " + t1 + " -> " + answer(first) + ", migration " + seen
                + ", then " + second + ", copying at full speed again -> " + answer(via[1].post("/tuning", FULL_SPEED));
    }

    /**
     * DEPRECATE_RACING_SWITCH: close-client, cleanup or unregister of a cluster and a switch to it, at once, one per
     * broker (as the first step of a run, the race is with the very first switch, when there is no directive yet).
     */
    private String deprecateRacingSwitch() throws Exception {
        Rest[] via = twoBrokers();
        String t = anyOf(healthyInactive());
        if (t == null) {
            return "deprecate racing a switch: no healthy inactive cluster";
        }
        Command c = new Command[] {Command.CLOSE_CLIENT, Command.CLEANUP_DELETE, Command.UNREGISTER}[random.nextInt(3)];
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<String> retire = CompletableFuture.supplyAsync(() -> awaitThen(go, () -> fire(c, via[0], t)));
        CompletableFuture<String> sw = CompletableFuture.supplyAsync(() -> awaitThen(go,
                () -> fire(Command.SWITCH, via[1], t)));
        go.countDown();
        return "at once: " + retire.get(120, TimeUnit.SECONDS) + " | " + sw.get(120, TimeUnit.SECONDS);
    }

    /** See {@link Action#CLEANUPS_OF_A_RETIRED_CLUSTER}; a 5xx among the answers is a problem (see {@link #restOf}). */
    private String cleanupsOfARetiredCluster() throws Exception {
        Rest[] via = twoBrokers();
        String c = anyOf(healthyInactive());
        if (c == null) {
            return "cleanups of a retired cluster: no healthy inactive cluster";
        }
        String closed = fire(Command.CLOSE_CLIENT, via[0], c);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<String> one = CompletableFuture.supplyAsync(() -> awaitThen(go,
                () -> fire(Command.CLEANUP_DELETE, via[0], c)));
        CompletableFuture<String> two = CompletableFuture.supplyAsync(() -> awaitThen(go,
                () -> fire(Command.CLEANUP_DELETE, via[1], c)));
        CompletableFuture<String> three = CompletableFuture.supplyAsync(() -> awaitThen(go,
                () -> fire(Command.CLOSE_CLIENT, via[1], c)));
        go.countDown();
        return closed + ", then at once: " + one.get(120, TimeUnit.SECONDS) + " | " + two.get(120, TimeUnit.SECONDS)
                + " | " + three.get(120, TimeUnit.SECONDS);
    }

    /**
     * PAUSE_DURING_BUILD: copying slowed, a switch, and once its migration copies, the broker running it is cut off
     * from the metadata store past its session timeout; it comes back after the other broker took the migration over.
     */
    private String pauseDuringBuild() throws Exception {
        String t = anyOf(healthyInactive());
        if (t == null) {
            return "pause during BUILD: no healthy cluster to switch to";
        }
        StringBuilder what = new StringBuilder();
        String phase = switchWithCopyingSlowed(t, what);
        JsonNode m = status().get("migration");
        String owner = m == null || m.isNull() ? null : m.path("owner").asText(null);
        int i = -1;
        for (int b = 0; b < cluster.brokerCount(); b++) {
            if (cluster.broker(b).isRunning() && cluster.broker(b).pulsar().getBrokerId().equals(owner)) {
                i = b;
            }
        }
        if (!phase.equals("BUILD") || i < 0) {
            return what.append(", copying at full speed again -> ").append(answer(rest().post("/tuning", FULL_SPEED)))
                    .toString();
        }
        TestBroker b = cluster.broker(i);
        abrupt();
        b.metadataLink().pause();
        try {
            Thread.sleep(SESSION_TIMEOUT_MILLIS + 3_000);
            // the other broker takes the migration over; at full speed it may well finish it meanwhile
            what.append(", broker ").append(i).append(" running it cut off past its session timeout, copying at full "
                    + "speed -> ").append(answer(restOf(cluster.broker(1 - i)).post("/tuning", FULL_SPEED)));
            Thread.sleep(2_000 + random.nextInt(4_000));
        } finally {
            b.metadataLink().resume();
        }
        return what.append(", broker ").append(i).append(" back").toString();
    }

    /**
     * A switch away from the active cluster with copying slowed; once BUILD copies, the left cluster's bookies stop
     * for 2 to 5 s and start again (registered before copying goes on at full speed). A copy that failed meanwhile
     * must be tried again: the run ends DONE, with no FAILED ledger other than one whose id the target's bookies
     * refuse (an earlier step's deleted copy, which no later try mends).
     */
    private String bookiesRestartDuringBuild() throws Exception {
        String t = anyOf(healthyInactive());
        String source = status().path("activeCluster").asText(null);
        if (t == null || source == null || !bookiesDown.isEmpty()) {
            return "bookies restart during BUILD: no healthy cluster to switch to, or bookies down " + bookiesDown;
        }
        StringBuilder what = new StringBuilder();
        String phase = switchWithCopyingSlowed(t, what);
        if (phase.equals("BUILD")) {
            long downMillis = 2_000 + random.nextInt(3_000);
            cluster.bookieCluster(source).stopBookies();
            bookiesDown.add(source);
            Thread.sleep(downMillis);
            startBookies(source);
            what.append(", the bookies of ").append(source).append(" stopped for ").append(downMillis)
                    .append(" ms and back");
        }
        what.append(", copying at full speed again -> ").append(answer(rest().post("/tuning", FULL_SPEED)));
        if (phase.equals("BUILD")) {
            String end = awaitMigrationPhase("DONE", 180);
            what.append(", migration ").append(end);
            JsonNode m = status().get("migration");
            List<String> failed = new ArrayList<>();
            if (m != null && !m.isNull()) {
                m.path("issues").forEach(i -> {
                    if (i.path("result").asText().equals("FAILED")
                            && !i.path("detail").asText().contains("refuse writes under ledger id")) {
                        failed.add(i.toString());
                    }
                });
            }
            if (!failed.isEmpty()) {
                problems.add("copies failed while the bookies of " + source + " restarted for a few seconds, not "
                        + "tried again: " + failed);
            }
        }
        return what.toString();
    }

    /**
     * Slows copying down, switches to {@code t} and waits until its migration copies (BUILD) or for 30 s; says what
     * it did in {@code what} and returns the migration's phase then ("not started" when the switch was refused).
     */
    private String switchWithCopyingSlowed(String t, StringBuilder what) throws InterruptedException {
        what.append("copying slowed -> ").append(answer(rest().post("/tuning", SLOW_COPYING)));
        Rest.Response sw = rest().switchTo(t);
        what.append(", switch to ").append(t).append(" -> ").append(answer(sw));
        String phase = sw.status() == 200 ? awaitMigrationPhase("BUILD", 30) : "not started";
        what.append(", migration ").append(phase);
        return phase;
    }

    /**
     * METADATA_DOWN: an inactive registered cluster's own ZooKeeper stops (its bookies before it), verify runs, the
     * ZooKeeper starts again (then the bookies).
     * Verify lists every registered cluster's ledgers (orphans, missing copies): it must name the cluster it could not
     * list among what it left unchecked and must not call the plugin removable, and answer in time (not 503).
     */
    private static final java.util.regex.Pattern UNLISTED =
            java.util.regex.Pattern.compile("^ledgers of bookie cluster '([^']+)' could not be listed");

    private String metadataDown() throws Exception {
        String c = anyOf(inactive().stream().filter(x -> cluster.bookieCluster(x).hasOwnMetadataService()).toList());
        if (c == null) {
            return "metadata down: no inactive registered cluster with a metadata service of its own";
        }
        TestBookieCluster bc = cluster.bookieCluster(c);
        // its bookies stop first, while they can still unregister: a bookie whose ZooKeeper session expires during the
        // outage shuts itself down seconds after the service is back, and a new one cannot register until the old
        // registration expires (seed -2634731999078751065 switched to the cluster just before its bookie died, and
        // its topics stalled). The brokers' clients of the cluster live through the outage, sessions expired included
        boolean bookiesUp = !bookiesDown.contains(c);
        String what = "stop " + (bookiesUp ? "the bookies and " : "") + "the metadata service of " + c;
        try {
            if (bookiesUp) {
                bc.stopBookies();
            }
            bc.stopMetadataService();
            long t0 = System.nanoTime();
            Rest.Response v = rest().get("/verify");
            what += ", verify -> " + v.status() + " in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms";
            if (v.status() != 200 || v.json() == null) {
                problems.add("with the metadata service of " + c + " down, verify answered " + v.status() + ": "
                        + v.raw());
                return what;
            }
            List<String> unlisted = new ArrayList<>();
            for (JsonNode u : v.json().path("unchecked")) {
                java.util.regex.Matcher m = UNLISTED.matcher(u.asText());
                if (m.find()) {
                    unlisted.add(m.group(1));
                }
            }
            if (!unlisted.contains(c)) {
                problems.add("with the metadata service of " + c + " down, verify did not say that it could not "
                        + "list its ledgers: " + v.raw());
            }
            // the other clusters answer: a listing blocked on the silent one must not hold theirs up
            List<String> others = unlisted.stream().filter(x -> !x.equals(c) && !bookiesDown.contains(x)).toList();
            if (!others.isEmpty()) {
                problems.add("with only the metadata service of " + c + " down, verify could not list " + others
                        + " either: " + v.raw());
            }
            if (v.json().path("removal").path("safe").asBoolean(false)) {
                problems.add("with the metadata service of " + c + " down, verify says the plugin can be "
                        + "removed: " + v.raw());
            }
        } finally {
            bc.startMetadataService();
            if (bookiesUp) {
                bc.startBookies();
            }
        }
        return what + ", metadata service back" + (bookiesUp ? " and then the bookies" : "");
    }

    /** The ids in the probe band on {@code c} (other applications' ledgers there included). */
    private Set<Long> probeBand(TestBookieCluster c) throws Exception {
        Set<Long> out = new TreeSet<>(c.ledgerIds());
        out.removeIf(id -> !io.bcswitch.registry.IdSpace.isProbeId(id));
        out.removeAll(foreignLedgers.getOrDefault(c.name(), Set.of()));
        return out;
    }

    /** Deletes a topic's schema for good (its ledgers too), retrying while a broker restarts. */
    private String deleteSchema(String topic) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (PulsarAdmin a = cluster.newAdmin()) {
                a.schemas().deleteSchema(topic, true);
                return "deleted";
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    return "not deleted: " + e.getMessage();
                }
                Thread.sleep(500);
            }
        }
    }

    /** The latest switch's migration's phase once it is {@code phase} or terminal, or after {@code seconds}. */
    private String awaitMigrationPhase(String phase, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String seen = "none";
        while (System.nanoTime() < deadline) {
            JsonNode st = status();
            JsonNode m = st.get("migration");
            // the latest switch's own migration, not the one before it still on record
            if (m != null && !m.isNull() && m.get("switchEpoch").asLong() == st.get("epoch").asLong()) {
                seen = m.get("phase").asText();
                // that phase or one after it: waiting on for one already passed would only move the step later
                if (io.bcswitch.registry.Phase.valueOf(seen).compareTo(io.bcswitch.registry.Phase.valueOf(phase)) >= 0
                        || io.bcswitch.registry.Phase.valueOf(seen).terminal()) {
                    return seen;
                }
            }
            Thread.sleep(200);
        }
        return seen + " (still, after " + seconds + " s)";
    }

    /** Null once {@code b}'s /metrics counts a live broker without the plugin (at most 20 s), else what it said. */
    private static String awaitBrokersWithoutPlugin(TestBroker b) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        String last = "no sample";
        while (System.nanoTime() < deadline) {
            OptionalDouble n = Metrics.sample(Metrics.scrape(b), "pulsar_bookie_switch_brokers_without_plugin",
                    Map.of());
            if (n.isPresent()) {
                last = "pulsar_bookie_switch_brokers_without_plugin " + n.getAsDouble();
                if (n.getAsDouble() >= 1) {
                    return null;
                }
            }
            Thread.sleep(500);
        }
        return last;
    }

    private void awaitLiveInPulsar(TestBroker b) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String id = b.pulsar().getBrokerId();
        while (System.nanoTime() < deadline) {
            if (admin.brokers().getActiveBrokers().contains(id)) {
                return;
            }
            Thread.sleep(200);
        }
        // the step that waited tests nothing without it
        problems.add("broker " + id + " not listed live by Pulsar within 30 s");
    }

    private void pause(int broker, long millis) throws InterruptedException {
        TestBroker b = cluster.broker(broker);
        b.metadataLink().pause();
        try {
            Thread.sleep(millis);
        } finally {
            b.metadataLink().resume();
        }
    }

    private void startBookies(String c) throws Exception {
        TestBookieCluster bk = cluster.bookieCluster(c);
        bk.startBookies();
        bk.awaitWritableBookies(bk.bookieCount());
        bookiesDown.remove(c);
    }

    /** The status and the gist of an answer (a server error is already a problem: see {@link #restOf}). */
    private String answer(Rest.Response r) {
        String gist = r.status() == 200 ? "200" : r.status() + " " + (r.error() != null ? r.error() : r.raw());
        return gist.length() > 200 ? gist.substring(0, 200) + "..." : gist;
    }

    private void expectOk(Rest.Response r, String what) {
        if (r.status() != 200) {
            problems.add(what + ": " + r.status() + " " + r.raw());
        }
    }

    /** Waits until everything settled (a bound: a sequence that never settles is a wedge), then verifies. */
    private void settleAndVerify(String when) throws InterruptedException {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        String why = null;
        while (System.nanoTime() < deadline) {
            why = unsettled();
            if (why == null) {
                break;
            }
            Thread.sleep(500);
        }
        if (why != null) {
            problems.add("not settled " + SETTLE.toSeconds() + " s " + when + ": " + why);
            return;
        }
        try {
            JsonNode status = status();
            JsonNode clusters = rest().get("/").json();
            for (String p : life.registry(status, clusters)) {
                problems.add(p + " (" + when + ")");
            }
            for (String p : clientsOfRetired(status.path("epoch").asLong(), clusters)) {
                problems.add(p + " (" + when + ")");
            }
        } catch (Exception e) {
            problems.add("reading the registry " + when + ": " + e);
        }
        for (String p : life.resources(switches)) {
            problems.add(p + " (" + when + ")");
        }
        verify("/verify", when);
    }

    /**
     * GET {@code path}; a violation, or something left unchecked, may be the last moment of a change, so it is looked
     * at again 3 s later. verify cannot pass on what it did not check: with every bookie up, anything it reports
     * unchecked is a failure (while bookies are stopped, what lies on them cannot be read, and is rightly unchecked).
     */
    private void verify(String path, String when) throws InterruptedException {
        Rest.Response v = rest().get(path);
        if (v.status() != 200) {
            problems.add("verify " + when + " answered " + v.status() + ": " + v.raw());
            return;
        }
        if (!v.json().get("ok").asBoolean() || uncheckedWithEveryBookieUp(v)) {
            Thread.sleep(3_000);
            v = rest().get(path);
            if (v.status() != 200 || !v.json().get("ok").asBoolean()) {
                problems.add("verify " + when + ": " + v.raw());
                return;
            }
            if (uncheckedWithEveryBookieUp(v)) {
                problems.add("verify " + when + " left unchecked with every bookie up: " + v.json().get("unchecked"));
                return;
            }
        }
        if (v.json().path("removal").path("safe").asBoolean(false)) {
            removalHolds(v.json().get("removal").get("activeCluster").asText(), when);
        }
    }

    private boolean uncheckedWithEveryBookieUp(Rest.Response verify) {
        return bookiesDown.isEmpty() && !verify.json().path("unchecked").isEmpty();
    }

    /**
     * verify says the plugin could be removed: then stock storage pointed at {@code active} must find every ledger
     * the workload's topics use, as their brokers (not the plugin) list them: data ledgers, cursor ledgers, schema and
     * compacted ledgers, all on that one bookie cluster.
     */
    private void removalHolds(String active, String when) {
        try {
            // the topics' ledgers first, then the cluster's list: a ledger a topic rolls over to meanwhile is in the
            // list; one a topic let go of meanwhile (a cursor's or compaction's old ledger) is asked about again
            Map<String, List<Long>> used = ledgersInUse();
            Set<Long> there = cluster.bookieCluster(active).ledgerIds();
            Map<String, List<Long>> missing = notIn(used, there);
            if (!missing.isEmpty()) {
                // only what the topics still use
                Map<String, List<Long>> now = ledgersInUse();
                Map<String, List<Long>> still = new LinkedHashMap<>();
                missing.forEach((topic, ids) -> {
                    List<Long> kept = ids.stream().filter(id -> now.getOrDefault(topic, List.of()).contains(id))
                            .toList();
                    if (!kept.isEmpty()) {
                        still.put(topic, kept);
                    }
                });
                missing = still;
            }
            removalChecks++;
            if (!missing.isEmpty()) {
                problems.add("verify " + when + " says the plugin can be removed (all on " + active + "), but "
                        + "these ledgers in use are not on " + active + ": " + missing);
            }
        } catch (Exception e) {
            problems.add("checking verify's removal verdict " + when + ": " + e);
        }
    }

    /** Each workload topic's ledgers in use, as its broker lists them: data, cursor, schema and compacted ledgers. */
    private Map<String, List<Long>> ledgersInUse() throws Exception {
        Map<String, List<Long>> out = new LinkedHashMap<>();
        for (String topic : admin.topics().getList(workload.namespace())) {
            var stats = admin.topics().getInternalStats(topic);
            List<Long> used = new ArrayList<>();
            stats.ledgers.forEach(l -> used.add(l.ledgerId));
            stats.cursors.values().forEach(c -> used.add(c.cursorLedger));
            if (stats.schemaLedgers != null) {
                stats.schemaLedgers.forEach(l -> used.add(l.ledgerId));
            }
            if (stats.compactedLedger != null) {
                used.add(stats.compactedLedger.ledgerId);
            }
            out.put(topic, used);
        }
        return out;
    }

    private static Map<String, List<Long>> notIn(Map<String, List<Long>> used, Set<Long> there) {
        Map<String, List<Long>> out = new LinkedHashMap<>();
        used.forEach((topic, ids) -> {
            List<Long> gone = ids.stream().filter(id -> id >= 0 && !there.contains(id)).toList();
            if (!gone.isEmpty()) {
                out.put(topic, gone);
            }
        });
        return out;
    }

    /**
     * Once cleanup has run, what keeps the plugin from being removed may only be ledgers retention keeps on old
     * clusters: no migration between its start and its end, nothing verify could not check.
     */
    private void removalReachable() {
        Rest.Response v = rest().get("/verify");
        if (v.status() != 200 || v.json() == null) {
            problems.add("verify after cleanup at the end answered " + v.status() + " " + v.raw());
            return;
        }
        for (JsonNode because : v.json().path("removal").path("because")) {
            String b = because.asText();
            if (b.contains("is in phase") || b.contains("could not be checked") || b.contains("no bookie cluster is "
                    + "ACTIVE")) {
                problems.add("after cleanup at the end the plugin can still not be removed because " + b);
            }
        }
    }

    /** How often verify said the plugin could be removed (and the claim was checked). */
    private int removalChecks;
    private int removalChecksAfterASwitch;

    /**
     * After a switch the old clusters keep the data ledgers retention keeps, so verify never says the plugin can be
     * removed and its claim is never checked against the topics. At the very end, once every message is accounted for,
     * the workload's old data is let go as an operator retiring a cluster would let it go (the subscriptions' backlogs
     * skipped, retention off, each topic trimmed); then verify must say the plugin can be removed (within 90 s: Pulsar deletes trimmed
     * ledgers in the background), and every ledger the topics use must be on the active cluster. A latest migration
     * that ended with failures is retried first, as the operator would.
     */
    private void removalOnceTheOldDataIsGone() throws Exception {
        if (switches == 0 || !problems.isEmpty()) {
            return;
        }
        // a migration that could not copy everything (the source's bookies were down while it ran) is retried, as
        // docs/operations.md tells the operator to, now that every bookie is up: what it left is what it moves
        JsonNode m = status().path("migration");
        if (m.path("phase").asText().equals("DONE_WITH_FAILURES")) {
            Rest.Response retry = rest().post("/migration/retry", "");
            log.info("EXPLORE seed={} at the end, the latest migration ended with failures: retried -> {}", seed,
                    answer(retry));
            expectOk(retry, "the retry of a migration that ended with failures, at the end");
            settleAndVerify("after retrying the migration at the end");
            if (!problems.isEmpty()) {
                return;
            }
        }
        String ns = workload.namespace();
        admin.namespaces().setRetention(ns, new RetentionPolicies(0, 0));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        JsonNode removal = null;
        while (System.nanoTime() < deadline) {
            for (String topic : admin.topics().getList(ns)) {
                for (String sub : admin.topics().getSubscriptions(topic)) {
                    // not Pulsar's own compaction subscription: skipping it drops the compacted view's ledger from
                    // its cursor (stock Pulsar does that too), which is not letting old data go but losing the view
                    if (!sub.equals("__compaction")) {
                        admin.topics().skipAllMessages(topic, sub);
                    }
                }
                admin.topics().trimTopic(topic);
            }
            Rest.Response v = rest().get("/verify");
            if (v.status() == 200 && v.json() != null) {
                removal = v.json().path("removal");
                if (removal.path("safe").asBoolean(false)) {
                    removalHolds(removal.get("activeCluster").asText(), "at the end, once the old data was let go");
                    removalChecksAfterASwitch++;
                    log.info("EXPLORE seed={} removal verdict after {} switch(es), once the old data was let go: "
                            + "safe, checked against the topics' ledgers", seed, switches);
                    return;
                }
            }
            Thread.sleep(2_000);
        }
        problems.add("at the end, with every message accounted for, every backlog skipped, retention off and every "
                + "topic trimmed, verify still says the plugin cannot be removed: " + removal);
    }

    /** Why the cluster is not settled, or null. */
    private String unsettled() {
        JsonNode s;
        try {
            s = status();
        } catch (RuntimeException e) {
            return "status: " + e.getMessage();
        }
        if (!s.get("cutoverComplete").asBoolean()) {
            return "cutover pending on " + s.get("pendingBrokers") + (s.has("brokersWithoutRecord")
                    ? ", without record " + s.get("brokersWithoutRecord") : "");
        }
        if (s.get("relocationPendingBrokers").size() > 0) {
            return "relocation epoch pending on " + s.get("relocationPendingBrokers");
        }
        JsonNode m = s.get("migration");
        long epoch = s.path("epoch").asLong(0);
        if (m != null && !m.isNull()) {
            String phase = m.get("phase").asText();
            if (!TERMINAL_PHASES.contains(phase)) {
                return "migration " + phase;
            }
        } else if (epoch > 0) {
            // a switch's migration starts within seconds (any broker takes it after a grace): until then cleanup
            // refuses, and the removal verdict waits for it
            return "the migration of switch epoch " + epoch + " has not started";
        }
        try {
            for (JsonNode older : Registry.jsonChildren(cluster.zkConnectString(),
                    "/admin/bookie-clusters/orchestrator").values()) {
                if (older.path("switchEpoch").asLong() < epoch && !TERMINAL_PHASES.contains(older.path("phase")
                        .asText())) {
                    return "the migration of switch epoch " + older.path("switchEpoch").asLong() + " is still "
                            + older.path("phase").asText();
                }
            }
        } catch (Exception e) {
            return "reading the migrations: " + e;
        }
        return null;
    }

    /**
     * A BookKeeper client one of Pulsar's pools built for a cluster that was DEPRECATED (its clients closed) at the
     * last check and still is, with no switch in between: nothing there is read any more, and its bookies may be
     * switched off. The migration's pool is left out: cleanup and verify reach every registered cluster on request.
     */
    private List<String> clientsOfRetired(long epoch, JsonNode clusters) {
        Set<String> deprecated = new TreeSet<>();
        for (JsonNode c : clusters) {
            if (c.path("status").asText().equals("DEPRECATED")) {
                deprecated.add(c.path("name").asText());
            }
        }
        List<String> out = new ArrayList<>();
        for (String line : clientBuilds.take()) {
            for (String c : deprecated) {
                if (epoch == retiredEpoch && retired.contains(c) && !line.contains("[migration]")
                        && line.contains("bookie-cluster=" + c + " ")) {
                    out.add("a BookKeeper client was built for " + c + ", DEPRECATED: " + line);
                }
            }
        }
        retired = deprecated;
        retiredEpoch = epoch;
        return out;
    }

    /**
     * Settled, every bookie and broker up: the copies a rolled-back switch or an ended (superseded, or finished before
     * a newer switch) migration lists for deletion on a registered cluster that is not the active one must be
     * decided about within a minute (the passes run every 2 s), and the latest switch's finished migration may list
     * only copies that are home on its target (those a rollback flips back). verify does not name a listed copy an
     * orphan, since the passes decide about it: a list that is never worked off would hide one for good.
     */
    private void deletionListsWorkedOff() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<String> waiting = List.of();
        while (System.nanoTime() < deadline) {
            JsonNode st = status();
            String active = st.path("activeCluster").asText();
            Set<String> usable = new TreeSet<>();
            for (JsonNode c : rest().get("/").json()) {
                if (!c.path("status").asText().equals("DEPRECATED")) {
                    usable.add(c.path("name").asText());
                }
            }
            waiting = new ArrayList<>();
            Collection<JsonNode> states = Registry.jsonChildren(cluster.zkConnectString(),
                    "/admin/bookie-clusters/orchestrator").values();
            long latest = states.stream().mapToLong(m -> m.path("switchEpoch").asLong()).max().orElse(0);
            for (JsonNode m : states) {
                String target = m.path("target").asText();
                String phase = m.path("phase").asText();
                long epoch = m.path("switchEpoch").asLong();
                boolean finished = phase.equals("DONE") || phase.equals("DONE_WITH_FAILURES");
                if (finished && epoch == latest && usable.contains(target)) {
                    Map<Long, JsonNode> relocations = Registry.relocations(cluster.zkConnectString());
                    List<Long> notHome = Registry.copies(cluster.zkConnectString(), epoch).stream().filter(id ->
                            !target.equals(relocations.getOrDefault(id, MissingNode.getInstance()).path("home")
                                    .asText())).toList();
                    if (!notHome.isEmpty()) {
                        waiting.add("the finished migration of switch epoch " + epoch + " still lists copies on "
                                + target + " that are not home there: " + notHome);
                    }
                    continue;
                }
                if (target.equals(active) || !usable.contains(target)) {
                    continue;
                }
                if (phase.equals("ROLLED_BACK") && m.path("pendingDeletionCount").asInt() > 0) {
                    waiting.add("the rollback of switch epoch " + epoch + " still lists "
                            + m.path("pendingDeletionCount").asInt() + " copy/copies on " + target);
                } else if ((phase.equals("SUPERSEDED") || finished)
                        && !Registry.copies(cluster.zkConnectString(), epoch).isEmpty()) {
                    waiting.add(phase + " switch epoch " + epoch + " still lists copies on " + target + ": "
                            + Registry.copies(cluster.zkConnectString(), epoch));
                }
            }
            if (waiting.isEmpty()) {
                return;
            }
            Thread.sleep(1_000);
        }
        problems.add("deletion lists not worked off a minute after everything settled: " + waiting);
    }

    /** Stops producing, brings every cluster back, and checks that every message arrived. */
    private void finish() throws Exception {
        for (String c : new ArrayList<>(bookiesDown)) {
            startBookies(c);
        }
        settleAndVerify("at the end");
        settledAfterAbrupt();
        if (problems.isEmpty()) {
            // before the cleanup below, which would delete what they leave behind as strays
            deletionListsWorkedOff();
        }
        if (problems.isEmpty()) {
            // every inactive cluster cleaned up for real: then the removal verdict may only wait for what retention
            // keeps (data ledgers on old clusters), never for the plugin's own unfinished work; and everything the
            // workload wrote must still arrive below
            List<String> cleaned = new ArrayList<>();
            for (String c : inactive()) {
                Rest.Response r = rest().post("/cleanup", "{\"srcCluster\":\"" + c
                        + "\",\"dryRun\":false,\"force\":true}");
                cleaned.add(c + " " + answer(r));
                // settled, every bookie up: nothing may keep an operator from cleaning up
                expectOk(r, "cleanup of " + c + " at the end");
            }
            log.info("EXPLORE seed={} cleanup of every inactive cluster at the end: {}", seed, cleaned);
            settleAndVerify("after cleaning up every inactive cluster at the end");
            removalReachable();
        }
        workload.stopProducing();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!workload.allReceived() && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        for (java.util.Map.Entry<String, Set<Long>> e : foreignLedgers.entrySet()) {
            Set<Long> gone = new TreeSet<>(e.getValue());
            gone.removeAll(cluster.bookieCluster(e.getKey()).ledgerIds());
            if (!gone.isEmpty()) {
                problems.add("ledgers " + gone + " another application wrote into " + e.getKey() + " were deleted");
            }
        }
        List<Workload.Stream> all = new ArrayList<>(workload.streams());
        all.addAll(workload.drainIdleSubscriptions(60_000));
        for (Workload.Stream s : all) {
            List<String> wrong = new ArrayList<>(s.problems());
            List<long[]> unexplained;
            synchronized (s.lateRedeliveries) {
                unexplained = s.lateRedeliveries.stream().filter(r -> !acrossAbruptWindow(r[1], r[2])).toList();
            }
            if (!unexplained.isEmpty()) {
                wrong.add(unexplained.size() + " redelivered after a broker confirmed their acknowledgement, outside "
                        + "any abrupt move of topics (first: seq " + unexplained.get(0)[0] + ", confirmed at "
                        + unexplained.get(0)[1] + ", again at " + unexplained.get(0)[2] + "; abrupt windows: "
                        + abruptWindows.stream().map(java.util.Arrays::toString).toList() + ")");
            }
            if (!wrong.isEmpty()) {
                problems.add(s.name + ": " + String.join("; ", wrong) + " [" + s.summary() + "]");
            }
        }
        // a compaction triggered while the bookies were down may still be running: the last one must start after it
        Map<String, String> notCompacted = workload.compactFully(120_000);
        if (!notCompacted.isEmpty()) {
            problems.add("compaction at the end did not finish within 120 s: " + notCompacted);
        }
        Map<String, String> wrongViews = new LinkedHashMap<>();
        // one client for every view read (each client costs its own close at the end)
        PulsarClient viewClient = cluster.newClient();
        for (String t : workload.compactedTopics()) {
            Map<String, String> expected = workload.expectedCompactedView(t);
            Map<String, String> seen = null;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < until) {
                try {
                    seen = Compacted.view(viewClient, t);
                    if (seen.equals(expected)) {
                        break;
                    }
                } catch (Exception e) {
                    seen = Map.of("error", e.toString());
                }
                Thread.sleep(1_000);
            }
            if (!expected.equals(seen)) {
                wrongViews.put(t, "expected " + expected + " but read " + seen);
            }
        }
        if (!wrongViews.isEmpty()) {
            problems.add("compacted views: " + wrongViews);
        }
        // every topic read again from the earliest position, apart from the subscriptions: storage holds every
        // acknowledged message, in the producer's order (a subscription that got a message before its ledger was
        // lost would not notice)
        for (Workload.Stream st : all) {
            MessageAccount stored = workload.reread(viewClient, st);
            // exactly once: deduplication is on, so a stored second copy is a loss of the broker's dedup state
            // (a snapshot or cursor that did not follow a switch); failed sends are bounded by the stream's check
            List<String> wrong = stored.problems(Long.MAX_VALUE, false);
            if (!wrong.isEmpty()) {
                problems.add(stored.topic + ": " + String.join("; ", wrong) + " [" + stored.summary() + "]");
            }
            log.info("EXPLORE seed={} stream {}; stored: {}", seed, st.summary(), stored.summary());
        }
        verify("/verify?deep=true", "at the end (deep)");
        removalOnceTheOldDataIsGone();
    }
}
