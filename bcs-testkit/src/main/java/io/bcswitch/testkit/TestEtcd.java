package io.bcswitch.testkit;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * One single-member etcd server (the {@code etcd} binary on the PATH, as Debian's {@code etcd-server} package installs
 * it) on fixture ports, with its data in a temporary directory removed at {@link #close()}. Pulsar reaches it through
 * {@link #metadataStoreUrl()}.
 */
public final class TestEtcd implements AutoCloseable {
    private final LocalServer server;
    private final int clientPort;

    private TestEtcd(LocalServer server, int clientPort) {
        this.server = server;
        this.clientPort = clientPort;
    }

    /** The {@code etcd} binary on the PATH, if there is one. */
    public static Optional<Path> binary() {
        return LocalServer.binary("etcd");
    }

    /** Starts etcd from {@code binary}; returns once it reports itself healthy (it has elected itself leader). */
    public static TestEtcd start(Path binary) throws Exception {
        int[] client = new int[1];
        LocalServer server = LocalServer.start("etcd", 2, (dir, ports) -> {
            client[0] = ports[0];
            String clientUrl = "http://127.0.0.1:" + ports[0];
            String peerUrl = "http://127.0.0.1:" + ports[1];
            return List.of(binary.toString(), "--name", "bcs-test", "--data-dir", dir.resolve("data").toString(),
                    "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
                    "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
                    "--initial-cluster", "bcs-test=" + peerUrl, "--initial-cluster-state", "new",
                    "--logger", "zap", "--log-outputs", "stderr");
        }, ports -> "http://127.0.0.1:" + ports[0] + "/health");
        return new TestEtcd(server, client[0]);
    }

    /** The loopback port clients connect to. */
    public int clientPort() {
        return clientPort;
    }

    /** The URL Pulsar's metadata store takes: {@code etcd:http://127.0.0.1:<port>}. */
    public String metadataStoreUrl() {
        return "etcd:http://127.0.0.1:" + clientPort;
    }

    /**
     * Deletes every key under {@code /} (all a Pulsar store writes), through etcd's JSON gateway: a fresh, empty store
     * for the next test without etcd's client library (which not every Pulsar line ships).
     */
    public void deleteAll() throws Exception {
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder();
        String body = "{\"key\":\"" + b64.encodeToString("/".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                + "\",\"range_end\":\"" + b64.encodeToString("0".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                + "\"}"; // ["/", "0"): every key that starts with "/"
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + clientPort
                                + "/v3/kv/deleterange")).timeout(java.time.Duration.ofSeconds(30))
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("etcd refused to delete its keys: " + r.statusCode() + " " + r.body());
        }
    }

    /**
     * Whether the Pulsar line on the class path has an etcd metadata store (Pulsar 5.0 has none): without it a test on
     * etcd has nothing to test.
     */
    public static boolean pulsarHasEtcdStore() {
        try {
            Class.forName("org.apache.pulsar.metadata.impl.EtcdMetadataStore", false, TestEtcd.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** The server's last log lines (for a failure's message). */
    public String logTail() {
        return server.logTail();
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
