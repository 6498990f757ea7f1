package io.bcswitch.bench;

import io.bcswitch.testkit.TestCluster;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The two sides of a comparison, each a cluster of the same shape (ZooKeeper, one bookie cluster, brokers), one
 * with stock Pulsar storage and one with the plugin's, both up for the whole scenario so that rounds can
 * alternate between them in one JVM.
 */
final class Sides implements AutoCloseable {
    static final String STOCK = "stock";
    static final String PLUGIN = "plugin";
    static final String NAMESPACE_TENANT = "bench";

    /** What one round measures on one side. */
    interface Measure {
        double on(String side, Side s, int round) throws Exception;
    }

    /** One side: its cluster, a client and the namespace the scenario works in. */
    record Side(TestCluster cluster, PulsarClient client, String namespace) {
    }

    private final Map<String, Side> sides = new LinkedHashMap<>();

    private Sides() {
    }

    static Sides start(int bookies, int brokers) throws Exception {
        Sides s = new Sides();
        try {
            for (String side : List.of(STOCK, PLUGIN)) {
                TestCluster c = TestCluster.builder().bookieCluster("cluster-a", bookies).brokers(brokers)
                        .plugin(side.equals(PLUGIN)).start();
                String ns;
                PulsarClient client;
                try {
                    ns = c.createTenant(NAMESPACE_TENANT);
                    client = c.newClient();
                } catch (Exception e) {
                    c.close();
                    throw e;
                }
                s.sides.put(side, new Side(c, client, ns));
            }
            return s;
        } catch (Exception | Error e) {
            s.close();
            throw e;
        }
    }

    /**
     * Runs {@code measure} {@code rounds} times on each side, the side that goes first alternating from round to
     * round (drift in the machine, the JIT or the page cache then favours neither).
     */
    Map<String, List<Double>> alternate(int rounds, Measure measure) throws Exception {
        Map<String, List<Double>> samples = new LinkedHashMap<>();
        samples.put(STOCK, new ArrayList<>());
        samples.put(PLUGIN, new ArrayList<>());
        for (int r = 0; r < rounds; r++) {
            List<String> order = r % 2 == 0 ? List.of(STOCK, PLUGIN) : List.of(PLUGIN, STOCK);
            for (String side : order) {
                samples.get(side).add(measure.on(side, sides.get(side), r));
            }
        }
        return samples;
    }

    @Override
    public void close() {
        for (Side s : sides.values()) {
            try {
                s.client().close();
            } catch (Exception e) {
                // closing the cluster below closes what is left
            }
            s.cluster().close();
        }
        sides.clear();
    }
}
