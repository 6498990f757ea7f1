package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.it.support.SequenceExplorer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seeded random sequences of switches, switch-backs, rollbacks, retries, cleanups, close-client, unregister and
 * register, broker restarts, metadata-store partitions shorter and longer than the session timeout, bookie
 * clusters going down and up, and brokers that cannot build a client, under a continuous workload (see
 * {@link SequenceExplorer} for what each run checks). CI runs the plans of {@link #CI_PLANS}.
 *
 * <ul>
 *   <li>{@code -Dbcs.explorer.seed=S [-Dbcs.explorer.steps=K]}: replays seed S;</li>
 *   <li>{@code -Dbcs.explorer.random=N [-Dbcs.explorer.steps=K]}: runs N random seeds (each printed), stops at the
 *       first failure; with {@code -Dbcs.explorer.keepGoing=true} runs them all and reports every failing seed.</li>
 *   <li>{@code -Dbcs.explorer.seed=S -Dbcs.explorer.script=SWITCH,DISASTER,...}: runs exactly those actions;</li>
 *   <li>{@code -Dbcs.explorer.longRun=N} (with a seed or a campaign): each run goes on until N switches were accepted,
 *       checking that the brokers' resources stay bounded; {@code -Dbcs.explorer.longEvery=K}: in a random campaign,
 *       every K-th seed is such a run of {@value #LONG_RUN_SWITCHES} switches.</li>
 * </ul>
 *
 * <p>Sequences the explorer found are kept in {@link #FOUND} as scripts, which CI runs in {@value #PARTS} classes of
 * their own ({@code FoundSequencesPart<n>Test}) beside this one.
 */
class SequenceExplorerTest {
    private static final Logger log = LoggerFactory.getLogger(SequenceExplorerTest.class);
    /**
     * The runs CI makes beside {@link #FOUND}, each on a fresh cluster: plans of actions rather than random draws, so
     * that what a green run proves does not depend on what a seed happens to draw (seed 1 once drew no switch at all,
     * and no CI run's rollback was ever accepted). Together with {@link #FOUND} they take every kind of step
     * ({@link #theCiRunsTogetherTakeEveryKindOfStep}); each must make at least two switches, and one of its rollbacks
     * must be accepted and settle ROLLED_BACK ({@link #theCiPlansLoseNothingAndNeverWedge}). The seed picks the details.
     */
    static final List<Script> CI_PLANS = List.of(
            // a switch rolled back, then the operator's whole toolbox around further switches: tuning while moving,
            // a retry, a dry and a real cleanup, unregister and register again, a duplicate registration, a cluster
            // whose bookies are down while a switch picks among the inactive ones, and a switch back
            new Script(1L, List.of(SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.ROLLBACK,
                    SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.TUNING_WHILE_MOVING,
                    SequenceExplorer.Action.RETRY_MIGRATION, SequenceExplorer.Action.CLEANUP_DRY,
                    SequenceExplorer.Action.CLEANUP, SequenceExplorer.Action.UNREGISTER,
                    SequenceExplorer.Action.REGISTER, SequenceExplorer.Action.REGISTER_DUPLICATE,
                    SequenceExplorer.Action.BOOKIES_DOWN, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.BOOKIES_UP, SequenceExplorer.Action.SWITCH_BACK)),
            // switches around a short metadata outage and a broker restart, a rollback after the restart, operators
            // racing the driver and each other, a retired client, and a last rollback before a compaction
            new Script(2L, List.of(SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.PAUSE_SHORT,
                    SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.BROKER_RESTART,
                    SequenceExplorer.Action.ROLLBACK, SequenceExplorer.Action.OVERLAP,
                    SequenceExplorer.Action.CLOSE_CLIENT, SequenceExplorer.Action.REGISTER,
                    SequenceExplorer.Action.TWO_OPERATORS, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.ROLLBACK, SequenceExplorer.Action.COMPACT)));
    private static final int STEPS = Integer.getInteger("bcs.explorer.steps", 12);
    /** Switches a long run makes at least ({@code -Dbcs.explorer.longEvery=K}: every K-th random seed is one). */
    static final int LONG_RUN_SWITCHES = 40;

    /**
     * Sequences of bug classes found so far, as scripts (the seed picks their details only): found by random runs
     * (each failed before its fix), or by a review, a unit test or a CI failure and then written as the sequence a
     * cluster goes through, so that the explorer keeps taking those steps.
     */
    /** How many classes run {@link #FOUND}: each part takes a few minutes, and the end-to-end classes run side by side. */
    static final int PARTS = 3;

    static final List<Script> FOUND = List.of(
            // the active cluster's bookies die after the migration made it the home of the schema ledgers: the
            // migration of the switch away copies them from their originals, and publishing goes on
            new Script(-7636873638368674544L, List.of(SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.DISASTER, SequenceExplorer.Action.BROKER_RESTART,
                    SequenceExplorer.Action.FEED_IDLE)),
            // the active cluster's bookies die and the switch away is refused (its target was retired): after a
            // broker restart its compacted topics cannot load, and verify must still answer (it answered 500); once
            // both brokers restarted it waited for them twice and answered 503 past its deadline, and the migration
            // of the next switch failed its whole inventory on them and never finished BUILD (random seed
            // 6399508013644044403 found that one)
            new Script(3556457523114693564L, List.of(SequenceExplorer.Action.CLOSE_CLIENT,
                    SequenceExplorer.Action.DISASTER, SequenceExplorer.Action.BROKER_RESTART,
                    SequenceExplorer.Action.BROKER_RESTART, SequenceExplorer.Action.BROKER_RESTART,
                    SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.SWITCH)),
            // found by review, not by a run: Pulsar answers "not found" for a managed ledger whose subscription is
            // removed while the inventory reads it, and the inventory took that as deleted, so a real cleanup of
            // the old cluster could delete the topic's data ledgers; here cleanup runs while subscriptions on
            // topics whose data is on that cluster come and go, and every message must still arrive
            new Script(477L, List.of(SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.CLEANUP_DURING_SUBSCRIPTION_CHURN, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.CLEANUP_DURING_SUBSCRIPTION_CHURN)),
            // found by design review, not by a run: switches are announced before they are committed and brokers
            // prepare their clients of the target; an announcement whose switch never came must not leave a broker
            // creating ledgers with a client of another range when the target is really switched to
            new Script(478L, List.of(SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.ABANDONED_ANNOUNCEMENT, SequenceExplorer.Action.FEED_IDLE,
                    SequenceExplorer.Action.SWITCH_BACK, SequenceExplorer.Action.ABANDONED_ANNOUNCEMENT)),
            // found by a flaky end-to-end test (SchemaRoutingTest, in CI): a broker restarted after the migration had
            // copied a schema ledger but before it promoted it, Pulsar then deleted the schema on the original's
            // cluster, and the copy stayed on the new cluster for good; here schemas are deleted before, while and
            // after their ledgers are copied, with a broker restart in between (verify names an ORPHAN_COPY); the same
            // test again in CI: Pulsar deleted a schema through its old home while its copy was promoted, and the copy
            // stayed as the home of a ledger nothing references (verify names an ORPHAN_COPY at its home), so the
            // last schema of each step is deleted once the migration promotes
            new Script(479L, List.of(SequenceExplorer.Action.SCHEMAS_DELETED_WHILE_MOVED,
                    SequenceExplorer.Action.SCHEMAS_DELETED_WHILE_MOVED,
                    SequenceExplorer.Action.SCHEMAS_DELETED_WHILE_MOVED)),
            // found by review (a listing that failed half way passed for the cluster's whole content, so verify could
            // pass on a cluster it never read): a cluster's metadata service is down while verify runs, before any
            // switch, while it is the source of a migration, and once it was switched to and back
            new Script(484L, List.of(SequenceExplorer.Action.METADATA_DOWN, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.METADATA_DOWN, SequenceExplorer.Action.SWITCH_BACK,
                    SequenceExplorer.Action.METADATA_DOWN)),
            // found by a unit test (MigrationSafetyTest): a ledger of unknown origin (no Pulsar metadata) in a
            // cluster's own id range made the cleanup of that cluster fail with a NullPointerException; here other
            // applications write ledgers into clusters before and after switches, and cleanups run over them
            new Script(480L, List.of(SequenceExplorer.Action.FOREIGN_LEDGER, SequenceExplorer.Action.FOREIGN_LEDGER,
                    SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.FOREIGN_LEDGER,
                    SequenceExplorer.Action.CLEANUP, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.CLEANUP, SequenceExplorer.Action.CLEANUP)),
            // found by a unit test (AgentSafetyTest under faster polling): a broker that applied the newest directive
            // before it read the range table again routed an id of the range of the epoch in between to the earlier
            // range's cluster; here a broker misses two switches while cut off from the metadata store, and then
            // serves every topic, with the ledgers the other broker wrote in the range it never saw
            // (it starts with a broker restarted without the plugin, which refuses the switch while it runs: the
            // explorer takes that step only before the first switch, where a random seed seldom draws it). Its last step
            // was found on a cluster of separate processes: a bookie of the cluster a migration copied from restarted
            // during BUILD (after ZooKeeper's outage) and the run ended DONE_WITH_FAILURES for copies a few seconds
            // later would have made
            new Script(481L, List.of(SequenceExplorer.Action.BROKER_WITHOUT_PLUGIN,
                    SequenceExplorer.Action.PAUSE_ACROSS_TWO_SWITCHES,
                    SequenceExplorer.Action.FEED_IDLE, SequenceExplorer.Action.PAUSE_ACROSS_TWO_SWITCHES,
                    SequenceExplorer.Action.BOOKIES_RESTART_DURING_BUILD)),
            // found by a random run (seed 7130834792486426106, its twelve steps as they were drawn before the steps
            // of the long-lived round existed): a compacted ledger moved from cluster-a to cluster-b and on to
            // cluster-c, then compacted away: Pulsar's delete went to its home and its original, and the copy on
            // cluster-b was left for nothing to read or delete (verify: ORPHAN_COPY); on the way, verify served by
            // the broker whose metadata session had just expired answered 500
            new Script(7130834792486426106L, List.of(SequenceExplorer.Action.ACTIVATION_FAILURE,
                    SequenceExplorer.Action.REGISTER, SequenceExplorer.Action.DISASTER,
                    SequenceExplorer.Action.BOOKIES_UP, SequenceExplorer.Action.PAUSE_LONG,
                    SequenceExplorer.Action.PAUSE_SHORT, SequenceExplorer.Action.ACTIVATION_FAILURE,
                    SequenceExplorer.Action.ROLLBACK, SequenceExplorer.Action.SWITCH, SequenceExplorer.Action.COMPACT,
                    SequenceExplorer.Action.REGISTER, SequenceExplorer.Action.DISASTER)),
            // found by a random run (seed -4966829370179537111: a close-client, then two cleanups of that cluster at
            // once): the first cleanup's end deprecated the cluster again and closed its clients while the second
            // listed through the migration's client, which answered 500 ("Ledger manager is closed")
            new Script(483L, List.of(SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.CLEANUPS_OF_A_RETIRED_CLUSTER, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.CLEANUPS_OF_A_RETIRED_CLUSTER)),
            // the classes of the long-lived round (found by review and by runs from outside the suite, each
            // reproduced before its fix): a ledger near the end of the id space and a probe that cannot write; a
            // switch while the previous migration is still PENDING or copying (it stayed PENDING for ever); close-client
            // or cleanup at the same moment as a switch to that cluster (the active cluster marked DEPRECATED); the
            // broker running BUILD cut off past its session while it copies (its late writes over the new owner's);
            // in CI, its last two operators at once: a rollback whose switch back lost to the other operator's switch
            // stayed ROLLING_BACK; then a disaster and a compaction while the old cluster's bookies are down, which
            // is still running when the run ends (random seeds 358554954039237903 and 5961226256959737047: the last
            // compaction must wait for it, its horizon is older than the last messages)
            new Script(482L, List.of(SequenceExplorer.Action.FOREIGN_TOP_LEDGER,
                    SequenceExplorer.Action.PROBE_WRITE_FAILS, SequenceExplorer.Action.SWITCH_WHILE_MIGRATING,
                    SequenceExplorer.Action.DEPRECATE_RACING_SWITCH, SequenceExplorer.Action.PAUSE_DURING_BUILD,
                    SequenceExplorer.Action.FOREIGN_TOP_LEDGER, SequenceExplorer.Action.SWITCH_WHILE_MIGRATING,
                    SequenceExplorer.Action.DEPRECATE_RACING_SWITCH, SequenceExplorer.Action.OVERLAP,
                    SequenceExplorer.Action.TWO_OPERATORS, SequenceExplorer.Action.DISASTER,
                    SequenceExplorer.Action.COMPACT)),
            // the very first switch at once with a close-client or an unregister of its target, through the other
            // broker: both answered 200 (there was no directive yet for the command to decide under), and the cluster
            // switched to a cluster that was DEPRECATED or gone; the cutover never completed (random seeds
            // 5096850288155651506 and -2550387383196054783)
            new Script(5096850288155651506L, List.of(SequenceExplorer.Action.DEPRECATE_RACING_SWITCH,
                    SequenceExplorer.Action.DEPRECATE_RACING_SWITCH, SequenceExplorer.Action.SWITCH,
                    SequenceExplorer.Action.ROLLBACK)));

    record Script(long seed, List<SequenceExplorer.Action> actions) {
    }

    /**
     * {@link #FOUND} split into {@code parts} parts of about equal length (by their number of steps, longest first,
     * each to the part with the fewest steps so far), so that CI runs them side by side in test classes of their own
     * ({@link FoundSequencesPart1Test}, {@link FoundSequencesPart2Test}, {@link FoundSequencesPart3Test}).
     */
    static List<Script> part(int part, int parts) {
        List<List<Script>> out = new ArrayList<>();
        int[] steps = new int[parts];
        for (int i = 0; i < parts; i++) {
            out.add(new ArrayList<>());
        }
        List<Script> longestFirst = new ArrayList<>(FOUND);
        longestFirst.sort(java.util.Comparator.comparingInt((Script s) -> s.actions().size()).reversed());
        for (Script s : longestFirst) {
            int lightest = 0;
            for (int i = 1; i < parts; i++) {
                lightest = steps[i] < steps[lightest] ? i : lightest;
            }
            out.get(lightest).add(s);
            steps[lightest] += s.actions().size();
        }
        return out.get(part);
    }

    /**
     * Runs {@code scripts}; asserts that each passed. Nothing when a replay or a random campaign was asked for (they
     * run only what they ask for).
     */
    static void runScripts(List<Script> scripts) {
        if (!somethingElseAskedFor()) {
            run(scripts, (script, r) -> List.of());
        }
    }

    /**
     * Runs {@code scripts} one after the other, each on a fresh cluster; asserts that each passed and did what
     * {@code unmet} asks of it (what it names is why not).
     */
    private static void run(List<Script> scripts,
                            java.util.function.BiFunction<Script, SequenceExplorer.Result, List<String>> unmet) {
        List<String> failed = new ArrayList<>();
        for (Script s : scripts) {
            stopIfInterrupted();
            SequenceExplorer.Result r = new SequenceExplorer(s.seed(), s.actions()).run();
            List<String> missed = unmet.apply(s, r);
            log.info("EXPLORE script {}: {} ({} switch(es), {} rollback(s) finished): {}{}", s.seed(),
                    r.ok() && missed.isEmpty() ? "PASS" : "FAIL", r.switches(), r.rollbacksFinished(), r.describe(),
                    missed.isEmpty() ? "" : "; did not do what it is there for: " + missed);
            if (!r.ok() || !missed.isEmpty()) {
                failed.add(r.describe() + (missed.isEmpty() ? "" : "\nnot carried out: " + missed));
            }
        }
        assertTrue(failed.isEmpty(), String.join("\n", failed));
    }

    @Test
    void thePartsTogetherRunEveryFoundSequenceOnce() {
        List<Script> all = new ArrayList<>();
        int most = 0;
        int least = Integer.MAX_VALUE;
        for (int i = 0; i < PARTS; i++) {
            all.addAll(part(i, PARTS));
            int steps = part(i, PARTS).stream().mapToInt(s -> s.actions().size()).sum();
            most = Math.max(most, steps);
            least = Math.min(least, steps);
        }
        org.junit.jupiter.api.Assertions.assertEquals(FOUND.size(), all.size());
        assertTrue(all.containsAll(FOUND), all.toString());
        assertTrue(most - least <= FOUND.stream().mapToInt(s -> s.actions().size()).max().orElse(0),
                "about equal parts: " + least + " to " + most + " steps");
    }

    /**
     * Runs {@link #CI_PLANS} (the first {@code -Dbcs.explorer.plans=N} of them: the other Pulsar lines' subsets run
     * one): each must pass, make at least two switches, finish an accepted rollback and have verify's removal verdict
     * checked after a switch.
     */
    private static void runCiPlans() {
        run(CI_PLANS.subList(0, Math.min(CI_PLANS.size(), Integer.getInteger("bcs.explorer.plans", CI_PLANS.size()))),
                (plan, r) -> {
                    List<String> unmet = new ArrayList<>();
                    if (r.switches() < 2) {
                        unmet.add(r.switches() + " switch(es) accepted, fewer than 2");
                    }
                    if (plan.actions().contains(SequenceExplorer.Action.ROLLBACK) && r.rollbacksFinished() < 1) {
                        unmet.add("no rollback accepted and settled ROLLED_BACK");
                    }
                    if (r.removalChecksAfterASwitch() < 1) {
                        unmet.add("verify's removal verdict never checked after a switch");
                    }
                    return unmet;
                });
    }

    @Test
    void theCiRunsTogetherTakeEveryKindOfStep() {
        java.util.Set<SequenceExplorer.Action> missing = java.util.EnumSet.allOf(SequenceExplorer.Action.class);
        CI_PLANS.forEach(plan -> plan.actions().forEach(missing::remove));
        FOUND.forEach(script -> script.actions().forEach(missing::remove));
        org.junit.jupiter.api.Assertions.assertEquals(java.util.Set.of(), missing,
                "kinds of step no CI run takes: add them to a plan of CI_PLANS");
        for (Script plan : CI_PLANS) {
            assertTrue(plan.actions().stream().filter(a -> a == SequenceExplorer.Action.SWITCH
                    || a == SequenceExplorer.Action.SWITCH_BACK || a == SequenceExplorer.Action.TUNING_WHILE_MOVING)
                    .count() >= 2, "plan " + plan.seed() + " plans fewer than two switches");
            assertTrue(plan.actions().contains(SequenceExplorer.Action.ROLLBACK), "plan " + plan.seed()
                    + " has no rollback");
        }
    }

    /** {@code -Dbcs.explorer.seed=S -Dbcs.explorer.script=SWITCH,DISASTER,...}: exactly those actions (any length). */
    @Test
    @Timeout(value = 7, unit = TimeUnit.DAYS)
    void aGivenScript() {
        String only = System.getProperty("bcs.explorer.script");
        if (only == null) {
            return;
        }
        run(List.of(new Script(Long.getLong("bcs.explorer.seed", 1L), java.util.Arrays.stream(only.split(","))
                .map(String::trim).map(SequenceExplorer.Action::valueOf).toList())), (script, r) -> List.of());
    }

    /** The plans CI runs ({@link #CI_PLANS}); nothing when a replay, a script or a random campaign was asked for. */
    @Test
    void theCiPlansLoseNothingAndNeverWedge() {
        if (!somethingElseAskedFor()) {
            runCiPlans();
        }
    }

    /** After a timeout interrupted a run: no further run starts (each would be a new cluster). */
    private static void stopIfInterrupted() {
        if (Thread.currentThread().isInterrupted()) {
            throw new IllegalStateException("interrupted (the test's timeout): no further run is started");
        }
    }

    /** A replay, a script or a random campaign was asked for: the runs CI makes stay out of its way. */
    static boolean somethingElseAskedFor() {
        return System.getProperty("bcs.explorer.script") != null || System.getProperty("bcs.explorer.seed") != null
                || Integer.getInteger("bcs.explorer.random", 0) > 0;
    }

    /**
     * A replay ({@code -Dbcs.explorer.seed}) or a random campaign ({@code -Dbcs.explorer.random}); nothing otherwise. A
     * campaign runs for hours: each of its runs is bounded by the explorer's own bounds (a step that does not settle in
     * 120 s fails the run), the whole by this timeout instead of the default of the end-to-end tests.
     */
    @Test
    @Timeout(value = 7, unit = TimeUnit.DAYS)
    void sequencesLoseNothingAndNeverWedge() {
        if (System.getProperty("bcs.explorer.script") != null) {
            return;
        }
        List<Long> seeds = new ArrayList<>();
        String replay = System.getProperty("bcs.explorer.seed");
        int randomRuns = Integer.getInteger("bcs.explorer.random", 0);
        if (replay != null) {
            seeds.add(Long.parseLong(replay));
        } else if (randomRuns > 0) {
            Random r = new Random();
            for (int i = 0; i < randomRuns; i++) {
                seeds.add(r.nextLong());
            }
        } else {
            return;
        }
        boolean keepGoing = Boolean.getBoolean("bcs.explorer.keepGoing");
        int longSwitches = Integer.getInteger("bcs.explorer.longRun", 0);
        int longEvery = Integer.getInteger("bcs.explorer.longEvery", 0);
        List<String> failed = new ArrayList<>();
        int run = 0;
        for (long seed : seeds) {
            stopIfInterrupted();
            // a long run goes on until that many switches were accepted, its resources checked all along
            int switches = longSwitches > 0 ? longSwitches : longEvery > 0 && (run + 1) % longEvery == 0
                    ? LONG_RUN_SWITCHES : 0;
            SequenceExplorer.Result r = switches > 0 ? SequenceExplorer.longRun(seed, switches).run()
                    : new SequenceExplorer(seed, STEPS).run();
            log.info("EXPLORE result {}/{} {}: {}", ++run, seeds.size(), r.ok() ? "PASS" : "FAIL", r.describe());
            if (!r.ok()) {
                failed.add(r.describe());
                if (!keepGoing) {
                    break;
                }
            }
        }
        log.info("EXPLORE summary: {} seed(s) run, {} failed", run, failed.size());
        assertTrue(failed.isEmpty(), failed.size() + " of " + run + " seed(s) failed:\n" + String.join("\n", failed));
    }
}
