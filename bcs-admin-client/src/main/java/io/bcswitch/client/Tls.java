package io.bcswitch.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The TLS settings of the client, with the same meaning as Pulsar's client settings of the same names: which
 * certificate authorities to trust (PEM file or trust store; none: the JDK's), the client's own certificate and key
 * for mutual TLS (PEM files or key store), whether the broker's host name must match its certificate, and, for tests
 * only, trusting any certificate.
 */
final class Tls {
    String trustCertsFilePath;
    String trustStoreType = "PKCS12";
    String trustStorePath;
    String trustStorePassword;
    String certificateFilePath;
    String keyFilePath;
    String keyStoreType = "PKCS12";
    String keyStorePath;
    String keyStorePassword;
    boolean allowInsecureConnection;
    boolean hostnameVerification = true;

    /** Whether anything differs from the JDK's defaults (a plain https URL works without any setting). */
    boolean configured() {
        return trustCertsFilePath != null || trustStorePath != null || certificateFilePath != null
                || keyStorePath != null || allowInsecureConnection || !hostnameVerification;
    }

    SSLContext context() {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(keyManagers(), trustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    private KeyManager[] keyManagers() throws GeneralSecurityException, IOException {
        KeyStore ks;
        char[] password;
        if (keyStorePath != null) {
            password = chars(keyStorePassword);
            ks = load(keyStoreType, keyStorePath, password);
            if (password == null) {
                password = new char[0];
            }
        } else if (certificateFilePath != null || keyFilePath != null) {
            if (certificateFilePath == null || keyFilePath == null) {
                throw new IllegalArgumentException("mutual TLS needs both a certificate file and a key file");
            }
            password = new char[0];
            ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            List<Certificate> chain = certificates(certificateFilePath);
            ks.setKeyEntry("client", privateKey(keyFilePath), password, chain.toArray(Certificate[]::new));
        } else {
            return null;
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, password);
        return kmf.getKeyManagers();
    }

    private TrustManager[] trustManagers() throws GeneralSecurityException, IOException {
        if (allowInsecureConnection) {
            return new TrustManager[] {new Unverified(null)};
        }
        KeyStore ts = null;
        if (trustStorePath != null) {
            ts = load(trustStoreType, trustStorePath, chars(trustStorePassword));
        } else if (trustCertsFilePath != null) {
            ts = KeyStore.getInstance("PKCS12");
            ts.load(null, null);
            int i = 0;
            for (Certificate c : certificates(trustCertsFilePath)) {
                ts.setCertificateEntry("ca-" + i++, c);
            }
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts); // null: the JDK's certificate authorities
        List<TrustManager> out = new ArrayList<>();
        for (TrustManager tm : tmf.getTrustManagers()) {
            out.add(!hostnameVerification && tm instanceof X509TrustManager x ? new Unverified(x) : tm);
        }
        return out.toArray(TrustManager[]::new);
    }

    /** No password given: null, so that a store is read without checking its integrity (as keytool does). */
    private static char[] chars(String s) {
        return s == null ? null : s.toCharArray();
    }

    private static KeyStore load(String type, String path, char[] password) throws GeneralSecurityException,
            IOException {
        KeyStore ks = KeyStore.getInstance(type == null || type.isBlank() ? "PKCS12" : type);
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            ks.load(in, password);
        }
        return ks;
    }

    private static List<Certificate> certificates(String pemPath) throws IOException, CertificateException {
        try (InputStream in = Files.newInputStream(Path.of(pemPath))) {
            List<Certificate> certs = new ArrayList<>(CertificateFactory.getInstance("X.509").generateCertificates(in));
            if (certs.isEmpty()) {
                throw new CertificateException("no certificate in " + pemPath);
            }
            return certs;
        }
    }

    /** A PKCS#8 private key ({@code BEGIN PRIVATE KEY}), RSA or EC, from a PEM file. */
    private static PrivateKey privateKey(String pemPath) throws IOException, GeneralSecurityException {
        String pem = Files.readString(Path.of(pemPath));
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new GeneralSecurityException(pemPath + " holds no PKCS#8 private key (-----BEGIN PRIVATE KEY-----); "
                    + "convert it with: openssl pkcs8 -topk8 -nocrypt -in <key> -out <key.pk8.pem>");
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
        GeneralSecurityException last = null;
        for (String alg : new String[] {"RSA", "EC"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw new GeneralSecurityException("cannot read the private key in " + pemPath + ": " + last.getMessage(),
                last);
    }

    /**
     * Checks the chain (unless {@code delegate} is null: trust anything) without matching the host name: the engine
     * and socket variants are where the JDK matches it, and an extended trust manager is used as it is.
     */
    private static final class Unverified extends X509ExtendedTrustManager {
        private final X509TrustManager delegate;

        Unverified(X509TrustManager delegate) {
            this.delegate = delegate;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            if (delegate != null) {
                delegate.checkServerTrusted(chain, authType);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            if (delegate != null) {
                delegate.checkClientTrusted(chain, authType);
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            checkClientTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            checkClientTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate == null ? new X509Certificate[0] : delegate.getAcceptedIssuers();
        }
    }
}
