package io.bcswitch.bench;

import io.bcswitch.bench.rollover.RolloverProtocolHandler;
import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.config.PulsarLine;
import io.bcswitch.testkit.Checkout;
import io.bcswitch.testkit.Distribution;
import io.bcswitch.testkit.ProcessCluster;
import io.bcswitch.testkit.PulsarAccess;
import io.bcswitch.testkit.TestCluster;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The sides of a comparison, each its own cluster (ZooKeeper, bookie clusters, brokers) of the same shape but for
 * what is compared (stock storage or the plugin's; the plugin's defaults or other settings), all up for the whole
 * scenario so that rounds can alternate between them; in the bench's JVM or each node a process of its own
 * ({@link Layout}).
 */
final class Sides implements AutoCloseable {
    static final String STOCK = "stock";
    static final String PLUGIN = "plugin";
    static final String NAMESPACE_TENANT = "bench";

    /** Where a side's ZooKeeper, bookies and brokers run. */
    enum Layout {
        /** all of them, and every side, in the bench's own JVM */
        ONE_JVM,
        /**
         * each a JVM of its own started from a Pulsar installation (the plugin's brokers with the plugin installed
         * from its distribution archive), as production runs them; the bench's JVM holds only the clients
         */
        PROCESSES;

        /** The layout as the result file states it, with the broker JVM settings in force when it is asked. */
        String description() {
            if (this == ONE_JVM) {
                return "ZooKeeper, bookies and brokers of both sides in the bench's JVM";
            }
            List<String> jvm = brokerJvm();
            return "ZooKeeper, every bookie and every broker a JVM of its own (broker heap " + PROCESS_BROKER_HEAP
                    + ", brokers " + String.join(" ", jvm) + (jvm.equals(ProcessCluster.LEAN_JVM) ? ""
                    : " with the full JIT compiler") + "; bookies and ZooKeeper "
                    + String.join(" ", ProcessCluster.LEAN_JVM) + "); the bench's JVM holds the clients";
        }

        /** A scenario's name in this layout: {@code base} in one JVM, {@code <base>-processes} on processes. */
        String scenario(String base) {
            return this == PROCESSES ? base + PROCESSES_SUFFIX : base;
        }

        /** A scenario's title in this layout. */
        String title(String base) {
            return this == PROCESSES ? base + " (a JVM per broker, bookie and ZooKeeper)" : base;
        }

        /** Whether scenario {@code name} runs on processes. */
        static boolean onProcesses(String name) {
            return name.endsWith(PROCESSES_SUFFIX);
        }
    }

    private static final String PROCESSES_SUFFIX = "-processes";

    /** Each broker JVM's heap in the process layout: the 1,000-topic shapes on one broker fit with room to spare. */
    static final String PROCESS_BROKER_HEAP = "1g";

    /**
     * The process layout's brokers run with Pulsar's own collector and compiler settings (what {@code pulsar_env.sh}
     * gives a production broker) unless {@code JAVA_OPTS=-Dbench.brokerJvm=lean} asks for the test JVM's.
     */
    static final String BROKER_JVM_PROPERTY = "bench.brokerJvm";

    static List<String> brokerJvm() {
        String given = System.getProperty(BROKER_JVM_PROPERTY, "pulsar");
        return switch (given) {
            case "pulsar" -> ProcessCluster.PULSAR_DEFAULT_JVM;
            case "lean" -> ProcessCluster.LEAN_JVM;
            default -> throw new IllegalArgumentException("bench.brokerJvm is 'pulsar' (the default) or 'lean': "
                    + given);
        };
    }

    /**
     * How to build one side.
     *
     * @param plugin   brokers with the plugin
     * @param clusters bookie clusters ({@code cluster-a} first, the brokers' own; with the plugin the others are
     *                 registered with it)
     * @param bookies  bookies per bookie cluster
     * @param brokers  brokers
     * @param config   extra broker settings
     * @param layout   where its processes run
     */
    record Spec(boolean plugin, int clusters, int bookies, int brokers, Map<String, String> config, Layout layout) {
        Spec(boolean plugin, int clusters, int bookies, int brokers, Map<String, String> config) {
            this(plugin, clusters, bookies, brokers, config, Layout.ONE_JVM);
        }
    }

    /** What one round measures on one side. */
    interface Measure<T> {
        T on(String side, Side s, int round) throws Exception;
    }

    /** One side: its cluster (of either layout), a client and the namespace the scenario works in. */
    record Side(PulsarAccess cluster, PulsarClient client, String namespace) {
    }

    private final Map<String, Side> sides = new LinkedHashMap<>();

    /** {@code cluster-a}, {@code cluster-b}, ... */
    static String clusterName(int i) {
        return "cluster-" + (char) ('a' + i);
    }

    /** Of the two bookie clusters a plugin side has, the one that is not {@code active}. */
    static String otherCluster(String active) {
        return active.equals(clusterName(0)) ? clusterName(1) : clusterName(0);
    }

    /** Of {@code count} bookie clusters, the one after {@code active} ({@code cluster-a} after the last). */
    static String nextCluster(String active, int count) {
        return clusterName((active.charAt(active.length() - 1) - 'a' + 1) % count);
    }

    /** The plugin's REST API on the cluster's first broker. */
    static BookieClustersAdmin admin(PulsarAccess c) {
        return BookieClustersAdmin.builder().serviceUrl(c.broker(0).webServiceUrl()).build();
    }

