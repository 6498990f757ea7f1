package io.bcswitch.client;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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

    private final AdminHttp http;

    private BookieClustersAdmin(Builder b) {
        this.http = AdminHttp.connect(b);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---- asynchronous API ----

    public CompletableFuture<List<BookieCluster>> listAsync() {
        return http.call("GET", "/", null, new TypeReference<List<BookieCluster>>() { });
    }

    public CompletableFuture<BookieCluster> getAsync(String name) {
        return http.call("GET", "/" + AdminHttp.segment(name), null, new TypeReference<BookieCluster>() { });
    }

    public CompletableFuture<BookieCluster> registerAsync(String name, String metadataServiceUri) {
        return http.call("POST", "/" + AdminHttp.segment(name), Map.of("metadataServiceUri", metadataServiceUri),
                new TypeReference<BookieCluster>() { });
    }

    /**
     * Registers {@code name} with PIP-477's body: {@code status} may only be STANDBY (null: not sent), which is what
     * every registration is; the broker refuses any other status (400).
     */
    public CompletableFuture<BookieCluster> registerAsync(String name, String metadataServiceUri, String status) {
        return http.call("POST", "/" + AdminHttp.segment(name), RequestBodies.register(metadataServiceUri, status),
                new TypeReference<BookieCluster>() { });
    }

    /**
     * PIP-477's read-mode override: DUAL_READ, what every broker always does, is answered as set; the other modes
     * are refused (409) with what to use instead. Completes with the read mode in use.
     */
    public CompletableFuture<String> setReadModeAsync(String mode) {
        return http.call("POST", "/read-mode", Map.of("mode", mode), new TypeReference<Map<String, String>>() { })
                .thenApply(m -> m.get("readMode"));
    }

    public CompletableFuture<BookieCluster> unregisterAsync(String name) {
        return http.call("DELETE", "/" + AdminHttp.segment(name), null, new TypeReference<BookieCluster>() { });
    }

    public CompletableFuture<Precheck> precheckAsync(String name) {
        return http.call("GET", "/precheck/" + AdminHttp.segment(name), null, new TypeReference<Precheck>() { });
    }

    public CompletableFuture<SwitchOutcome> switchToAsync(String target) {
        return switchToAsync(target, false);
    }

    /**
     * Switches to {@code target}; with {@code allowUnknownSourceIds} even when the active cluster's metadata
     * cannot be read and nothing records which ledger ids it issued (the new range may then overlap them).
     */
    public CompletableFuture<SwitchOutcome> switchToAsync(String target, boolean allowUnknownSourceIds) {
        return http.call("POST", "/switch", RequestBodies.switchTo(target, allowUnknownSourceIds),
                new TypeReference<SwitchOutcome>() { });
    }

    public CompletableFuture<Status> statusAsync() {
        return http.call("GET", "/status", null, new TypeReference<Status>() { });
    }

    public CompletableFuture<DrainReport> drainReportAsync(String cluster) {
        return http.call("GET", "/drain/" + AdminHttp.segment(cluster), null, new TypeReference<DrainReport>() { });
    }

    /** Cleanup targets on {@code cluster}, or on every cluster that is not active when null. */
    public CompletableFuture<List<CleanupTarget>> cleanupTargetsAsync(String cluster) {
        return http.call("GET", "/cleanup-targets" + (cluster == null ? "" : "/" + AdminHttp.segment(cluster)), null,
                new TypeReference<List<CleanupTarget>>() { });
    }

    public CompletableFuture<CleanupResult> cleanupAsync(String srcCluster, boolean dryRun, int maxDeletions,
                                                         boolean force) {
        return http.call("POST", "/cleanup", RequestBodies.cleanup(srcCluster, dryRun, maxDeletions, force),
                new TypeReference<CleanupResult>() { });
    }

    public CompletableFuture<RollbackResult> rollbackAsync() {
        return http.call("POST", "/rollback", Map.of(), new TypeReference<RollbackResult>() { });
    }

    /** Runs the latest switch's finished migration again; completes with its state (phase BUILD). */
    public CompletableFuture<Migration> retryMigrationAsync() {
        return http.call("POST", "/migration/retry", Map.of(), new TypeReference<Migration>() { });
    }

    /** The pacing settings the answering broker uses now, its broker.conf's, and what is stored. */
    public CompletableFuture<Tuning> tuningAsync() {
        return http.call("GET", "/tuning", null, new TypeReference<Tuning>() { });
    }

    /**
     * Changes the pacing settings while the system runs: stored in the metadata store, applied by every broker
     * within seconds (a migration or cutover under way included). Completes with the answering broker's view.
     */
    public CompletableFuture<Tuning> setTuningAsync(Tuning.Change change) {
        return http.call("POST", "/tuning", change.fields, new TypeReference<Tuning>() { });
    }

    public CompletableFuture<BookieCluster> closeClientAsync(String cluster) {
        return http.call("POST", "/close-client/" + AdminHttp.segment(cluster), Map.of(),
                new TypeReference<BookieCluster>() { });
    }

    /**
     * Checks the plugin's invariants (read only); with {@code deep}, copies are compared entry by entry, which
     * reads every copied ledger on both clusters (paced like the migration). The report lists every violation;
     * the call itself succeeds whether or not there are any.
     */
    public CompletableFuture<VerifyReport> verifyAsync(boolean deep) {
        return http.call("GET", "/verify" + (deep ? "?deep=true" : ""), null, new TypeReference<VerifyReport>() { });
    }

    /** Starts a drain report as an operation and completes at once with it (poll {@link #operationAsync}). */
    public CompletableFuture<Operation> startDrainReportAsync(String cluster) {
        return http.call("GET", "/drain/" + AdminHttp.segment(cluster) + "?async=true", null,
                new TypeReference<Operation>() { });
    }

    /** Starts a cleanup as an operation and completes at once with it (poll {@link #operationAsync}). */
    public CompletableFuture<Operation> startCleanupAsync(String srcCluster, boolean dryRun, int maxDeletions,
                                                          boolean force) {
        return http.call("POST", "/cleanup?async=true", RequestBodies.cleanup(srcCluster, dryRun, maxDeletions, force),
                new TypeReference<Operation>() { });
    }

    /** Starts a verify as an operation and completes at once with it (poll {@link #operationAsync}). */
    public CompletableFuture<Operation> startVerifyAsync(boolean deep) {
        return http.call("GET", "/verify?async=true" + (deep ? "&deep=true" : ""), null,
                new TypeReference<Operation>() { });
    }

    /** An operation started asynchronously, from any broker; its result once it ended. */
    public CompletableFuture<Operation> operationAsync(String id) {
        return http.call("GET", "/operations/" + AdminHttp.segment(id), null, new TypeReference<Operation>() { });
    }

    /** The operations kept (the newest finished ones of the last day and those running), newest first. */
    public CompletableFuture<List<Operation>> operationsAsync() {
        return http.call("GET", "/operations", null, new TypeReference<List<Operation>>() { });
    }

    /** Each ledger of a persistent topic ({@code tenant/namespace/topic}) with its owning cluster, as JSON. */
    public CompletableFuture<JsonNode> topicLedgersAsync(String tenant, String namespace, String topic) {
        return http.call("GET", "/topics/" + AdminHttp.segment(tenant) + "/" + AdminHttp.segment(namespace) + "/"
                + AdminHttp.segment(topic), null,
                new TypeReference<JsonNode>() { });
    }

    // ---- blocking API ----

    public List<BookieCluster> list() throws BookieClustersAdminException {
        return AdminHttp.sync(listAsync());
    }

    public BookieCluster get(String name) throws BookieClustersAdminException {
        return AdminHttp.sync(getAsync(name));
    }

    public BookieCluster register(String name, String metadataServiceUri) throws BookieClustersAdminException {
        return AdminHttp.sync(registerAsync(name, metadataServiceUri));
    }

    public BookieCluster register(String name, String metadataServiceUri, String status)
            throws BookieClustersAdminException {
        return AdminHttp.sync(registerAsync(name, metadataServiceUri, status));
    }

    public String setReadMode(String mode) throws BookieClustersAdminException {
        return AdminHttp.sync(setReadModeAsync(mode));
    }

    public BookieCluster unregister(String name) throws BookieClustersAdminException {
        return AdminHttp.sync(unregisterAsync(name));
    }

    public Precheck precheck(String name) throws BookieClustersAdminException {
        return AdminHttp.sync(precheckAsync(name));
    }

    public SwitchOutcome switchTo(String target) throws BookieClustersAdminException {
        return AdminHttp.sync(switchToAsync(target));
    }

    public SwitchOutcome switchTo(String target, boolean allowUnknownSourceIds) throws BookieClustersAdminException {
        return AdminHttp.sync(switchToAsync(target, allowUnknownSourceIds));
    }

    public Status status() throws BookieClustersAdminException {
        return AdminHttp.sync(statusAsync());
    }

    public DrainReport drainReport(String cluster) throws BookieClustersAdminException {
        return AdminHttp.sync(drainReportAsync(cluster));
    }

    public List<CleanupTarget> cleanupTargets(String cluster) throws BookieClustersAdminException {
        return AdminHttp.sync(cleanupTargetsAsync(cluster));
    }

    public CleanupResult cleanup(String srcCluster, boolean dryRun, int maxDeletions, boolean force)
            throws BookieClustersAdminException {
        return AdminHttp.sync(cleanupAsync(srcCluster, dryRun, maxDeletions, force));
    }

    public RollbackResult rollback() throws BookieClustersAdminException {
        return AdminHttp.sync(rollbackAsync());
    }

    public Migration retryMigration() throws BookieClustersAdminException {
        return AdminHttp.sync(retryMigrationAsync());
    }

    public Tuning tuning() throws BookieClustersAdminException {
        return AdminHttp.sync(tuningAsync());
    }

    public Tuning setTuning(Tuning.Change change) throws BookieClustersAdminException {
        return AdminHttp.sync(setTuningAsync(change));
    }

    public BookieCluster closeClient(String cluster) throws BookieClustersAdminException {
        return AdminHttp.sync(closeClientAsync(cluster));
    }

    public VerifyReport verify(boolean deep) throws BookieClustersAdminException {
        return AdminHttp.sync(verifyAsync(deep));
    }

    public Operation startDrainReport(String cluster) throws BookieClustersAdminException {
        return AdminHttp.sync(startDrainReportAsync(cluster));
    }

    public Operation startCleanup(String srcCluster, boolean dryRun, int maxDeletions, boolean force)
            throws BookieClustersAdminException {
        return AdminHttp.sync(startCleanupAsync(srcCluster, dryRun, maxDeletions, force));
    }

    public Operation startVerify(boolean deep) throws BookieClustersAdminException {
        return AdminHttp.sync(startVerifyAsync(deep));
    }

    public Operation operation(String id) throws BookieClustersAdminException {
        return AdminHttp.sync(operationAsync(id));
    }

    public List<Operation> operations() throws BookieClustersAdminException {
        return AdminHttp.sync(operationsAsync());
    }

    public JsonNode topicLedgers(String tenant, String namespace, String topic) throws BookieClustersAdminException {
        return AdminHttp.sync(topicLedgersAsync(tenant, namespace, topic));
    }

    /** Plain JSON view of any value this client returns (what {@code --output json} prints). */
    public static String toJson(Object value) {
        return AdminHttp.toJson(value);
    }

    @Override
    public void close() {
        http.close();
    }

    /** Builder; {@link #serviceUrl} is required. */
    public static final class Builder {
        // read by AdminHttp.connect, which turns them into the connection
        String serviceUrl;
        Duration connectTimeout = Duration.ofSeconds(10);
        Duration requestTimeout = Duration.ofSeconds(90);
        Duration operationTimeout = Duration.ofHours(1);
        Supplier<Map<String, String>> headers = Map::of;
        final Tls tls = new Tls();
        PulsarAuthentication pulsarAuth;

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

        /**
         * Longest a drain report, cleanup or verify that became an operation on the broker (it ran longer than the
         * broker's {@code operationAfterSeconds}) is followed before the call fails naming it (default 1 hour).
         */
        public Builder operationTimeout(Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("operationTimeout must be positive: " + d);
            }
            this.operationTimeout = d;
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
