package io.bcswitch.client;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * Client for a broker's {@code /admin/v2/bookie-clusters} REST API. Any broker of the cluster serves
 * every call. Each method has an asynchronous form returning a future and a blocking form that throws
 * {@link BookieClustersAdminException} with the HTTP status and the API's reason.
 *
 * <pre>{@code
 * try (BookieClustersAdmin admin = BookieClustersAdmin.builder()
 *         .serviceUrl("http://broker-1:8080").authToken(token).build()) {
 *     admin.register("cluster-b", "zk+hierarchical://zk-b:2181/ledgers");
 *     Precheck p = admin.precheck("cluster-b");
 *     if (p.ok()) {
 *         admin.switchTo("cluster-b");
 *     }
 * }
 * }</pre>
 */
public final class BookieClustersAdmin implements AutoCloseable {
    public static final String BASE_PATH = "/admin/v2/bookie-clusters";

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final URI base;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final Supplier<Map<String, String>> headers;
    private final PulsarAuthentication pulsarAuth;

    private BookieClustersAdmin(Builder b) {
        String url = b.serviceUrl.endsWith("/") ? b.serviceUrl.substring(0, b.serviceUrl.length() - 1) : b.serviceUrl;
        this.base = URI.create(url + BASE_PATH);
        this.pulsarAuth = b.pulsarAuth;
        Supplier<Map<String, String>> given = b.headers;
        if (pulsarAuth != null) {
            String host = base.getHost();
            pulsarAuth.applyTls(b.tls, host);
            given = () -> {
                Map<String, String> all = pulsarAuth.headers(host);
                all.putAll(b.headers.get());
                return all;
            };
        }
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(b.connectTimeout);
        if (b.tls.configured()) {
            http.sslContext(b.tls.context());
        }
        this.http = http.build();
        this.requestTimeout = b.requestTimeout;
        this.headers = given;
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---- asynchronous API ----

    public CompletableFuture<List<BookieCluster>> listAsync() {
        return call("GET", "/", null, new TypeReference<List<BookieCluster>>() { });
    }

    public CompletableFuture<BookieCluster> getAsync(String name) {
        return call("GET", "/" + segment(name), null, new TypeReference<BookieCluster>() { });
    }

    public CompletableFuture<BookieCluster> registerAsync(String name, String metadataServiceUri) {
        return call("POST", "/" + segment(name), Map.of("metadataServiceUri", metadataServiceUri),
                new TypeReference<BookieCluster>() { });
    }

    public CompletableFuture<BookieCluster> unregisterAsync(String name) {
        return call("DELETE", "/" + segment(name), null, new TypeReference<BookieCluster>() { });
    }

    public CompletableFuture<Precheck> precheckAsync(String name) {
        return call("GET", "/precheck/" + segment(name), null, new TypeReference<Precheck>() { });
    }

    public CompletableFuture<SwitchOutcome> switchToAsync(String target) {
        return switchToAsync(target, false);
    }

    /**
     * Switches to {@code target}; with {@code allowUnknownSourceIds} even when the active cluster's metadata
     * cannot be read and nothing records which ledger ids it issued (the new range may then overlap them).
     */
    public CompletableFuture<SwitchOutcome> switchToAsync(String target, boolean allowUnknownSourceIds) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("target", target);
        if (allowUnknownSourceIds) {
            // sent only when set: brokers that do not know the field refuse it (400 unknown field)
            body.put("allowUnknownSourceIds", true);
        }
        return call("POST", "/switch", body, new TypeReference<SwitchOutcome>() { });
    }

    public CompletableFuture<Status> statusAsync() {
        return call("GET", "/status", null, new TypeReference<Status>() { });
    }

    public CompletableFuture<DrainReport> drainReportAsync(String cluster) {
        return call("GET", "/drain/" + segment(cluster), null, new TypeReference<DrainReport>() { });
    }

    /** Cleanup targets on {@code cluster}, or on every cluster that is not active when null. */
    public CompletableFuture<List<CleanupTarget>> cleanupTargetsAsync(String cluster) {
        return call("GET", "/cleanup-targets" + (cluster == null ? "" : "/" + segment(cluster)), null,
                new TypeReference<List<CleanupTarget>>() { });
    }

    public CompletableFuture<CleanupResult> cleanupAsync(String srcCluster, boolean dryRun, int maxDeletions,
                                                         boolean force) {
        return call("POST", "/cleanup", cleanupBody(srcCluster, dryRun, maxDeletions, force),
                new TypeReference<CleanupResult>() { });
    }

