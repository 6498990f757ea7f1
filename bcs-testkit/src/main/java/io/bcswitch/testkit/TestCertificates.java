package io.bcswitch.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A private certificate authority and certificates it signed, made with the JDK's keytool the way an operator makes
 * them for a test deployment, in one directory. Each signed name {@code n} has {@code n.p12} (PKCS#12 key store with
 * the key, its certificate and the CA; password {@link #PASSWORD}), {@code n.crt} (its certificate, PEM) and
 * {@code n.key.pem} (its private key, unencrypted PKCS#8 PEM, as Pulsar's {@code tlsKeyFilePath} takes it). The CA is
 * {@code ca.pem}, and {@code trust.p12} is a trust store holding only the CA.
 */
public final class TestCertificates {
    public static final String PASSWORD = "changeit";

    private final Path dir;

    private TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** A new CA in {@code dir}, with a server certificate {@code server} for 127.0.0.1 and localhost. */
    public static TestCertificates create(Path dir) throws Exception {
        TestCertificates c = new TestCertificates(dir);
        c.keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=test-ca",
                "-ext", "bc:c", "-validity", "2", "-keystore", "ca.p12", "-storetype", "PKCS12", "-storepass",
                PASSWORD);
        c.keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", "ca.p12", "-storepass", PASSWORD, "-file",
                "ca.pem");
        c.keytool("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", "trust.p12",
                "-storetype", "PKCS12", "-storepass", PASSWORD);
        return c.signed("server", "ip:127.0.0.1,dns:localhost");
    }

    /**
     * A key pair {@code name} whose certificate (subject {@code CN=name}; a client's role under Pulsar's TLS
     * authentication) the CA signed, with subject alternative names {@code san} (keytool syntax) or none.
     */
    public TestCertificates signed(String name, String san) throws Exception {
        keytool("-genkeypair", "-alias", name, "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
                "-validity", "2", "-keystore", name + ".p12", "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool("-certreq", "-alias", name, "-keystore", name + ".p12", "-storepass", PASSWORD, "-file",
                name + ".csr");
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", "ca.p12",
                "-storepass", PASSWORD, "-infile", name + ".csr", "-outfile", name + ".crt", "-rfc", "-validity", "2"));
        if (san != null) {
            gencert.addAll(List.of("-ext", "SAN=" + san));
        }
        keytool(gencert.toArray(String[]::new));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", name + ".p12",
                "-storepass", PASSWORD);
        keytool("-importcert", "-alias", name, "-file", name + ".crt", "-keystore", name + ".p12", "-storepass",
                PASSWORD);
        writeKeyPem(name);
        return this;
    }

    public Path caPem() {
        return dir.resolve("ca.pem");
    }

    public Path trustStore() {
        return dir.resolve("trust.p12");
    }

    public Path keyStore(String name) {
        return dir.resolve(name + ".p12");
    }

    public Path certificatePem(String name) {
        return dir.resolve(name + ".crt");
    }

    public Path keyPem(String name) {
        return dir.resolve(name + ".key.pem");
    }

    private void writeKeyPem(String name) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keyStore(name))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        Key key = ks.getKey(name, PASSWORD.toCharArray());
        Files.writeString(keyPem(name), "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n");
    }

    private void keytool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
