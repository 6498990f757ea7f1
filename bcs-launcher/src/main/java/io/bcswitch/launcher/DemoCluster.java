package io.bcswitch.launcher;

import io.bcswitch.config.ConfigKey;
import io.bcswitch.config.PulsarLine;
import io.bcswitch.testkit.Checkout;
import io.bcswitch.testkit.Distribution;
import io.bcswitch.testkit.NodeProcess;
import io.bcswitch.testkit.ProcessCluster;
import io.bcswitch.testkit.PulsarAccess;
import io.bcswitch.testkit.TestCluster;
import java.io.PrintStream;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.bookkeeper.client.BookKeeperAdmin;
import org.apache.bookkeeper.conf.ClientConfiguration;

/**
 * What the demo runs on: ZooKeeper, bookie clusters {@code cluster-a} and {@code cluster-b} and one broker with the
 * plugin writing to {@code cluster-a}, either all in this JVM (the test kit's {@link TestCluster}) or each a process of
 * its own as production runs them (its {@link ProcessCluster}: the broker started by Pulsar's broker starter from an
 * installation with the plugin installed from this build's distribution archive, broker.conf written as an operator
 * writes it; each process logs under {@code bcs-launcher/target/process-cluster/<time>/}, which is kept). Closing it
 * stops everything it started.
 */
final class DemoCluster implements AutoCloseable {
    private final PulsarAccess access;
    private final Consumer<PrintStream> describe;
    private final Runnable close;

    private DemoCluster(PulsarAccess access, Consumer<PrintStream> describe, Runnable close) {
        this.access = access;
        this.describe = describe;
        this.close = close;
    }

    static DemoCluster inProcess(Options options) throws Exception {
        TestCluster c = TestCluster.builder()
                .bookieCluster(Launcher.CLUSTER_A, options.bookies)
                .bookieCluster(Launcher.CLUSTER_B, options.bookies)
                .brokerBookieCluster(Launcher.CLUSTER_A)
                .brokers(1)
                .plugin(true)
                .brokerConfig(p -> {
                    p.setProperty("brokerServicePort", Integer.toString(options.port));
                    p.setProperty("webServicePort", Integer.toString(options.webPort));
                    pluginSettings(options).forEach(s -> p.setProperty(s[0], s[1]));
                })
                .start();
        return new DemoCluster(c, out -> { }, c::close);
    }

    static DemoCluster processes(Options options) throws Exception {
        ProcessCluster.Builder builder = ProcessCluster.builder()
                .bookieCluster(Launcher.CLUSTER_A, options.bookies)
                .bookieCluster(Launcher.CLUSTER_B, options.bookies)
                .brokers(1)
                .pluginArchive(Distribution.archive(PulsarLine.ofThisBuild().line()))
                .firstBrokerPorts(options.port, options.webPort)
                .logDir(Checkout.moduleTarget("bcs-launcher").resolve("process-cluster")
                        .resolve(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))));
        pluginSettings(options).forEach(s -> builder.brokerConfig(s[0], s[1]));
        ProcessCluster c = builder.start();
        return new DemoCluster(c, out -> describe(c, out), c::close);
    }

    /** The plugin settings the options give, as key and value. */
    private static List<String[]> pluginSettings(Options options) {
        List<String[]> out = new java.util.ArrayList<>();
        if (options.migrationRate >= 0) {
            out.add(new String[] {ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(), Long.toString(options.migrationRate)});
        }
        if (options.migrationConcurrency > 0) {
            out.add(new String[] {ConfigKey.MIGRATION_CONCURRENCY.fullName(),
                Integer.toString(options.migrationConcurrency)});
        }
        return out;
    }

    /** The processes and their logs. */
    private static void describe(ProcessCluster c, PrintStream out) {
        out.println("processes (each a JVM; logs in " + c.logDir() + "):");
        out.println("  " + line(c.zooKeeper()));
        for (String name : List.of(Launcher.CLUSTER_A, Launcher.CLUSTER_B)) {
            for (NodeProcess bookie : c.bookies(name)) {
                out.println("  " + line(bookie));
            }
        }
        for (int i = 0; i < c.brokerCount(); i++) {
            out.println("  " + line(c.broker(i).process()) + "  installation " + c.broker(i).installation().home());
        }
    }

    private static String line(NodeProcess p) {
        return String.format("%-22s pid %d", p.name(), p.pid());
    }

    /** The fixture's brokers and clients. */
    PulsarAccess access() {
        return access;
    }

    /** The bookie clusters, cluster-a (the broker's) first. */
    List<String> bookieClusters() {
        return List.of(Launcher.CLUSTER_A, Launcher.CLUSTER_B);
    }

    /** Ids of the ledgers bookie cluster {@code name} holds now (read from its ledger manager). */
    Set<Long> ledgerIds(String name) throws Exception {
        Set<Long> ids = new TreeSet<>();
        try (BookKeeperAdmin admin = new BookKeeperAdmin(new ClientConfiguration()
                .setMetadataServiceUri(access.metadataServiceUri(name)))) {
            admin.listLedgers().forEach(ids::add);
        }
        return ids;
    }

    /** Says what runs where (the processes and their logs); nothing for a cluster in this JVM. */
    void describe(PrintStream out) {
        describe.accept(out);
    }

    @Override
    public void close() {
        close.run();
    }
}
