package io.bcswitch.cli;

import io.bcswitch.client.BookieClustersAdmin;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.pulsar.admin.cli.extensions.CommandExecutionContext;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.internal.PulsarAdminImpl;
import org.apache.pulsar.client.impl.auth.AuthenticationDisabled;
import org.apache.pulsar.client.impl.conf.ClientConfigurationData;
import org.apache.pulsar.client.impl.conf.ConfigurationDataUtils;

/**
 * Builds the REST client from what pulsar-admin resolved for its own calls: client.conf with the command-line
 * overrides applied ({@code --admin-url}, {@code --auth-plugin}/{@code --auth-params}, {@code --tls-*}). That is the
 * admin URL, the authentication plugin (pulsar-admin's own, already started: its headers, and its client certificate
 * for mutual TLS), the trusted certificate authorities (PEM file or trust store), the client's certificate and key
 * (PEM files or key store), host name verification (pulsar-admin's default: off) and insecure trust.
 */
final class AdminConnection {
    private AdminConnection() {
    }

    static BookieClustersAdmin open(CommandExecutionContext context) {
        PulsarAdmin admin = context.getPulsarAdmin();
        BookieClustersAdmin.Builder b = BookieClustersAdmin.builder().serviceUrl(admin.getServiceUrl());
        // pulsar-admin's PulsarAdmin is always this implementation; anything else (an embedding tool) gets
        // client.conf as written
        ClientConfigurationData conf = admin instanceof PulsarAdminImpl impl ? impl.getClientConfigData()
                : fromFile(context.getConfiguration());
        if (conf.getAuthentication() != null && !(conf.getAuthentication() instanceof AuthenticationDisabled)) {
            b.authentication(conf.getAuthentication());
        } else if (!blank(conf.getAuthPluginClassName())) {
            b.authentication(conf.getAuthPluginClassName(), conf.getAuthParams());
        }
        if (conf.isUseKeyStoreTls()) {
            if (!blank(conf.getTlsTrustStorePath())) {
                b.tlsTrustStore(conf.getTlsTrustStoreType(), conf.getTlsTrustStorePath(),
                        conf.getTlsTrustStorePassword());
            }
            if (!blank(conf.getTlsKeyStorePath())) {
                b.tlsKeyStore(conf.getTlsKeyStoreType(), conf.getTlsKeyStorePath(), conf.getTlsKeyStorePassword());
            }
        } else {
            if (!blank(conf.getTlsTrustCertsFilePath())) {
                b.tlsTrustCertsFilePath(conf.getTlsTrustCertsFilePath());
            }
            if (!blank(conf.getTlsCertificateFilePath()) && !blank(conf.getTlsKeyFilePath())) {
                b.tlsClientCertificate(conf.getTlsCertificateFilePath(), conf.getTlsKeyFilePath());
            }
        }
        return b.tlsHostnameVerification(conf.isTlsHostnameVerificationEnable())
                .tlsAllowInsecureConnection(conf.isTlsAllowInsecureConnection())
                .build();
    }

    /** client.conf read the way pulsar-admin reads it (same keys, same defaults). */
    private static ClientConfigurationData fromFile(Properties file) {
        Map<String, Object> values = new HashMap<>();
        file.stringPropertyNames().forEach(k -> values.put(k, file.getProperty(k)));
        // keys of client.conf that are not client settings (webServiceUrl, cliExtensionsDirectory, ...) are ignored
        values.keySet().retainAll(java.util.Set.of("authPluginClassName", "authParams", "useKeyStoreTls",
                "tlsTrustStoreType", "tlsTrustStorePath", "tlsTrustStorePassword", "tlsKeyStoreType", "tlsKeyStorePath",
                "tlsKeyStorePassword", "tlsTrustCertsFilePath", "tlsCertificateFilePath", "tlsKeyFilePath",
                "tlsHostnameVerificationEnable", "tlsAllowInsecureConnection"));
        if (!blank(file.getProperty("authPlugin"))) {
            values.put("authPluginClassName", file.getProperty("authPlugin"));
        }
        if (file.getProperty("tlsEnableHostnameVerification") != null) {
            values.put("tlsHostnameVerificationEnable", file.getProperty("tlsEnableHostnameVerification"));
        }
        return ConfigurationDataUtils.loadData(values, new ClientConfigurationData(), ClientConfigurationData.class);
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
