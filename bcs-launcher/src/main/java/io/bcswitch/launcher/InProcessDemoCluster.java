package io.bcswitch.launcher;

import io.bcswitch.config.ConfigKey;
import io.bcswitch.testkit.TestBookieCluster;
import io.bcswitch.testkit.TestCluster;
import java.io.PrintStream;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;

/** The demo's cluster in this JVM: the test kit's in-process ZooKeeper, bookies and broker. */
final class InProcessDemoCluster implements DemoCluster {
    private final TestCluster cluster;

    private InProcessDemoCluster(TestCluster cluster) {
        this.cluster = cluster;
    }

    static InProcessDemoCluster start(Options options) throws Exception {
        return new InProcessDemoCluster(TestCluster.builder()
                .bookieCluster(Launcher.CLUSTER_A, options.bookies)
                .bookieCluster(Launcher.CLUSTER_B, options.bookies)
                .brokerBookieCluster(Launcher.CLUSTER_A)
                .brokers(1)
                .plugin(true)
                .brokerConfig(p -> {
                    p.setProperty("brokerServicePort", Integer.toString(options.port));
                    p.setProperty("webServicePort", Integer.toString(options.webPort));
                    if (options.migrationRate >= 0) {
                        p.setProperty(ConfigKey.MIGRATION_BYTES_PER_SECOND.fullName(),
                                Long.toString(options.migrationRate));
                    }
                    if (options.migrationConcurrency > 0) {
                        p.setProperty(ConfigKey.MIGRATION_CONCURRENCY.fullName(),
                                Integer.toString(options.migrationConcurrency));
                    }
                })
                .start());
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
        return cluster.bookieClusters().stream().map(TestBookieCluster::name).toList();
    }

    @Override
    public String metadataServiceUri(String name) {
        return cluster.bookieCluster(name).metadataServiceUri();
    }

    @Override
    public Set<Long> ledgerIds(String name) throws Exception {
        return cluster.bookieCluster(name).ledgerIds();
    }

    @Override
    public void describe(PrintStream out) {
    }

    @Override
    public void close() {
        cluster.close();
    }
}
