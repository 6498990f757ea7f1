package io.bcswitch.launcher;

import io.bcswitch.config.ConfigKey;
import io.bcswitch.config.PulsarLine;
import io.bcswitch.testkit.Checkout;
import io.bcswitch.testkit.Distribution;
import io.bcswitch.testkit.NodeProcess;
import io.bcswitch.testkit.ProcessBroker;
import io.bcswitch.testkit.ProcessCluster;
import io.bcswitch.testkit.TempDirs;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.bookkeeper.client.BookKeeperAdmin;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The demo's cluster as production runs one: ZooKeeper, every bookie and the broker each a JVM of its own, the broker
 * started by Pulsar's broker starter from an installation with the plugin installed from this build's distribution
 * archive and broker.conf written as an operator writes it (the test kit's {@link ProcessCluster}). Each process
 * writes its own log under {@code bcs-launcher/target/process-cluster/<time>/}, which is kept.
 */
final class ProcessDemoCluster implements DemoCluster {
    private final ProcessCluster cluster;
    private final Path unpacked;

    private ProcessDemoCluster(ProcessCluster cluster, Path unpacked) {
        this.cluster = cluster;
        this.unpacked = unpacked;
    }

    static ProcessDemoCluster start(Options options) throws Exception {
        Path archive = Distribution.archive(PulsarLine.ofThisBuild().line());
        Path unpacked = Files.createTempDirectory("bcs-demo-plugin-");
        try {
            ProcessCluster.Builder builder = ProcessCluster.builder()
                    .bookieCluster(Launcher.CLUSTER_A, options.bookies)
                    .bookieCluster(Launcher.CLUSTER_B, options.bookies)
                    .brokers(1)
                    .plugin(Distribution.unpack(archive, unpacked))
                    .firstBrokerPorts(options.port, options.webPort)
                    .logDir(Checkout.moduleTarget("bcs-launcher").resolve("process-cluster")
                            .resolve(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))));
            if (options.migrationRate >= 0) {
                builder.brokerConfig(ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(),
                        Long.toString(options.migrationRate));
            }
            if (options.migrationConcurrency > 0) {
                builder.brokerConfig(ConfigKey.MIGRATION_CONCURRENCY.fullName(),
                        Integer.toString(options.migrationConcurrency));
            }
            return new ProcessDemoCluster(builder.start(), unpacked);
        } catch (Exception | Error e) {
            TempDirs.deleteRecursively(unpacked);
            throw e;
        }
    }

    @Override
    public String createTenant(String tenant) throws Exception {
        return cluster.createTenant(tenant);
    }

    @Override
    public PulsarAdmin newAdmin() throws Exception {
        return cluster.newAdmin();
    }

    @Override
    public PulsarClient newClient() throws Exception {
        return cluster.newClient();
    }

    @Override
    public String brokerServiceUrl() {
        return cluster.broker(0).brokerServiceUrl();
    }

    @Override
    public String webServiceUrl() {
        return cluster.broker(0).webServiceUrl();
    }

    @Override
    public List<String> bookieClusters() {
        return List.of(Launcher.CLUSTER_A, Launcher.CLUSTER_B);
    }

    @Override
    public String metadataServiceUri(String name) {
        return cluster.metadataServiceUri(name);
    }

    @Override
    public Set<Long> ledgerIds(String name) throws Exception {
        Set<Long> ids = new TreeSet<>();
        try (BookKeeperAdmin admin = new BookKeeperAdmin(new ClientConfiguration()
                .setMetadataServiceUri(metadataServiceUri(name)))) {
            admin.listLedgers().forEach(ids::add);
        }
        return ids;
    }

    @Override
    public void describe(PrintStream out) {
        out.println("processes (each a JVM; logs in " + cluster.logDir() + "):");
        out.println("  " + line(cluster.zooKeeper()));
        for (String name : bookieClusters()) {
            for (NodeProcess bookie : cluster.bookies(name)) {
                out.println("  " + line(bookie));
            }
        }
        for (int i = 0; i < cluster.brokerCount(); i++) {
            ProcessBroker broker = cluster.broker(i);
            out.println("  " + line(broker.process()) + "  installation " + broker.installation().home());
        }
    }

    private static String line(NodeProcess p) {
        return String.format("%-22s pid %d", p.name(), p.pid());
    }

    @Override
    public void close() {
        cluster.close();
        try {
            TempDirs.deleteRecursively(unpacked);
        } catch (IOException e) {
            System.err.println("could not delete " + unpacked + ": " + e);
        }
    }
}
