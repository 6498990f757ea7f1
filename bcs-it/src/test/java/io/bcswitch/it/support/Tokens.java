package io.bcswitch.it.support;

import io.jsonwebtoken.SignatureAlgorithm;
import java.util.Base64;
import java.util.Optional;
import java.util.Properties;
import javax.crypto.SecretKey;
import org.apache.pulsar.broker.authentication.utils.AuthTokenUtils;

/**
 * Token authentication and authorization for a test cluster, configured as an operator would in
 * broker.conf: a secret key, super-user role {@code admin} (also used by the brokers themselves), a proxy role
 * {@code proxy}, and tokens for those and for an ordinary role {@code app}.
 */
public final class Tokens {
    public static final String TOKEN_AUTH_PLUGIN = "org.apache.pulsar.client.impl.auth.AuthenticationToken";

    private final SecretKey key = AuthTokenUtils.createSecretKey(SignatureAlgorithm.HS256);
    public final String admin = token("admin");
    public final String app = token("app");
    /** The role of a Pulsar proxy (broker.conf's proxyRoles): acts for the client it names in each request. */
    public final String proxy = token("proxy");

    public String token(String role) {
        return AuthTokenUtils.createToken(key, role, Optional.empty());
    }

    /** {@code builder} with token authentication and authorization on, its own clients using the admin token. */
    public io.bcswitch.testkit.TestCluster.Builder secure(io.bcswitch.testkit.TestCluster.Builder builder) {
        return builder.brokerConfig(this::brokerConfig).clientAuthentication(TOKEN_AUTH_PLUGIN, "token:" + admin);
    }

    /** Broker properties enabling token authentication and authorization. */
    public void brokerConfig(Properties p) {
        p.setProperty("authenticationEnabled", "true");
        p.setProperty("authorizationEnabled", "true");
        p.setProperty("authenticationProviders", "org.apache.pulsar.broker.authentication.AuthenticationProviderToken");
        p.setProperty("tokenSecretKey", "data:;base64," + Base64.getEncoder().encodeToString(key.getEncoded()));
        // the proxy's role is a super-user as well: a request it forwards is then allowed only when the client it
        // acts for is one too (Pulsar checks both)
        p.setProperty("superUserRoles", "admin,proxy");
        p.setProperty("proxyRoles", "proxy");
        p.setProperty("brokerClientAuthenticationPlugin", TOKEN_AUTH_PLUGIN);
        p.setProperty("brokerClientAuthenticationParameters", "token:" + admin);
    }
}
