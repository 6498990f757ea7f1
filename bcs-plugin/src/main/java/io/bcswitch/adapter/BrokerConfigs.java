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
     * the broker's.
     */
    static ServiceConfiguration withMetadataServiceUri(ServiceConfiguration conf, String metadataServiceUri) {
        ServiceConfiguration copy = copy(conf);
        copy.setBookkeeperMetadataServiceUri(metadataServiceUri);
        return copy;
    }

    /** ServiceConfiguration has no copy constructor; its fields are plain settings. */
    private static ServiceConfiguration copy(ServiceConfiguration conf) {
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
        return copy;
    }

    /**
     * The broker's own bookie cluster as a URI that means the same thing wherever it is used. When
     * {@code bookkeeperMetadataServiceUri} is unset, Pulsar's implicit default
     * {@code metadata-store:<metadataStoreUrl>/ledgers} only works with the broker's metadata store
     * instance shared in (used on its own, the trailing path becomes a chroot, so the ledgers would be
     * looked for under {@code /ledgers/ledgers}). The equivalent stand-alone form is
     * {@code metadata-store:<metadataStoreUrl>}: the store's own root plus the driver's {@code /ledgers}.
     * Registering that form keeps the cluster reachable if the broker configuration changes later.
     */
    static String standaloneBookieUri(ServiceConfiguration conf) {
        if (conf.isBookkeeperMetadataStoreSeparated()) {
            return conf.getBookkeeperMetadataStoreUrl();
        }
        String store = conf.getMetadataStoreUrl();
        // Pulsar takes a bare "host:port" as ZooKeeper
        boolean hasScheme = store.matches("^(zk|etcd|rocksdb|memory|oxia)(\\+[a-z]+)?:.*");
        return "metadata-store:" + (hasScheme ? store : "zk:" + store);
    }

    /** True when the broker's BookKeeper client reaches {@code uri} through the broker's own metadata store. */
    static boolean isBrokerImplicitCluster(ServiceConfiguration conf, String uri) {
        return !conf.isBookkeeperMetadataStoreSeparated() && conf.getBookkeeperMetadataStoreUrl().equals(uri);
    }
}
