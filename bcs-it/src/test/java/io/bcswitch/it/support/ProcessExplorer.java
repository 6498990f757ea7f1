package io.bcswitch.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.testkit.NodeProcess;
import io.bcswitch.testkit.ProcessBroker;
import io.bcswitch.testkit.ProcessCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seeded explorer on a {@link ProcessCluster}: random sequences of operator commands (switch, rollback, retry,
 * cleanup) and of the faults processes have (SIGKILL of a broker, the migration's driver preferred; SIGSTOP of a
 * broker past its metadata session, a GC pause that makes it a zombie; SIGKILL of a bookie), each fault, and now and
 * then another step, made while the previous step's work still runs. After each settled step: every broker recorded, the cutover complete,
 * the latest migration ended as it should (a rolled-back one ROLLED_BACK, else DONE), verify clean and complete; no
 * REST answer ever 5xx. The message accounting is the caller's ({@link Traffic}, once at the end). Seeds run one
 * after another on the same cluster, each continuing from where the last left it.
 */
public final class ProcessExplorer {
    private static final Logger log = LoggerFactory.getLogger(ProcessExplorer.class);

    /** The steps, with their weights in a random draw. */
    public enum Step {
        SWITCH(4), ROLLBACK(2), RETRY_MIGRATION(1), KILL_BROKER(3), PAUSE_BROKER(2), KILL_BOOKIE(1), CLEANUP(1);

        final int weight;

        Step(int weight) {
            this.weight = weight;
        }
    }

    private static final Set<Step> FAULTS = Set.of(Step.KILL_BROKER, Step.PAUSE_BROKER, Step.KILL_BOOKIE);

    private final ProcessCluster cluster;
    private final List<String> bookieClusters;
    private final int sessionMillis;
    private final List<String> serverErrors = new CopyOnWriteArrayList<>();

    /**
     * @param bookieClusters the cluster's bookie clusters, the brokers' first
     * @param sessionMillis  the brokers' metadata session: a pause longer than this makes the paused one a zombie
     */
    public ProcessExplorer(ProcessCluster cluster, List<String> bookieClusters, int sessionMillis) {
        this.cluster = cluster;
        this.bookieClusters = List.copyOf(bookieClusters);
        this.sessionMillis = sessionMillis;
    }