    private static Map<String, Object> cleanupBody(String srcCluster, boolean dryRun, int maxDeletions,
                                                   boolean force) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("srcCluster", srcCluster);
        body.put("dryRun", dryRun);
        body.put("maxDeletions", maxDeletions);
        body.put("force", force);
        return body;
    }

    public CompletableFuture<RollbackResult> rollbackAsync() {
        return call("POST", "/rollback", Map.of(), new TypeReference<RollbackResult>() { });
    }

    /** Runs the latest switch's finished migration again; completes with its state (phase BUILD). */
    public CompletableFuture<Migration> retryMigrationAsync() {
        return call("POST", "/migration/retry", Map.of(), new TypeReference<Migration>() { });
    }

    /** The pacing settings the answering broker uses now, its broker.conf's, and what is stored. */
    public CompletableFuture<Tuning> tuningAsync() {
        return call("GET", "/tuning", null, new TypeReference<Tuning>() { });
    }

    /**
     * Changes the pacing settings while the system runs: stored in the metadata store, applied by every broker
     * within seconds (a migration or cutover under way included). Completes with the answering broker's view.
     */
    public CompletableFuture<Tuning> setTuningAsync(Tuning.Change change) {
        return call("POST", "/tuning", change.fields, new TypeReference<Tuning>() { });
    }

    public CompletableFuture<BookieCluster> closeClientAsync(String cluster) {
        return call("POST", "/close-client/" + segment(cluster), Map.of(), new TypeReference<BookieCluster>() { });
    }

    /**
     * Checks the plugin's invariants (read only); with {@code deep}, copies are compared entry by entry, which
     * reads every copied ledger on both clusters (paced like the migration). The report lists every violation;
     * the call itself succeeds whether or not there are any.
     */
    public CompletableFuture<VerifyReport> verifyAsync(boolean deep) {
        return call("GET", "/verify" + (deep ? "?deep=true" : ""), null, new TypeReference<VerifyReport>() { });
    }

    /** Starts a drain report as an operation and completes at once with it (poll {@link #operationAsync}). */
    public CompletableFuture<Operation> startDrainReportAsync(String cluster) {
        return call("GET", "/drain/" + segment(cluster) + "?async=true", null, new TypeReference<Operation>() { });
    }

    /** Starts a cleanup as an operation and completes at once with it (poll {@link #operationAsync}). */
    public CompletableFuture<Operation> startCleanupAsync(String srcCluster, boolean dryRun, int maxDeletions,
                                                          boolean force) {
        return call("POST", "/cleanup?async=true", cleanupBody(srcCluster, dryRun, maxDeletions, force),
                new TypeReference<Operation>() { });
    }

    /** Starts a verify as an operation and completes at once with it (poll {@link #operationAsync}). */
    public CompletableFuture<Operation> startVerifyAsync(boolean deep) {
        return call("GET", "/verify?async=true" + (deep ? "&deep=true" : ""), null,
                new TypeReference<Operation>() { });
    }

    /** An operation started asynchronously, from any broker; its result once it ended. */
    public CompletableFuture<Operation> operationAsync(String id) {
        return call("GET", "/operations/" + segment(id), null, new TypeReference<Operation>() { });
    }

    /** The operations kept (the newest finished ones of the last day and those running), newest first. */
    public CompletableFuture<List<Operation>> operationsAsync() {
        return call("GET", "/operations", null, new TypeReference<List<Operation>>() { });
    }

    /** Each ledger of a persistent topic ({@code tenant/namespace/topic}) with its owning cluster, as JSON. */
    public CompletableFuture<JsonNode> topicLedgersAsync(String tenant, String namespace, String topic) {
        return call("GET", "/topics/" + segment(tenant) + "/" + segment(namespace) + "/" + segment(topic), null,
                new TypeReference<JsonNode>() { });
    }

    // ---- blocking API ----

    public List<BookieCluster> list() throws BookieClustersAdminException {
        return sync(listAsync());
    }

    public BookieCluster get(String name) throws BookieClustersAdminException {
        return sync(getAsync(name));
    }

    public BookieCluster register(String name, String metadataServiceUri) throws BookieClustersAdminException {
        return sync(registerAsync(name, metadataServiceUri));
    }

    public BookieCluster unregister(String name) throws BookieClustersAdminException {
        return sync(unregisterAsync(name));
    }

    public Precheck precheck(String name) throws BookieClustersAdminException {
        return sync(precheckAsync(name));
    }

    public SwitchOutcome switchTo(String target) throws BookieClustersAdminException {
        return sync(switchToAsync(target));
    }

    public SwitchOutcome switchTo(String target, boolean allowUnknownSourceIds) throws BookieClustersAdminException {
        return sync(switchToAsync(target, allowUnknownSourceIds));
    }

    public Status status() throws BookieClustersAdminException {
        return sync(statusAsync());
    }

    public DrainReport drainReport(String cluster) throws BookieClustersAdminException {
        return sync(drainReportAsync(cluster));
    }

    public List<CleanupTarget> cleanupTargets(String cluster) throws BookieClustersAdminException {
        return sync(cleanupTargetsAsync(cluster));
    }

    public CleanupResult cleanup(String srcCluster, boolean dryRun, int maxDeletions, boolean force)
            throws BookieClustersAdminException {
        return sync(cleanupAsync(srcCluster, dryRun, maxDeletions, force));
    }

    public RollbackResult rollback() throws BookieClustersAdminException {
        return sync(rollbackAsync());
    }

    public Migration retryMigration() throws BookieClustersAdminException {
        return sync(retryMigrationAsync());
    }

    public Tuning tuning() throws BookieClustersAdminException {
        return sync(tuningAsync());
    }

    public Tuning setTuning(Tuning.Change change) throws BookieClustersAdminException {
        return sync(setTuningAsync(change));
    }

    public BookieCluster closeClient(String cluster) throws BookieClustersAdminException {
        return sync(closeClientAsync(cluster));
    }

    public VerifyReport verify(boolean deep) throws BookieClustersAdminException {
        return sync(verifyAsync(deep));
    }

    public Operation startDrainReport(String cluster) throws BookieClustersAdminException {
        return sync(startDrainReportAsync(cluster));
    }

    public Operation startCleanup(String srcCluster, boolean dryRun, int maxDeletions, boolean force)
            throws BookieClustersAdminException {
        return sync(startCleanupAsync(srcCluster, dryRun, maxDeletions, force));
    }

    public Operation startVerify(boolean deep) throws BookieClustersAdminException {
        return sync(startVerifyAsync(deep));
    }

    public Operation operation(String id) throws BookieClustersAdminException {
        return sync(operationAsync(id));
    }

    public List<Operation> operations() throws BookieClustersAdminException {
        return sync(operationsAsync());
    }

    public JsonNode topicLedgers(String tenant, String namespace, String topic) throws BookieClustersAdminException {
        return sync(topicLedgersAsync(tenant, namespace, topic));
    }

    /** Plain JSON view of any value this client returns (what {@code --output json} prints). */
    public static String toJson(Object value) {
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Override
    public void close() {
        // the JDK HTTP client has no close before Java 21; its threads are daemons and idle out
        if (pulsarAuth != null) {
            pulsarAuth.close();
        }
    }

    // ---- plumbing ----

    private static String segment(String s) {
        Objects.requireNonNull(s, "name");
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private <T> CompletableFuture<T> call(String method, String path, Map<String, ?> body, TypeReference<T> type) {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + path)).timeout(requestTimeout)
                .header("Accept", "application/json");
        try {
            headers.get().forEach(req::header);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new BookieClustersAdminException(0,
                    "cannot build authentication headers: " + e.getMessage(), e));
        }
        if (body != null) {
            byte[] json;
            try {
                json = MAPPER.writeValueAsBytes(body);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
            req.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofByteArray(json));
        } else {
            req.method(method, HttpRequest.BodyPublishers.noBody());
        }
        JavaType javaType = MAPPER.getTypeFactory().constructType(type);
        return http.sendAsync(req.build(), HttpResponse.BodyHandlers.ofByteArray())
                .handle((resp, e) -> {
                    if (e != null) {
                        Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                        throw new CompletionException(new BookieClustersAdminException(0, "cannot reach " + base
                                + ": " + (c.getMessage() != null ? c.getMessage() : c.toString()), c));
                    }
                    return decode(resp, javaType);
                });
    }

    private static <T> T decode(HttpResponse<byte[]> resp, JavaType type) {
        int status = resp.statusCode();
        if (status / 100 != 2) {
            throw new CompletionException(new BookieClustersAdminException(status, reason(status, resp.body()), null));
        }
        try {
            return MAPPER.readValue(resp.body(), type);
        } catch (IOException e) {
            throw new CompletionException(new BookieClustersAdminException(status,
                    "unexpected response body: " + e.getMessage(), e));
        }
    }

    /**
     * The API's {@code {"reason": "..."}} (from earlier versions {@code {"error": "..."}}), or for non-JSON answers
     * (e.g. the broker's own 401) the status.
     */
    private static String reason(int status, byte[] body) {
        try {
            JsonNode n = MAPPER.readTree(body);
            if (n != null && n.hasNonNull("reason")) {
                return n.get("reason").asText();
            }
            if (n != null && n.hasNonNull("error")) {
                return n.get("error").asText();
            }
        } catch (IOException e) {
            // not JSON
        }
        return switch (status) {
            case 401 -> "authentication required (HTTP 401): configure a token or other credentials";
            case 403 -> "not authorized (HTTP 403): the bookie-clusters API requires a super-user role";
            case 404 -> "not found (HTTP 404): is the bookie-clusters servlet installed on this broker?";
            default -> "HTTP " + status;
        };
    }

    private static <T> T sync(CompletableFuture<T> f) throws BookieClustersAdminException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BookieClustersAdminException(0, "interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof CompletionException && c.getCause() != null) {
                c = c.getCause();
            }
            if (c instanceof BookieClustersAdminException a) {
                throw a;
            }
            throw new BookieClustersAdminException(0, String.valueOf(c), c);
        }
    }

    /** Builder; {@link #serviceUrl} is required. */
    public static final class Builder {
        private String serviceUrl;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(90);
        private Supplier<Map<String, String>> headers = Map::of;
        private final Tls tls = new Tls();
        private PulsarAuthentication pulsarAuth;

        /** The broker's web service URL, e.g. {@code http://broker-1:8080}. */
        public Builder serviceUrl(String url) {
            this.serviceUrl = url;
            return this;
        }

        /** Sends {@code Authorization: Bearer <token>} (Pulsar token authentication). */
        public Builder authToken(String token) {
            return headers(() -> Map.of("Authorization", "Bearer " + token));
        }

        /**
         * Authenticates with a Pulsar client authentication plugin, as {@code PulsarAdmin.builder().authentication}
         * does: its HTTP headers on every request, and its client certificate (e.g. {@code AuthenticationTls}) for
         * mutual TLS. The caller started it and closes it. Needs the Pulsar client on the class path.
         */
        public Builder authentication(org.apache.pulsar.client.api.Authentication authentication) {
            this.pulsarAuth = PulsarAuthentication.of(authentication);
            return this;
        }

        /**
         * Authenticates with a Pulsar client authentication plugin named by class and parameters (the
         * {@code authPlugin}/{@code authParams} of client.conf, e.g.
         * {@code org.apache.pulsar.client.impl.auth.AuthenticationToken} and {@code token:<jwt>}); the client starts
         * it and closes it on {@link BookieClustersAdmin#close()}. Needs the Pulsar client on the class path.
         */
        public Builder authentication(String authPluginClassName, String authParams) {
            this.pulsarAuth = PulsarAuthentication.load(authPluginClassName, authParams);
            return this;
        }

        /** Headers added to every request, computed per request (e.g. refreshed credentials). */
        public Builder headers(Supplier<Map<String, String>> headers) {
            this.headers = () -> new LinkedHashMap<>(headers.get());
            return this;
        }

        /**
         * Certificate authorities to trust, from a PEM file (Pulsar's {@code tlsTrustCertsFilePath}); without this or
         * {@link #tlsTrustStore}, the JDK's.
         */
        public Builder tlsTrustCertsFilePath(String pemPath) {
            tls.trustCertsFilePath = pemPath;
            return this;
        }

        /** Certificate authorities to trust, from a key store ({@code tlsTrustStoreType/Path/Password}). */
        public Builder tlsTrustStore(String type, String path, String password) {
            tls.trustStoreType = type;
            tls.trustStorePath = path;
            tls.trustStorePassword = password;
            return this;
        }

        /**
         * Mutual TLS with a certificate and its PKCS#8 private key from PEM files ({@code tlsCertificateFilePath},
         * {@code tlsKeyFilePath}); the broker authenticates the client by it ({@code AuthenticationTls}).
         */
        public Builder tlsClientCertificate(String certificatePemPath, String privateKeyPemPath) {
            tls.certificateFilePath = certificatePemPath;
            tls.keyFilePath = privateKeyPemPath;
            return this;
        }

        /** Mutual TLS with the key and certificate of a key store ({@code tlsKeyStoreType/Path/Password}). */
        public Builder tlsKeyStore(String type, String path, String password) {
            tls.keyStoreType = type;
            tls.keyStorePath = path;
            tls.keyStorePassword = password;
            return this;
        }

        /** Whether the broker's host name must match its certificate (default true). */
        public Builder tlsHostnameVerification(boolean verify) {
            tls.hostnameVerification = verify;
            return this;
        }

        /** Trusts any certificate ({@code tlsAllowInsecureConnection}): for tests only. */
        public Builder tlsAllowInsecureConnection(boolean allow) {
            tls.allowInsecureConnection = allow;
            return this;
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = d;
            return this;
        }

        /** Per-request timeout; the broker answers within 60 s, a switch usually within a second. */
        public Builder requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        public BookieClustersAdmin build() {
            if (serviceUrl == null || serviceUrl.isBlank()) {
                throw new IllegalArgumentException("serviceUrl is required (the broker's web service URL)");
            }
            return new BookieClustersAdmin(this);
        }
    }
}
