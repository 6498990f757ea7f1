package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.client.BookieCluster;
import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.BookieClustersAdminException;
import io.bcswitch.it.support.ClusterTestBase;
import io.bcswitch.it.support.PulsarAdminCli;
import io.bcswitch.it.support.PulsarAdminCli.Result;
import io.bcswitch.it.support.Registry;
import io.bcswitch.it.support.Tokens;
import io.bcswitch.testkit.TestCertificates;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker's web service behind TLS with a private CA (made in the test), token and TLS client-certificate
 * authentication on, authorization on: the Java client and the pulsar-admin extension reach the bookie-clusters API
 * over HTTPS with a token (given as a header, as an authentication plugin, in client.conf or on pulsar-admin's
 * command line) and with mutual TLS ({@code AuthenticationTls}); without trust in the CA or without a super-user's
 * credentials they are refused, and a refused call changes nothing. The Java client goes first (the cluster is still
 * on cluster-a); pulsar-admin ends with a switch.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TlsAuthenticationTest extends ClusterTestBase {
    private static final Tokens TOKENS = new Tokens();
    private static final String TLS_AUTH_PLUGIN = "org.apache.pulsar.client.impl.auth.AuthenticationTls";

    @TempDir
    static Path certDir;
    private static TestCertificates certs;

    @BeforeAll
    static void start() throws Exception {
        // "operator" is a super-user by its certificate, "app" an ordinary role
        certs = TestCertificates.create(certDir).signed("operator", null).signed("app", null);
        cluster = TOKENS.secure(twoBookieClusters())
                .brokerConfig(p -> {
                    p.setProperty("webServicePortTls", "0");
                    p.setProperty("tlsCertificateFilePath", certs.certificatePem("server").toString());
                    p.setProperty("tlsKeyFilePath", certs.keyPem("server").toString());
                    p.setProperty("tlsTrustCertsFilePath", certs.caPem().toString());
                    p.setProperty("authenticationProviders", p.getProperty("authenticationProviders")
                            + ",org.apache.pulsar.broker.authentication.AuthenticationProviderTls");
                    p.setProperty("superUserRoles", "admin,operator");
                })
                .start();
    }

    private static Map<String, String> snapshot() throws Exception {
        return Registry.registryAndManagedLedgers(cluster);
    }

    private static String tlsAuthParams(String name) {
        return "tlsCertFile:" + certs.certificatePem(name) + ",tlsKeyFile:" + certs.keyPem(name);
    }

    private static BookieClustersAdmin.Builder https() {
        return BookieClustersAdmin.builder().serviceUrl(cluster.broker(0).webServiceUrlTls())
                .tlsTrustCertsFilePath(certs.caPem().toString());
    }

    private static List<String> names(BookieClustersAdmin a) throws BookieClustersAdminException {
        return a.list().stream().map(BookieCluster::name).toList();
    }

    @Test
    @Order(1)
    void theJavaClientOverTlsWithATokenOrAClientCertificate() throws Exception {
        try (var a = https().authToken(TOKENS.admin).build()) {
            assertEquals(List.of("cluster-a"), names(a));
        }
        try (var a = https().authentication(Tokens.TOKEN_AUTH_PLUGIN, "token:" + TOKENS.admin).build()) {
            assertEquals("cluster-a", a.status().activeCluster());
        }
        // the broker's CA from a trust store, and mutual TLS with the operator's certificate (no token)
        try (var a = BookieClustersAdmin.builder().serviceUrl(cluster.broker(0).webServiceUrlTls())
                .tlsTrustStore("PKCS12", certs.trustStore().toString(), TestCertificates.PASSWORD)
                .authentication(TLS_AUTH_PLUGIN, tlsAuthParams("operator")).build()) {
            assertEquals(List.of("cluster-a"), names(a));
        }
        try (var a = https().tlsClientCertificate(certs.certificatePem("operator").toString(),
                certs.keyPem("operator").toString()).build()) {
            assertEquals(List.of("cluster-a"), names(a));
        }

        Map<String, String> before = snapshot();
        String uriB = cluster.bookieCluster("cluster-b").metadataServiceUri();
        try (var a = https().authentication(TLS_AUTH_PLUGIN, tlsAuthParams("app")).build()) {
            BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                    () -> a.register("cluster-b", uriB));
            assertEquals(403, e.status(), e.getMessage());
        }
        try (var a = https().build()) {
            assertEquals(401, assertThrows(BookieClustersAdminException.class, () -> a.register("cluster-b", uriB))
                    .status());
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(cluster.broker(0).webServiceUrlTls())
                .authToken(TOKENS.admin).build()) {
            BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class,
                    () -> a.register("cluster-b", uriB));
            assertEquals(0, e.status(), "a CA the client does not trust: no connection; " + e.getMessage());
        }
        assertEquals(before, snapshot(), "refused calls change nothing");
    }

    @Test
    @Order(2)
    void pulsarAdminOverTlsUsesItsOwnResolvedSettingsIncludingTheCommandLine() throws Exception {
        String https = cluster.broker(0).webServiceUrlTls();
        String ca = certs.caPem().toString();
        Map<String, String> before = snapshot();
        // client.conf points at the plain port and has no credentials: everything comes from the command line
        try (PulsarAdminCli bare = new PulsarAdminCli(cluster.broker(0).webServiceUrl(), Map.of())) {
            Result r = bare.run("--admin-url", https, "--tls-trust-cert-path", ca, "--auth-plugin",
                    Tokens.TOKEN_AUTH_PLUGIN, "--auth-params", "token:" + TOKENS.admin, "bookie-clusters", "list");
            assertEquals(0, r.exit(), r.all());
            assertTrue(r.stdout().lines().anyMatch(l -> l.startsWith("cluster-a") && l.contains("ACTIVE")), r.all());
            Result noTrust = bare.run("--admin-url", https, "--auth-plugin", Tokens.TOKEN_AUTH_PLUGIN,
                    "--auth-params", "token:" + TOKENS.admin, "bookie-clusters", "list");
            assertEquals(1, noTrust.exit(), noTrust.all());
        }
        // client.conf with a super-user token; the command line's ordinary token wins, as for pulsar-admin itself
        try (PulsarAdminCli conf = new PulsarAdminCli(https, Map.of("tlsTrustCertsFilePath", ca,
                "authPlugin", Tokens.TOKEN_AUTH_PLUGIN, "authParams", "token:" + TOKENS.admin))) {
            Result app = conf.run("--auth-params", "token:" + TOKENS.app, "bookie-clusters", "register", "cluster-b",
                    "-u", cluster.bookieCluster("cluster-b").metadataServiceUri());
            assertEquals(1, app.exit(), app.all());
            assertTrue(app.all().contains("super-user"), app.all());
            assertEquals(before, snapshot(), "a refused command changes nothing");
            Result admin = conf.run("bookie-clusters", "status");
            assertEquals(0, admin.exit(), admin.all());
        }
        // mutual TLS from client.conf (AuthenticationTls): register and switch
        try (PulsarAdminCli mtls = new PulsarAdminCli(https, Map.of("tlsTrustCertsFilePath", ca,
                "authPlugin", TLS_AUTH_PLUGIN, "authParams", tlsAuthParams("operator")))) {
            Result reg = mtls.run("bookie-clusters", "register", "cluster-b", "-u",
                    cluster.bookieCluster("cluster-b").metadataServiceUri());
            assertEquals(0, reg.exit(), reg.all());
            Result sw = mtls.run("bookie-clusters", "switch", "cluster-b", "--yes");
            assertEquals(0, sw.exit(), sw.all());
            try (var a = https().authToken(TOKENS.admin).build()) {
                assertEquals("cluster-b", a.status().activeCluster());
            }
        }
    }
}
