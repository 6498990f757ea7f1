package io.bcswitch.launcher;

import io.bcswitch.testkit.Ports;
import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;

/**
 * Standalone launcher: ZooKeeper, bookie clusters {@code cluster-a} and {@code cluster-b}, and one broker with the
 * bookie-cluster-switch plugin and its REST servlet, writing to {@code cluster-a}; all in this JVM, or with
 * {@code --processes} each a process of its own started from an installation ({@link DemoCluster}). With {@code --serve} it stays up for manual use; otherwise it runs
 * a live switch to {@code cluster-b} under load and reports what the clients saw ({@link SwitchDemo}). This class
 * owns the fixture's lifecycle: start, serve, and closing it once on exit or Ctrl-C.
 */
public final class Launcher {

    static final String CLUSTER_A = "cluster-a";
    static final String CLUSTER_B = "cluster-b";
    private static final long START_TIMEOUT_MS = 180_000;

    private final Options options;
    private final PrintStream out = System.out;
    private DemoCluster cluster;
    private boolean closed;

    private Launcher(Options options) {
        this.options = options;
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(Options.usage());
            System.exit(2);
            return;
        }
        if (options.help) {
            System.out.println(Options.usage());
            return;
        }
        quietJulLogging();
        Launcher launcher = new Launcher(options);
        int code;
        try {
            code = launcher.run();
        } catch (Throwable t) {
            System.out.flush();
            System.err.println("launcher failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        launcher.closeCluster();
        System.out.flush();
        System.exit(code);
    }

    private int run() throws Exception {
        for (int port : new int[] {options.port, options.webPort}) {
            if (!Ports.bindable(port)) {
                System.err.println("error: port " + port + " on 127.0.0.1 is in use; choose others with "
                        + "--port P / --web-port W");
                return 1;
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::closeCluster, "launcher-shutdown"));
        long t0 = System.nanoTime();
        Thread watchdog = startWatchdog();
        DemoCluster started = options.processes ? DemoCluster.processes(options) : DemoCluster.inProcess(options);
        watchdog.interrupt();
        synchronized (this) {
            cluster = started;
            if (closed) {
                // Ctrl-C arrived while starting
                started.close();
                return 130;
            }
        }
        for (String bk : cluster.bookieClusters()) {
            out.println("bookie-cluster " + bk + " " + cluster.access().metadataServiceUri(bk));
        }
        out.println("broker-service-url " + cluster.access().broker(0).brokerServiceUrl());
        out.println("web-service-url " + cluster.access().broker(0).webServiceUrl());
        cluster.describe(out);
        out.printf("(started in %.1f s, %s, %d bookies per cluster, broker writes to %s)%n",
                (System.nanoTime() - t0) / 1e9, options.processes ? "each a process" : "all in this JVM",
                options.bookies, CLUSTER_A);
        out.flush();
        return options.serve ? serve() : new SwitchDemo(cluster, options, out).run();
    }

    private int serve() throws InterruptedException {
        String web = cluster.access().broker(0).webServiceUrl();
        String api = web + Rest.BASE_PATH;
        String uriB = cluster.access().metadataServiceUri(CLUSTER_B);
        out.println();
        out.println("Serving until Ctrl-C / SIGTERM. Only " + CLUSTER_A + " is registered (ACTIVE). Examples:");
        out.println("  pulsar-admin --admin-url " + web + " topics list public/default");
        out.println("  pulsar-client --url " + cluster.access().broker(0).brokerServiceUrl()
                + " produce persistent://public/default/t1 -m hello -n 10");
        out.println("  curl -s " + api + "/");
        out.println("  curl -s -X POST -H 'Content-Type: application/json' -d '{\"metadataServiceUri\": \""
                + uriB + "\"}' " + api + "/" + CLUSTER_B);
        out.println("  curl -s " + api + "/precheck/" + CLUSTER_B);
        out.println("  curl -s -X POST -H 'Content-Type: application/json' -d '{\"target\": \"" + CLUSTER_B
                + "\"}' " + api + "/switch");
        out.println("  curl -s " + api + "/status");
        out.flush();
        new CountDownLatch(1).await();
        return 0;
    }

    /**
     * Exits when start-up hangs. Seen when a broker fails to start: closing the half-started
     * PulsarService (TestBroker does so before rethrowing) can wait forever for a Jetty thread pool
     * that was never started, and the start-up error would otherwise leave the launcher hanging.
     */
    private Thread startWatchdog() {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(START_TIMEOUT_MS);
            } catch (InterruptedException started) {
                return;
            }
            System.out.flush();
            System.err.println("error: start-up did not finish within " + START_TIMEOUT_MS / 1000
                    + " s (see the errors logged above); exiting");
            System.exit(1);
        }, "launcher-start-watchdog");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Closes the fixture once, from main or from the shutdown hook. */
    private synchronized void closeCluster() {
        if (closed) {
            return;
        }
        closed = true;
        if (cluster != null) {
            System.err.println("Shutting down ZooKeeper, bookies and broker" + (options.processes ? " processes" : "")
                    + "...");
            cluster.close();
        }
    }

    /**
     * Jersey and OpenTelemetry log through java.util.logging, which is not bridged to log4j on this
     * classpath; keep only its severe messages.
     */
    private static void quietJulLogging() {
        java.util.logging.Logger root = java.util.logging.LogManager.getLogManager().getLogger("");
        root.setLevel(java.util.logging.Level.SEVERE);
        for (java.util.logging.Handler h : root.getHandlers()) {
            h.setLevel(java.util.logging.Level.SEVERE);
        }
    }
}