    /** The steps seed {@code seed} makes, {@code steps} of them (the same for the same seed). */
    public static List<Step> sequence(long seed, int steps) {
        Random random = new Random(seed);
        int total = 0;
        for (Step s : Step.values()) {
            total += s.weight;
        }
        List<Step> out = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            int r = random.nextInt(total);
            for (Step s : Step.values()) {
                r -= s.weight;
                if (r < 0) {
                    out.add(s);
                    break;
                }
            }
        }
        return out;
    }

    /**
     * Runs seed {@code seed} ({@code steps} steps) and settles at its end; fails with every step it made, the seed and
     * what went wrong.
     */
    public void run(long seed, int steps) throws Exception {
        Random random = new Random(seed ^ 0x5DEECE66DL); // the choices within steps: apart from the sequence's draw
        List<Step> sequence = sequence(seed, steps);
        List<String> done = new ArrayList<>();
        log.info("PROCESS-EXPLORE seed={} steps {}", seed, sequence);
        try {
            for (int i = 0; i < sequence.size(); i++) {
                Step step = sequence.get(i);
                String what = make(step, random);
                done.add((i + 1) + ". " + step + ": " + what);
                log.info("PROCESS-EXPLORE seed={} step {} {}: {}", seed, i + 1, step, what);
                // a fault is made while the previous step's work runs (a switch's cutover and migration, mostly),
                // any other step now and then
                boolean overlap = i + 1 < sequence.size() && (FAULTS.contains(sequence.get(i + 1))
                        || random.nextInt(3) == 0);
                if (overlap) {
                    done.add("   (next step while this one's work runs)");
                } else {
                    settle("after step " + (i + 1));
                }
            }
            settle("at the end of seed " + seed);
        } catch (Exception | AssertionError e) {
            throw new AssertionError("process explorer seed " + seed + " (replay: -Dbcs.processExplorer.seeds=" + seed
                    + " -Dbcs.processExplorer.steps=" + steps + "), steps:\n  " + String.join("\n  ", done)
                    + "\nfailed: " + e, e);
        }
        if (!serverErrors.isEmpty()) {
            throw new AssertionError("process explorer seed " + seed + ": REST answered 5xx: " + serverErrors
                    + "; steps:\n  " + String.join("\n  ", done));
        }
        log.info("PROCESS-EXPLORE seed={} PASS: {}", seed, done);
    }

    private String make(Step step, Random random) throws Exception {
        Rest via = rest(randomBroker(random));
        return switch (step) {
            case SWITCH -> switchSomewhere(via, random);
            case ROLLBACK -> "rollback -> " + answer(via.post("/rollback", ""));
            case RETRY_MIGRATION -> "retry-migration -> " + answer(via.post("/migration/retry", ""));
            case KILL_BROKER -> killBroker(random);
            case PAUSE_BROKER -> pauseBroker(random);
            case KILL_BOOKIE -> killBookie(random);
            case CLEANUP -> cleanup(via, random);
        };
    }

    private String switchSomewhere(Rest via, Random random) {
        String active = via.status().get("activeCluster").asText();
        List<String> others = bookieClusters.stream().filter(c -> !c.equals(active)).toList();
        String target = others.get(random.nextInt(others.size()));
        Set<String> registered = registered(via);
        String reg = "";
        if (!registered.contains(target)) {
            reg = "register " + target + " -> " + answer(via.register(target, cluster.metadataServiceUri(target)))
                    + "; ";
            via.awaitEveryBrokerRecorded();
        }
        return reg + "switch " + active + " -> " + target + " -> " + answer(via.switchTo(target));
    }

    private String cleanup(Rest via, Random random) {
        String active = via.status().get("activeCluster").asText();
        List<String> inactive = registered(via).stream().filter(c -> !c.equals(active)).toList();
        if (inactive.isEmpty()) {
            return "no inactive cluster to clean up";
        }
        String c = inactive.get(random.nextInt(inactive.size()));
        boolean force = random.nextBoolean();
        return "cleanup --delete" + (force ? " --force " : " ") + c + " -> " + answer(via.post("/cleanup",
                "{\"srcCluster\":\"" + c + "\",\"dryRun\":false,\"force\":" + force + "}"));
    }

    /** SIGKILL of a broker (the migration's driver half of the time, when one runs), started again 0-5 s later. */
    private String killBroker(Random random) throws Exception {
        ProcessBroker victim = victim(random);
        int downMillis = random.nextInt(5_000);
        String migration = migrationNow(victim);
        victim.kill();
        Thread.sleep(downMillis);
        victim.start();
        return "SIGKILL " + victim.brokerId() + ", started again after " + downMillis + " ms (migration then: "
                + migration + ")";
    }

    /** SIGSTOP of a broker past its metadata session (a zombie when it wakes), or for a moment. */
    private String pauseBroker(Random random) throws Exception {
        ProcessBroker victim = victim(random);
        boolean zombie = random.nextInt(3) > 0;
        int pausedMillis = zombie ? sessionMillis + 3_000 : 1_500;
        String migration = migrationNow(victim);
        victim.pause();
        try {
            Thread.sleep(pausedMillis);
        } finally {
            victim.resume();
        }
        return "SIGSTOP " + victim.brokerId() + " for " + pausedMillis + " ms" + (zombie ? " (past its session)" : "")
                + " (migration then: " + migration + ")";
    }

    /**
     * SIGKILL of one bookie, of the active cluster half of the time (its writes wait: the ensemble is every bookie),
     * else of any cluster, started again after 3 s.
     */
    private String killBookie(Random random) throws Exception {
        String c = random.nextBoolean() ? rest(randomBroker(random)).status().get("activeCluster").asText()
                : bookieClusters.get(random.nextInt(bookieClusters.size()));
        List<NodeProcess> bookies = cluster.bookies(c);
        NodeProcess bookie = bookies.get(random.nextInt(bookies.size()));
        bookie.kill();
        Thread.sleep(3_000);
        bookie.restart();
        return "SIGKILL " + bookie.name() + ", started again after 3000 ms";
    }

    /** The migration's driver when a migration runs and a coin says so, else any broker. */
    private ProcessBroker victim(Random random) {
        boolean driver = random.nextBoolean();
        if (driver) {
            JsonNode m = rest(cluster.broker(0)).status().get("migration");
            if (m != null && !m.isNull() && !io.bcswitch.registry.Phase.valueOf(m.get("phase").asText()).terminal()) {
                for (int i = 0; i < cluster.brokerCount(); i++) {
                    if (cluster.broker(i).brokerId().equals(m.get("owner").asText())) {
                        return cluster.broker(i);
                    }
                }
            }
        }
        return cluster.broker(random.nextInt(cluster.brokerCount()));
    }

    private String migrationNow(ProcessBroker other) {
        ProcessBroker ask = cluster.broker(0) == other && cluster.brokerCount() > 1 ? cluster.broker(1)
                : cluster.broker(0);
        try {
            JsonNode m = rest(ask).status().get("migration");
            return m == null || m.isNull() ? "none" : m.get("phase").asText() + " by " + m.get("owner").asText();
        } catch (RuntimeException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    /**
     * Everything settled: every broker recorded, the cutover complete, the latest migration ended (a migration that
     * only skipped ledgers a killed broker left open, or whose only failures are ids the target's bookies refuse, is
     * taken through docs/operations.md's remedies: {@link ProcessClusterTestBase#awaitMigrationDoneAfterACrash}), and
     * verify clean.
     */
    private void settle(String when) {
        Rest rest = rest(cluster.broker(0));
        rest.awaitEveryBrokerRecorded();
        rest.awaitCutoverComplete();
        JsonNode m = ProcessClusterTestBase.awaitMigrationDoneAfterACrash(cluster, rest);
        String phase = m == null || m.isNull() ? "none" : m.get("phase").asText();
        if (!phase.equals("none") && !phase.equals("DONE") && !phase.equals("ROLLED_BACK")) {
            throw new AssertionError("the latest migration " + when + " ended " + phase + ": " + m);
        }
        ProcessClusterTestBase.assertVerifyClean(rest, when);
    }

    private Set<String> registered(Rest via) {
        Set<String> names = new TreeSet<>();
        for (JsonNode c : via.get("/").json()) {
            names.add(c.get("name").asText());
        }
        return names;
    }

    private ProcessBroker randomBroker(Random random) {
        return cluster.broker(random.nextInt(cluster.brokerCount()));
    }

    /** A REST client of {@code broker} that records every 5xx answer. */
    private Rest rest(ProcessBroker broker) {
        return Rest.observed(broker.webServiceUrl(), (path, r) -> {
            if (r.status() >= 500) {
                serverErrors.add(path + " -> " + r.status() + " " + r.raw());
            }
        });
    }

    private static String answer(Rest.Response r) {
        String raw = r.raw() == null ? "" : r.raw();
        return r.status() + (r.status() == 200 ? "" : " " + (raw.length() > 200 ? raw.substring(0, 200) : raw));
    }
}
