package io.bcswitch.adapter;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.apache.pulsar.broker.ServiceConfiguration;

/** Broker-configuration helpers for building per-cluster BookKeeper clients the way the broker does. */
final class BrokerConfigs {
    private BrokerConfigs() {
    }

    /**
     * A copy of {@code conf} whose BookKeeper client points at {@code metadataServiceUri}. Every other
     * client setting (timeouts, TLS, auth, placement, throttling, {@code bookkeeper_*} overrides) stays
     * the broker's. ServiceConfiguration has no copy constructor; its fields are plain settings.
     */
    static ServiceConfiguration withMetadataServiceUri(ServiceConfiguration conf, String metadataServiceUri) {
        ServiceConfiguration copy = new ServiceConfiguration();
        for (Class<?> c = ServiceConfiguration.class; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                int m = f.getModifiers();
                if (Modifier.isStatic(m) || Modifier.isFinal(m)) {
                    continue;
                }
                try {
                    f.setAccessible(true);
                    f.set(copy, f.get(conf));
                } catch (IllegalAccessException | RuntimeException e) {
                    throw new IllegalStateException("cannot copy broker setting " + f.getName(), e);
                }
            }
        }
        copy.setBookkeeperMetadataServiceUri(metadataServiceUri);
        return copy;
    }

    /** True when the broker's BookKeeper client reaches {@code uri} through the broker's own metadata store. */
    static boolean isBrokerImplicitCluster(ServiceConfiguration conf, String uri) {
        return !conf.isBookkeeperMetadataStoreSeparated() && conf.getBookkeeperMetadataStoreUrl().equals(uri);
    }
}
