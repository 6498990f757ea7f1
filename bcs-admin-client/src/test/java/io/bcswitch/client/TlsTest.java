package io.bcswitch.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    private static final String PASS = "changeit";
    @TempDir
    static Path dir;
    private HttpsServer server;

    private static void keytool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", cmd) + ": " + out);
    }

    /** A key pair in {@code name}.p12 whose certificate the CA signed (with {@code san}), chain included. */
    private static void signed(String name, String san) throws Exception {
        keytool("-genkeypair", "-alias", name, "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
                "-validity", "2", "-keystore", name + ".p12", "-storetype", "PKCS12", "-storepass", PASS);
        keytool("-certreq", "-alias", name, "-keystore", name + ".p12", "-storepass", PASS, "-file", name + ".csr");
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", "ca.p12", "-storepass",
                PASS, "-infile", name + ".csr", "-outfile", name + ".crt", "-rfc", "-validity", "2"));
        if (san != null) {
            gencert.addAll(List.of("-ext", "SAN=" + san));
        }
        keytool(gencert.toArray(String[]::new));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", name + ".p12",
                "-storepass", PASS);
        keytool("-importcert", "-alias", name, "-file", name + ".crt", "-keystore", name + ".p12", "-storepass", PASS);
    }

    @BeforeAll
    static void certificates() throws Exception {
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=test-ca",
                "-ext", "bc:c", "-validity", "2", "-keystore", "ca.p12", "-storetype", "PKCS12", "-storepass", PASS);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", "ca.p12", "-storepass", PASS, "-file", "ca.pem");
        signed("server", "ip:127.0.0.1,dns:localhost");
        signed("elsewhere", "dns:broker.elsewhere.example");
        signed("client", null);
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", "trust.p12",
                "-storetype", "PKCS12", "-storepass", PASS);
        // the client's key as PEM files too (PKCS#8), as Pulsar's tlsCertificateFilePath / tlsKeyFilePath take them
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve("client.p12"))) {
            ks.load(in, PASS.toCharArray());
        }
        java.security.Key key = ks.getKey("client", PASS.toCharArray());
        Files.writeString(dir.resolve("client.key.pem"), "-----BEGIN PRIVATE KEY-----\n"
                + java.util.Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n");
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
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> BookieClustersAdmin.builder()
                .serviceUrl(url).tlsClientCertificate(path("client.crt"), path("ca.pem")).build());
        assertTrue(bad.getMessage().contains("PKCS#8"), bad.getMessage());
    }
}
