package io.bcswitch.bench;

import io.bcswitch.client.BookieClustersAdmin;
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
    interface Measure<T> {
        T on(String side, Side s, int round) throws Exception;
    }

    /** One side: its cluster, a client and the namespace the scenario works in. */
    record Side(TestCluster cluster, PulsarClient client, String namespace) {
    }

    private final Map<String, Side> sides = new LinkedHashMap<>();

    /** {@code cluster-a}, {@code cluster-b}, ... */
    static String clusterName(int i) {
        return "cluster-" + (char) ('a' + i);
    }

    /** The plugin's REST API on the cluster's first broker. */
    static BookieClustersAdmin admin(TestCluster c) {
        return BookieClustersAdmin.builder().serviceUrl(c.broker(0).webServiceUrl()).build();
    }

    private Sides() {
    }

    static Sides start(int bookies, int brokers) throws Exception {
        return start(bookies, brokers, 1, java.util.Map.of());
    }

    /**
     * @param pluginClusters bookie clusters on the plugin's side ({@code cluster-a} first, the brokers' own, then
     *                       {@code cluster-b}, ..., each registered with the plugin); the stock side has one
     * @param config         broker settings both sides get
     */
    static Sides start(int bookies, int brokers, int pluginClusters, Map<String, String> config) throws Exception {
        Sides s = new Sides();
        try {
            for (String side : List.of(STOCK, PLUGIN)) {
                TestCluster.Builder b = TestCluster.builder().brokers(brokers).plugin(side.equals(PLUGIN))
                        .brokerConfig(p -> config.forEach(p::setProperty));
                int clusters = side.equals(PLUGIN) ? pluginClusters : 1;
                for (int i = 0; i < clusters; i++) {
                    b.bookieCluster(clusterName(i), bookies);
                }
                TestCluster c = b.start();
                String ns;
                PulsarClient client;
                try {
                    ns = c.createTenant(NAMESPACE_TENANT);
                    client = c.newClient();
                    if (side.equals(PLUGIN) && clusters > 1) {
                        try (BookieClustersAdmin admin = admin(c)) {
                            for (int i = 1; i < clusters; i++) {
                                admin.register(clusterName(i), c.bookieCluster(clusterName(i)).metadataServiceUri());
                            }
                        }
                    }
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
    <T> Map<String, List<T>> alternate(int rounds, Measure<T> measure) throws Exception {
        Map<String, List<T>> samples = new LinkedHashMap<>();
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
