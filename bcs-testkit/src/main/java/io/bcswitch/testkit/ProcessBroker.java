package io.bcswitch.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * One broker of a {@link ProcessCluster}: a JVM started with Pulsar's broker starter ({@code --broker-conf}) from
 * an installation of its own, on ports fixed for its lifetime. Its {@code conf/broker.conf} is written the way an
 * operator writes it, stock settings first, the plugin's snippet appended when the plugin is installed.
 */
public final class ProcessBroker implements BrokerEndpoints {

    static final String MAIN = "org.apache.pulsar.PulsarBrokerStarter";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final int index;
    private final PulsarInstallation installation;
    private final Properties stockSettings;
    private final String currentClusterName;
    private final Map<String, String> overrides;
    private final List<String> jvmOptions;
    private final Path logFile;
    private final int brokerPort;
    private final int webPort;
    private final NodeReaper reaper;
    private NodeProcess process;

    ProcessBroker(int index, PulsarInstallation installation, Properties stockSettings, String currentClusterName,
                  Map<String, String> overrides, List<String> jvmOptions, Path logFile, int brokerPort,
                  int webPort, NodeReaper reaper) {
        this.index = index;
        this.installation = installation;
        this.stockSettings = stockSettings;
        this.currentClusterName = currentClusterName;
        this.overrides = Map.copyOf(overrides);
        this.jvmOptions = jvmOptions;
        this.logFile = logFile;
        this.brokerPort = brokerPort;
        this.webPort = webPort;
        this.reaper = reaper;
    }

    public int index() {
        return index;
    }

    public PulsarInstallation installation() {
        return installation;
    }

    @Override
    public String brokerServiceUrl() {
        return "pulsar://127.0.0.1:" + brokerPort;
    }

    @Override
    public String webServiceUrl() {
        return "http://127.0.0.1:" + webPort;
    }

    /** {@code 127.0.0.1:<web port>}: the id Pulsar lists this broker under among the live brokers. */
    public String brokerId() {
        return "127.0.0.1:" + webPort;
    }

    /**
     * Changes one of broker.conf's stock settings from the next start on, as an operator edits broker.conf before a
     * restart (the plugin's removal points {@code bookkeeperMetadataServiceUri} at the active cluster).
     */
    public synchronized void setStockSetting(String key, String value) {
        stockSettings.setProperty(key, value);
    }

    /** This broker's value of a setting the cluster wrote into its broker.conf after the stock ones; null: none. */
    public String setting(String key) {
        return overrides.get(key);
    }

    /** The JVM; null before the first start. */
    public NodeProcess process() {
        return process;
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }


    /** Writes broker.conf, starts the JVM and waits until the broker answers as ready. */
    public synchronized void start() throws IOException, InterruptedException {
        if (isRunning()) {
            return;
        }
        launch();
        awaitReady();
    }

    /** Writes broker.conf and starts the JVM, without waiting for it (brokers of a new cluster start side by side). */
    synchronized void launch() throws IOException {
        Path conf = installation.writeBrokerConf(stockSettings, currentClusterName, overrides);
        List<String> cmd = NodeProcess.javaCommand(installation.lib(), jvmOptions, MAIN,
                List.of("--broker-conf", conf.toString()));
        // a new process each time: the command line may have changed (another installation's jars)
        process = NodeProcess.start("broker-" + index, cmd, installation.home(), logFile, reaper);
    }

    /** SIGTERM: Pulsar's own shutdown (topics closed, ownership released), then a wait for the exit. */
    public synchronized void stop() throws InterruptedException {
        if (process != null) {
            process.stop();
        }
    }

    /** SIGKILL: nothing of the broker's shutdown runs; its metadata session ends only when ZooKeeper expires it. */
    public synchronized void kill() throws InterruptedException {
        if (process != null) {
            process.kill();
        }
    }

    /** SIGSTOP: a pause of any length (a GC pause past the metadata session, a frozen VM). */
    public synchronized void pause() {
        process.pause();
    }

    /** SIGCONT: the paused broker goes on, with whatever state it had. */
    public synchronized void resume() {
        process.resume();
    }

    /** Stops (SIGTERM) and starts again, with broker.conf written anew from the installation. */
    public synchronized void restart() throws IOException, InterruptedException {
        stop();
        start();
    }

    void awaitReady() throws InterruptedException {
        process.awaitPort(webPort, START_TIMEOUT);
        process.awaitPort(brokerPort, START_TIMEOUT);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest ready = HttpRequest.newBuilder(URI.create(webServiceUrl() + "/admin/v2/brokers/ready"))
                .timeout(Duration.ofSeconds(10)).GET().build();
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            int status;
            try {
                status = http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (IOException e) {
                status = -1;
            }
            // with authentication on, an anonymous call is refused by a broker that is up: up is what is asked
            if (status == 200 || status == 401 || status == 403) {
                return;
            }
            if (!process.isAlive()) {
                throw new IllegalStateException("broker-" + index + " exited while starting (log: " + logFile + ")");
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("broker-" + index + " not ready after " + START_TIMEOUT
                        + " (last answer " + status + ", log: " + logFile + ")");
            }
            Thread.sleep(250);
        }
    }

    void close() throws InterruptedException {
        if (process != null) {
            process.close();
        }
    }

    @Override
    public String toString() {
        return "ProcessBroker[" + index + " " + webServiceUrl() + " " + process + ", " + installation + "]";
    }
}
