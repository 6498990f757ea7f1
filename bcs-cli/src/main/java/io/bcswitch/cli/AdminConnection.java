package io.bcswitch.cli;

import io.bcswitch.client.BookieClustersAdmin;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.pulsar.admin.cli.extensions.CommandExecutionContext;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Authentication;
import org.apache.pulsar.client.api.AuthenticationDataProvider;
import org.apache.pulsar.client.api.AuthenticationFactory;

/**
 * Builds the REST client from what pulsar-admin was started with: the admin URL ({@code --admin-url}
 * or {@code webServiceUrl}) and the same credentials pulsar-admin uses for its own calls
 * ({@code --auth-plugin}/{@code --auth-params} or {@code authPlugin}/{@code authParams}).
 */
final class AdminConnection {
    private AdminConnection() {
    }

    static BookieClustersAdmin open(CommandExecutionContext context) {
        PulsarAdmin admin = context.getPulsarAdmin();
        Authentication auth = authentication(admin, context.getConfiguration());
        return BookieClustersAdmin.builder()
                .serviceUrl(admin.getServiceUrl())
                .headers(() -> headers(auth))
                .build();
    }

    /**
     * pulsar-admin's own authentication object (so command-line overrides apply); PulsarAdmin's public
     * interface does not expose it, its implementation does. Falls back to the configuration file.
     */
    private static Authentication authentication(PulsarAdmin admin, Properties conf) {
        try {
            Method m = admin.getClass().getMethod("getAuth");
            Object auth = m.invoke(admin);
            if (auth instanceof Authentication a) {
                return a;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // fall through to the configuration file
        }
        String plugin = conf.getProperty("authPlugin", "");
        if (plugin.isBlank()) {
            return null;
        }
        try {
            return AuthenticationFactory.create(plugin, conf.getProperty("authParams", ""));
        } catch (Exception e) {
            throw new IllegalStateException("cannot load authPlugin " + plugin + ": " + e.getMessage(), e);
        }
    }

    private static Map<String, String> headers(Authentication auth) {
        Map<String, String> out = new LinkedHashMap<>();
        if (auth == null) {
            return out;
        }
        try {
            AuthenticationDataProvider data = auth.getAuthData();
            if (data != null && data.hasDataForHttp() && data.getHttpHeaders() != null) {
                for (Map.Entry<String, String> h : data.getHttpHeaders()) {
                    out.put(h.getKey(), h.getValue());
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot get credentials from " + auth.getClass().getName() + ": "
                    + e.getMessage(), e);
        }
        return out;
    }
}
