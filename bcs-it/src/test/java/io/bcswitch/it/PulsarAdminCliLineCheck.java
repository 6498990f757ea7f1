package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.PulsarAdminCli;
import io.bcswitch.it.support.PulsarAdminCli.Result;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Tokens;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The CLI extension in the pulsar-admin of a Pulsar line other than the default one (5.0's, run by CI's line subset
 * with {@code -Ppulsar-5.0}): the NAR loads there and a switch and its rollback go through it, refusals exit 1 with
 * the reason and change nothing. {@link PulsarAdminCliTest} checks every command and its output on the default line;
 * this class (not named {@code *Test}) runs only where a line's profile names it.
 */
class PulsarAdminCliLineCheck extends ClusterTestBase {
    private static final Tokens TOKENS = new Tokens();

    @BeforeAll
    static void start() throws Exception {
        cluster = TOKENS.secure(twoBookieClusters()).start();
    }

    private static void succeeds(Result r, String text) {
        assertEquals(0, r.exit(), r.all());
        assertTrue(r.stdout().contains(text), "expected '" + text + "' in: " + r.stdout());
    }

    @Test
    void aSwitchAndItsRollbackGoThroughThisLinesPulsarAdmin() throws Exception {
        String web = cluster.broker(0).webServiceUrl();
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        try (PulsarAdminCli cli = new PulsarAdminCli(web, "token:" + TOKENS.admin)) {
            Result help = cli.run("bookie-clusters", "--help");
            for (String c : List.of("list", "register", "precheck", "switch", "status", "verify", "rollback",
                    "cleanup", "close-client")) {
                succeeds(help, "  " + c + " ");
            }
            succeeds(cli.run("bookie-clusters", "register", "cluster-b", "--metadata-service-uri", uriB),
                    "Registered bookie cluster 'cluster-b' as STANDBY");
            Map<String, String> before = Registry.registryAndManagedLedgers(cluster);
            PulsarAdminCliTest.failsWith(cli.run("bookie-clusters", "register", "bad name", "-u", uriB), "must match");
            PulsarAdminCliTest.failsWith(cli.run("bookie-clusters", "switch", "cluster-b"), "not confirmed");
            assertEquals(before, Registry.registryAndManagedLedgers(cluster), "refused commands change nothing");

            succeeds(cli.run("bookie-clusters", "precheck", "cluster-b"), "Precheck for switching to 'cluster-b': OK");
            succeeds(cli.run("bookie-clusters", "switch", "cluster-b", "--yes"),
                    "Switched: new ledgers are created on 'cluster-b' (epoch 1");
            Result status;
            JsonNode json;
            long deadline = System.nanoTime() + 60_000_000_000L;
            do {
                status = cli.run("bookie-clusters", "status", "-o", "json");
                assertEquals(0, status.exit(), status.all());
                json = new ObjectMapper().readTree(status.stdout());
            } while (!json.path("cutoverComplete").asBoolean() && System.nanoTime() < deadline);
            assertTrue(json.path("cutoverComplete").asBoolean(), status.stdout());
            assertEquals("cluster-b", json.get("activeCluster").asText(), status.stdout());
            assertEquals(2, json.get("ranges").size(), status.stdout());

            Result verify = cli.run("bookie-clusters", "verify");
            for (int i = 0; i < 30 && verify.exit() != 0; i++) { // a broker may still be applying the last epoch
                Thread.sleep(1000);
                verify = cli.run("bookie-clusters", "verify");
            }
            succeeds(verify, "OK: no violation");
            succeeds(cli.run("bookie-clusters", "rollback", "--yes"), "Rolled back switch epoch 1");
        }
    }
}
