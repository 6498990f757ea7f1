package io.bcswitch.client;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.pulsar.client.api.Authentication;
import org.apache.pulsar.client.api.AuthenticationDataProvider;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.KeyStoreParams;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * A Pulsar client {@link Authentication} plugin used the way Pulsar's own admin client uses it over HTTP: its HTTP
 * headers on every request (token, OAuth 2.0, basic, custom plugins), and its certificate and key, when it has TLS
 * data ({@code AuthenticationTls}, or a key store), as the client certificate of mutual TLS. Only this class touches
 * the Pulsar client API, so the client needs it on the class path only when a plugin is used.
 */
final class PulsarAuthentication implements AutoCloseable {
    private final Authentication auth;
    private final boolean owned;

    private PulsarAuthentication(Authentication auth, boolean owned) {
        this.auth = auth;
        this.owned = owned;
    }

    /** A plugin the caller built and started, and closes. */
    static PulsarAuthentication of(Authentication auth) {
        return new PulsarAuthentication(auth, false);
    }

    /** A plugin named by class and parameters (Pulsar's {@code authPlugin}, {@code authParams}), started here. */
    static PulsarAuthentication load(String pluginClassName, String authParams) {
        Authentication auth;
        try {
            auth = AuthenticationFactory.create(pluginClassName, authParams == null ? "" : authParams);
        } catch (PulsarClientException.UnsupportedAuthenticationException e) {
            throw new IllegalArgumentException("cannot load authentication plugin " + pluginClassName + ": "
                    + e.getMessage(), e);
        }
        try {
            auth.start();
        } catch (PulsarClientException e) {
            throw new IllegalArgumentException("cannot start authentication plugin " + pluginClassName + ": "
                    + e.getMessage(), e);
        }
        return new PulsarAuthentication(auth, true);
    }

    /** The plugin's headers for a request to {@code host}; none when it has no HTTP data. */
    Map<String, String> headers(String host) {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            AuthenticationDataProvider data = auth.getAuthData(host);
            if (data != null && data.hasDataForHttp()) {
                Set<Map.Entry<String, String>> h = auth.newRequestHeader(host, data, new LinkedHashMap<>());
                if (h != null) {
                    h.forEach(e -> out.put(e.getKey(), e.getValue()));
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot get credentials from " + auth.getClass().getName() + ": "
                    + e.getMessage(), e);
        }
        return out;
    }

    /** The plugin's client certificate, if it has one, as the client certificate of {@code tls}. */
    void applyTls(Tls tls, String host) {
        AuthenticationDataProvider data;
        try {
            data = auth.getAuthData(host);
        } catch (PulsarClientException e) {
            throw new IllegalArgumentException("cannot get TLS data from " + auth.getClass().getName() + ": "
                    + e.getMessage(), e);
        }
        if (data == null || !data.hasDataForTls()) {
            return;
        }
        KeyStoreParams ks = data.getTlsKeyStoreParams();
        if (ks != null && ks.getKeyStorePath() != null) {
            tls.keyStoreType = ks.getKeyStoreType() == null ? tls.keyStoreType : ks.getKeyStoreType();
            tls.keyStorePath = ks.getKeyStorePath();
            tls.keyStorePassword = ks.getKeyStorePassword();
        } else if (data.getTlsCertificateFilePath() != null && data.getTlsPrivateKeyFilePath() != null) {
            tls.certificateFilePath = data.getTlsCertificateFilePath();
            tls.keyFilePath = data.getTlsPrivateKeyFilePath();
        } else {
            throw new IllegalArgumentException(auth.getClass().getName() + " offers a TLS client certificate that is "
                    + "not in files or a key store; give it with tlsClientCertificate or tlsKeyStore");
        }
    }

    @Override
    public void close() {
        if (owned) {
            try {
                auth.close();
            } catch (IOException e) {
                // nothing is left to do with a plugin that cannot close
            }
        }
    }
}