    private Sides() {
    }

    /**
     * Plugin settings for the plugin side, to look into one of them
     * ({@code JAVA_OPTS=-Dbench.plugin.config=switchPrepareTimeoutMillis=0,cutoverTopicsPerSecond=100}); empty by
     * default: the benchmarks measure the defaults.
     */
    static final String PLUGIN_CONFIG_PROPERTY = "bench.plugin.config";

    static Map<String, String> pluginConfig() {
        Map<String, String> out = new LinkedHashMap<>();
        String given = System.getProperty(PLUGIN_CONFIG_PROPERTY, "");
        for (String kv : given.split(",")) {
            if (!kv.isBlank()) {
                int eq = kv.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException(PLUGIN_CONFIG_PROPERTY + ": not key=value: " + kv);
                }
                out.put(io.bcswitch.config.SwitchConfig.PREFIX + kv.substring(0, eq).trim(),
                        kv.substring(eq + 1).trim());
            }
        }
        return out;
    }

    /** Stock storage and the plugin's, one bookie per cluster. */
    static Sides stockAndPlugin(Layout layout, int brokers, int pluginClusters) throws Exception {
        Map<String, Spec> specs = new LinkedHashMap<>();
        specs.put(STOCK, new Spec(false, 1, 1, brokers, Map.of(), layout));
        specs.put(PLUGIN, new Spec(true, pluginClusters, 1, brokers, pluginConfig(), layout));
        return start(specs);
    }

    /** Starts every side, in order; on failure closes what started. */
    static Sides start(Map<String, Spec> specs) throws Exception {
        Sides s = new Sides();
        try {
            for (Map.Entry<String, Spec> e : specs.entrySet()) {
                s.sides.put(e.getKey(), side(e.getValue()));
            }
            return s;
        } catch (Exception | Error e) {
            s.close();
            throw e;
        }
    }

    private static Side side(Spec spec) throws Exception {
        return spec.layout() == Layout.PROCESSES ? processSide(spec) : oneJvmSide(spec);
    }

    private static Side oneJvmSide(Spec spec) throws Exception {
        TestCluster.Builder b = TestCluster.builder().brokers(spec.brokers()).plugin(spec.plugin())
                .brokerConfig(p -> spec.config().forEach(p::setProperty));
        for (int i = 0; i < spec.clusters(); i++) {
            b.bookieCluster(clusterName(i), spec.bookies());
        }
        TestCluster c = b.start();
        return prepared(spec, c);
    }

    /**
     * The plugin's brokers get the plugin from this build's distribution archive, as an operator installs it; the
     * stock brokers get the bench's rollover endpoint ({@link RolloverProtocolHandler}, idle but in cutover rounds),
     * each on a port of its own.
     */
    private static Side processSide(Spec spec) throws Exception {
        ProcessCluster.Builder b = ProcessCluster.builder().brokers(spec.brokers()).brokerHeap(PROCESS_BROKER_HEAP)
                .brokerJvm(brokerJvm())
                .logDir(Checkout.moduleTarget("bcs-bench").resolve("process-cluster").resolve(
                        LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS"))
                                + (spec.plugin() ? "-plugin" : "-stock")));
        for (int i = 0; i < spec.clusters(); i++) {
            b.bookieCluster(clusterName(i), spec.bookies());
        }
        if (spec.plugin()) {
            b.pluginArchive(Distribution.archive(PulsarLine.ofThisBuild().line()));
        } else {
            b.brokerConfig("messagingProtocols", RolloverProtocolHandler.NAME)
                    .brokerConfig("protocolHandlerDirectory", Checkout.moduleTarget("bcs-bench-rollover").toString())
                    .brokerPortSetting(RolloverProtocolHandler.PORT_KEY);
        }
        spec.config().forEach(b::brokerConfig);
        ProcessCluster c = b.start();
        return prepared(spec, c);
    }

    /** The bench's tenant, the plugin side's other bookie clusters registered; on failure the cluster is closed. */
    private static Side prepared(Spec spec, PulsarAccess c) throws Exception {
        try {
            String ns = c.createTenant(NAMESPACE_TENANT);
            if (spec.plugin() && spec.clusters() > 1) {
                try (BookieClustersAdmin admin = admin(c)) {
                    for (int i = 1; i < spec.clusters(); i++) {
                        admin.register(clusterName(i), c.metadataServiceUri(clusterName(i)));
                    }
                }
            }
            return new Side(c, c.newClient(), ns); // the fixture closes the clients it made
        } catch (Exception e) {
            c.close();
            throw e;
        }
    }

    Map<String, Side> all() {
        return sides;
    }

    /**
     * Runs {@code measure} {@code rounds} times on each side, the side that goes first rotating from round to round
     * (drift in the machine, the JIT or the page cache then favours none).
     */
    <T> Map<String, List<T>> alternate(int rounds, Measure<T> measure) throws Exception {
        List<String> names = new ArrayList<>(sides.keySet());
        Map<String, List<T>> samples = new LinkedHashMap<>();
        names.forEach(n -> samples.put(n, new ArrayList<>()));
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < names.size(); i++) {
                String side = names.get((i + r) % names.size());
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
            try {
                s.cluster().close();
            } catch (RuntimeException e) {
                // the next side is closed all the same
            }
        }
        sides.clear();
    }
}
