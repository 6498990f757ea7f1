package io.bcswitch.testkit;

import java.nio.file.Paths;
import java.util.Properties;

/**
 * The operator-style broker properties the fixture starts brokers with: the same string keys an
 * operator writes into {@code broker.conf}.
 */
final class BrokerProperties {

    /** Pulsar's cluster name for every broker of the fixture. */
    static final String CLUSTER_NAME = "test";

    static final String STORAGE_CLASS_KEY = "managedLedgerStorageClassName";
    static final String STORAGE_CLASS = "io.bcswitch.adapter.BookieClusterSwitchStorage";
    static final String CURRENT_CLUSTER_KEY = "bookieClusterSwitch.currentClusterName";
    static final String SCHEMA_STORAGE_KEY = "schemaRegistryStorageClassName";
    static final String SCHEMA_STORAGE = "io.bcswitch.adapter.RoutedSchemaStorageFactory";
    static final String SERVLET_DIR_KEY = "additionalServletDirectory";
    static final String SERVLETS_KEY = "additionalServlets";
    static final String SERVLET_NAME = "bookie-clusters";

    /** System property overriding where the servlet NAR is looked up. */
    static final String SERVLET_DIR_PROPERTY = "bcs.servletNarDir";

    private BrokerProperties() {
    }

    /** Stock broker settings: test-sized pools and caches, loopback ports chosen by the kernel. */
    static Properties base(String metadataStoreUrl, TestBookieCluster bookies) {
        return base(metadataStoreUrl, bookies.metadataServiceUri(), bookies.bookieCount());
    }

    /** {@link #base(String, TestBookieCluster)} for a bookie cluster known by its URI and size. */
    static Properties base(String metadataStoreUrl, String bookkeeperMetadataServiceUri, int bookieCount) {
        Properties p = new Properties();
        p.setProperty("clusterName", CLUSTER_NAME);
        p.setProperty("metadataStoreUrl", metadataStoreUrl);
        p.setProperty("configurationMetadataStoreUrl", metadataStoreUrl);
        p.setProperty("bookkeeperMetadataServiceUri", bookkeeperMetadataServiceUri);

        p.setProperty("advertisedAddress", "127.0.0.1");
        p.setProperty("bindAddress", "127.0.0.1");
        // 0 = let the kernel choose; TestBroker writes the real ports back after the first start.
        p.setProperty("brokerServicePort", "0");
        p.setProperty("webServicePort", "0");

        int quorum = Math.min(2, bookieCount);
        p.setProperty("managedLedgerDefaultEnsembleSize", Integer.toString(quorum));
        p.setProperty("managedLedgerDefaultWriteQuorum", Integer.toString(quorum));
        p.setProperty("managedLedgerDefaultAckQuorum", Integer.toString(quorum));

        p.setProperty("brokerDeleteInactiveTopicsEnabled", "false");
        p.setProperty("functionsWorkerEnabled", "false");
        p.setProperty("webSocketServiceEnabled", "false");
        // No NIC speed inside containers/VMs: without an override the load manager warns forever.
        p.setProperty("loadBalancerOverrideBrokerNicSpeedGbps", "1");
        p.setProperty("brokerShutdownTimeoutMs", "10000");

        p.setProperty("managedLedgerCacheSizeMB", "16");
        p.setProperty("numIOThreads", "2");
        p.setProperty("numOrderedExecutorThreads", "2");
        p.setProperty("numExecutorThreadPoolSize", "2");
        p.setProperty("numCacheExecutorThreadPoolSize", "2");
        p.setProperty("topicOrderedExecutorThreadNum", "2");
        p.setProperty("managedLedgerNumSchedulerThreads", "2");
        p.setProperty("bookkeeperClientNumWorkerThreads", "2");
        p.setProperty("bookkeeperClientNumIoThreads", "2");
        return p;
    }

    /** Adds ({@code enabled}) or removes the bookie-cluster-switch plugin settings. */
    static void applyPlugin(Properties p, boolean enabled, String currentClusterName, String servletDir) {
        if (enabled) {
            p.setProperty(STORAGE_CLASS_KEY, STORAGE_CLASS);
            p.setProperty(CURRENT_CLUSTER_KEY, currentClusterName);
            p.setProperty(SCHEMA_STORAGE_KEY, SCHEMA_STORAGE);
            p.setProperty(SERVLET_DIR_KEY, servletDir);
            p.setProperty(SERVLETS_KEY, SERVLET_NAME);
        } else {
            p.remove(STORAGE_CLASS_KEY);
            p.remove(CURRENT_CLUSTER_KEY);
            p.remove(SCHEMA_STORAGE_KEY);
            p.remove(SERVLET_DIR_KEY);
            p.remove(SERVLETS_KEY);
        }
    }

    /**
     * Absolute path of the directory holding the servlet NAR: the {@code bcs.servletNarDir}
     * system property if set, else {@code bcs-servlet/target} of the enclosing checkout (found by
     * walking up from the working directory), else {@code ../bcs-servlet/target}.
     */
    static String servletDir() {
        String configured = System.getProperty(SERVLET_DIR_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured).toAbsolutePath().normalize().toString();
        }
        return Checkout.moduleTarget("bcs-servlet").toString();
    }
}
