package io.bcswitch.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.bcswitch.testkit.TestCertificates;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client against an HTTPS server whose certificate a private CA (made here with keytool) signed: trusted by the
 * CA's PEM file or a trust store, refused otherwise; a name mismatch refused unless hostname verification is off;
 * mutual TLS with the client's key store or PEM files.
 */
class TlsTest {
    private static final String PASS = TestCertificates.PASSWORD;
    @TempDir
    static Path dir;
    private HttpsServer server;

    @BeforeAll
    static void certificates() throws Exception {
        TestCertificates.create(dir).signed("elsewhere", "dns:broker.elsewhere.example").signed("client", null);
    }

    private String start(String keyStore, boolean needClientAuth) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(keyStore))) {
            ks.load(in, PASS.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASS.toCharArray());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve("trust.p12"))) {
            trust.load(in, PASS.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(ctx) {
            @Override
            public void configure(HttpsParameters params) {
                javax.net.ssl.SSLParameters p = ctx.getDefaultSSLParameters();
                p.setNeedClientAuth(needClientAuth);
                params.setSSLParameters(p);
            }
        });
        server.createContext("/", ex -> {
            byte[] out = "[]".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
            ex.close();
        });
        server.start();
        return "https://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    @Test
    void aPrivateCaIsTrustedFromItsPemFileOrATrustStoreAndOnlyThen() throws Exception {
        String url = start("server.p12", false);
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem")).build()) {
            assertEquals(List.of(), a.list());
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustStore("PKCS12", path("trust.p12"), PASS)
                .build()) {
            assertEquals(List.of(), a.list());
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).build()) {
            BookieClustersAdminException e = assertThrows(BookieClustersAdminException.class, a::list);
            assertTrue(e.getMessage().contains("cannot reach"), e.getMessage());
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsAllowInsecureConnection(true).build()) {
            assertEquals(List.of(), a.list(), "tests only: anything is trusted");
        }
    }

    @Test
    void aCertificateForAnotherHostIsRefusedUnlessHostnameVerificationIsOff() throws Exception {
        String url = start("elsewhere.p12", false);
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem")).build()) {
            assertThrows(BookieClustersAdminException.class, a::list);
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem"))
                .tlsHostnameVerification(false).build()) {
            assertEquals(List.of(), a.list(), "the chain is still checked, only the name is not");
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsHostnameVerification(false).build()) {
            assertThrows(BookieClustersAdminException.class, a::list, "a CA the client does not trust: refused");
        }
    }

    @Test
    void mutualTlsWithAKeyStoreOrPemFilesAndRefusedWithout() throws Exception {
        String url = start("server.p12", true);
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem"))
                .tlsKeyStore("PKCS12", path("client.p12"), PASS).build()) {
            assertEquals(List.of(), a.list());
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem"))
                .tlsClientCertificate(path("client.crt"), path("client.key.pem")).build()) {
            assertEquals(List.of(), a.list());
        }
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem")).build()) {
            assertThrows(BookieClustersAdminException.class, a::list, "no client certificate");
        }
        // Pulsar's TLS authentication plugin, as pulsar-admin would be given it (authPlugin, authParams)
        try (var a = BookieClustersAdmin.builder().serviceUrl(url).tlsTrustCertsFilePath(path("ca.pem"))
                .authentication("org.apache.pulsar.client.impl.auth.AuthenticationTls", "tlsCertFile:"
                        + path("client.crt") + ",tlsKeyFile:" + path("client.key.pem")).build()) {
            assertEquals(List.of(), a.list());
        }
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> BookieClustersAdmin.builder()
                .serviceUrl(url).tlsClientCertificate(path("client.crt"), path("ca.pem")).build());
        assertTrue(bad.getMessage().contains("PKCS#8"), bad.getMessage());
    }
}
