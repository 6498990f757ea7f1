package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.config.ConfigKey;
import io.bcswitch.it.support.Distribution;
import io.bcswitch.it.support.ProcessClusterTestBase;
import io.bcswitch.it.support.ProcessExplorer;
import io.bcswitch.it.support.Rest;
import io.bcswitch.it.support.Traffic;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seeded explorer on a cluster of separate processes installed from the distribution archive
 * ({@link ProcessExplorer}): switches, rollbacks, retries and cleanups among three bookie clusters, mixed with
 * SIGKILLed brokers and bookies and brokers stopped past their metadata session, while traffic runs that never gives
 * a send up; every acknowledged message must be stored once and received at the end.
 *
 * <p>CI runs the fixed seeds ({@code -Dbcs.processExplorer.seeds}, default {@value #CI_SEEDS}) of
 * {@code -Dbcs.processExplorer.steps} steps (default {@value #CI_STEPS}) one after another on one cluster; a campaign
 * adds {@code -Dbcs.processExplorer.random=N} random seeds (each failure says how to replay it).
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out (ProcessClusterTestBase)")
class ProcessExplorerTest extends ProcessClusterTestBase {
    private static final Logger log = LoggerFactory.getLogger(ProcessExplorerTest.class);
    /**
     * Chosen (ProcessExplorer.sequence) so that it makes every kind of step, starts with a switch, rolls one back and
     * cleans up after two: SWITCH, PAUSE_BROKER, KILL_BROKER, SWITCH, ROLLBACK, SWITCH, KILL_BOOKIE, RETRY_MIGRATION,
     * CLEANUP.
     */
    static final String CI_SEEDS = "55";
    static final int CI_STEPS = 9;
    private static final int SESSION_MS = 8_000;
    private static final List<String> BOOKIE_CLUSTERS = List.of("cluster-a", "cluster-b", "cluster-c");

    @BeforeAll
    static void start() throws Exception {
        cluster = threeBookieClustersTwoBrokers()
                .plugin(Distribution.unpack(dist))
                .brokerConfig("metadataStoreSessionTimeoutMillis", Integer.toString(SESSION_MS))
                // slow enough for a kill or a pause to land in BUILD now and then
                .brokerConfig(ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), "20000")
                .start();
    }

    @Test
    void seededSequencesOfCommandsCrashesAndPausesLoseNothing() throws Exception {
        int steps = Integer.getInteger("bcs.processExplorer.steps", CI_STEPS);
        List<Long> seeds = new ArrayList<>();
        for (String s : System.getProperty("bcs.processExplorer.seeds", CI_SEEDS).split(",")) {
            if (!s.isBlank()) {
                seeds.add(Long.parseLong(s.trim()));
            }
        }
        Random fresh = new Random();
        for (int i = Integer.getInteger("bcs.processExplorer.random", 0); i > 0; i--) {
            seeds.add(fresh.nextLong());
        }
        String ns = retainingNamespace("explore");
        try (PulsarClient client = cluster.newClient()) {
            List<String> schemaTopics = SchemaTopics.create(client, ns, 12);
            Traffic traffic = Traffic.neverGivingUp(client, trafficTopics(ns, 4), "sub", 20);
            Rest rest = new Rest(cluster.broker(0).webServiceUrl());
            rest.awaitEveryBrokerRecorded();
            ProcessExplorer explorer = new ProcessExplorer(cluster, BOOKIE_CLUSTERS, SESSION_MS);
            for (long seed : seeds) {
                explorer.run(seed, steps);
            }
            traffic.stopAndAssertStoredOnce(client);
            assertTrue(traffic.totalSent() > 0);
            SchemaTopics.assertUsable(cluster.newAdmin(), client, schemaTopics, 5);
            log.info("process explorer: {} seed(s) of {} steps passed: {}; traffic {}", seeds.size(), steps, seeds,
                    traffic.summary());
        }
    }

    @Test
    void theCiSeedsTogetherMakeEveryKindOfStep() {
        List<ProcessExplorer.Step> drawn = new ArrayList<>();
        for (String s : CI_SEEDS.split(",")) {
            drawn.addAll(ProcessExplorer.sequence(Long.parseLong(s), CI_STEPS));
        }
        for (ProcessExplorer.Step step : ProcessExplorer.Step.values()) {
            assertTrue(drawn.contains(step), step + " is in none of the CI seeds' sequences: " + drawn);
        }
        assertEquals(CI_STEPS, drawn.size());
    }
}
