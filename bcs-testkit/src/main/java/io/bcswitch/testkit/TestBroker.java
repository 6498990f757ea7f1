package io.bcswitch.testkit;

import java.util.Properties;
import java.util.function.Consumer;
import org.apache.pulsar.broker.PulsarServerException;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.common.configuration.PulsarConfigurationLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real {@link PulsarService} of the fixture.
 *
 * <p>The broker is configured from operator-style {@link Properties} through
 * {@link PulsarConfigurationLoader}, exactly like {@code broker.conf}. The ports are the fixture's
 * (a listener configured with 0 gets the kernel's choice on the first start), and are pinned in the
 * properties, so {@link #restart()} comes back on the same addresses. A {@link PulsarService} cannot be started twice: every start builds a new
 * one from a fresh copy of the properties. Lifecycle methods are meant for the test thread.
 */
public final class TestBroker implements BrokerEndpoints {

    private static final Logger LOG = LoggerFactory.getLogger(TestBroker.class);

    private final int index;
    private final String pluginClusterName;
    private final String servletDir;
    private final Properties properties;
    private final MetadataLink metadataLink;

    private volatile PulsarService pulsar;
    /** Metadata service URIs this broker cannot build BookKeeper clients for (kept across restarts). */
    private final java.util.Set<String> failingClients = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile int brokerPort;
    private volatile int webPort;

    TestBroker(int index, Properties properties, String pluginClusterName, String servletDir,
               MetadataLink metadataLink) {
        this.metadataLink = metadataLink;
        this.index = index;
        this.properties = properties;
        this.pluginClusterName = pluginClusterName;
        this.servletDir = servletDir;
    }

    /** Position of this broker in the fixture (0-based). */
    public int index() {
        return index;
    }

    /** The running service; throws when the broker is stopped. */
    public PulsarService pulsar() {
        PulsarService p = pulsar;
        if (p == null) {
            throw new IllegalStateException("Broker " + index + " is not running");
        }
        return p;
    }

    /** This broker's path to the metadata store; only with {@code TestCluster.Builder#pausableMetadataLinks()}. */
    public MetadataLink metadataLink() {
        if (metadataLink == null) {
            throw new IllegalStateException("Broker " + index + " has no pausable metadata link: build the cluster "
                    + "with pausableMetadataLinks()");
        }
        return metadataLink;
    }

    public boolean isRunning() {
        return pulsar != null;
    }

    /** {@code pulsar://127.0.0.1:<port>}; the port stays the same across restarts. */
    public String brokerServiceUrl() {
        requireStartedOnce();
        return "pulsar://127.0.0.1:" + brokerPort;
    }

    /** {@code http://127.0.0.1:<port>}; the port stays the same across restarts. */
    public String webServiceUrl() {
        requireStartedOnce();
        return "http://127.0.0.1:" + webPort;
    }

    /**
     * {@code https://localhost:<port>} of the TLS web service, which the broker has when it is configured with
     * {@code webServicePortTls} (0 picks a free port, kept across restarts); localhost so that a certificate for
     * localhost passes host name verification.
     */
    public synchronized String webServiceUrlTls() {
        requireStartedOnce();
        String port = properties.getProperty("webServicePortTls");
        if (port == null || port.isBlank()) {
            throw new IllegalStateException("Broker " + index + " has no TLS web service (webServicePortTls)");
        }
        return "https://localhost:" + port;
    }

    /** A copy of the properties the broker is (or will next be) started with. */
    public synchronized Properties properties() {
        Properties copy = new Properties();
        copy.putAll(properties);
        return copy;
    }

    /** Starts the broker; no-op when it runs. On failure the half-started service is closed. */
    public synchronized void start() throws Exception {
        if (pulsar != null) {
            return;
        }
        ServiceConfiguration conf = PulsarConfigurationLoader.create(properties(), ServiceConfiguration.class);
        FaultInjectingPulsarService service = new FaultInjectingPulsarService(conf);
        service.failing.addAll(failingClients);
        try {
            service.start();
        } catch (Exception | Error e) {
            closeQuietly(service);
            throw e;
        }
        brokerPort = service.getBrokerListenPort().orElseThrow();
        webPort = service.getListenPortHTTP().orElseThrow();
        properties.setProperty("brokerServicePort", Integer.toString(brokerPort));
        properties.setProperty("webServicePort", Integer.toString(webPort));
        service.getListenPortHTTPS().ifPresent(p -> properties.setProperty("webServicePortTls", Integer.toString(p)));
        pulsar = service;
        LOG.info("Broker {} started: {} {}", index, brokerServiceUrl(), webServiceUrl());
    }

    /** Closes the broker; no-op when it is stopped. */
    public synchronized void stop() throws PulsarServerException {
        PulsarService service = pulsar;
        if (service == null) {
            return;
        }
        pulsar = null;
        service.close();
        LOG.info("Broker {} stopped", index);
    }

    /**
     * Fault hook: from now on this broker cannot build a BookKeeper client for the bookie cluster at
     * {@code metadataServiceUri} (as if that cluster's metadata service were unreachable from this broker only), until
     * {@link #healBookKeeperClients()}. Clients built before keep working.
     */
    public void failBookKeeperClients(String metadataServiceUri) {
        failingClients.add(metadataServiceUri);
        if (pulsar instanceof FaultInjectingPulsarService f) {
            f.failing.add(metadataServiceUri);
        }
        LOG.info("Broker {}: BookKeeper clients for {} now fail to build (fault)", index, metadataServiceUri);
    }

    /** Ends {@link #failBookKeeperClients}. */
    public void healBookKeeperClients() {
        failingClients.clear();
        if (pulsar instanceof FaultInjectingPulsarService f) {
            f.failing.clear();
        }
        LOG.info("Broker {}: BookKeeper clients build again", index);
    }

    /** Stops and starts again with the same properties and ports. */
    public synchronized void restart() throws Exception {
        stop();
        start();
    }

    /** Restarts with the bookie-cluster-switch plugin settings added ({@code true}) or removed. */
    public synchronized void restart(boolean plugin) throws Exception {
        restart(p -> BrokerProperties.applyPlugin(p, plugin, pluginClusterName, servletDir));
    }

    /**
     * Restarts as a broker that never had the plugin, the way docs/operations.md says to remove it: stock storage,
     * no plugin keys or servlet, {@code bookkeeperMetadataServiceUri} set to the one bookie cluster it uses now.
     */
    public synchronized void restartWithoutPlugin(String bookkeeperMetadataServiceUri) throws Exception {
        restart(p -> {
            BrokerProperties.applyPlugin(p, false, pluginClusterName, servletDir);
            p.stringPropertyNames().stream().filter(k -> k.startsWith("bookieClusterSwitch.")).forEach(p::remove);
            p.setProperty("bookkeeperMetadataServiceUri", bookkeeperMetadataServiceUri);
        });
    }

    /** Restarts after applying {@code changes} to the broker's properties (kept for later restarts). */
    public synchronized void restart(Consumer<Properties> changes) throws Exception {
        stop();
        changes.accept(properties);
        start();
    }

    private void requireStartedOnce() {
        if (brokerPort == 0) {
            throw new IllegalStateException("Broker " + index + " has never been started");
        }
    }

    /**
     * Closes a broker whose start failed. PulsarService.close() can block forever joining a web server
     * that never started, so the close runs on its own thread with a bounded wait.
     */
    private void closeQuietly(PulsarService service) {
        Thread closer = new Thread(() -> {
            try {
                service.close();
            } catch (Exception e) {
                LOG.warn("Error closing broker {} after a failed start", index, e);
            }
        }, "close-failed-broker-" + index);
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            LOG.warn("Broker {} did not close within 30 s after a failed start; abandoning it", index);
        }
    }

    @Override
    public String toString() {
        return "TestBroker[" + index + (brokerPort == 0 ? "" : " " + brokerServiceUrl())
                + (isRunning() ? "" : " stopped") + "]";
    }
}
