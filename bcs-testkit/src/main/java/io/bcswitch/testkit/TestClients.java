package io.bcswitch.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminBuilder;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.common.policies.data.TenantInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Pulsar clients and admin clients a {@link TestCluster} makes against its first broker, with the fixture's
 * client authentication, and closes together when the cluster closes.
 */
final class TestClients implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TestCluster.class);
    /** The longest a test client waits between reconnect attempts (see {@link #newClient()}). */
    private static final long CLIENT_MAX_BACKOFF_SECONDS = 3;
    /** How long {@link #close()} waits for the clients before the brokers are stopped anyway. */
    private static final long CLIENT_CLOSE_WAIT_SECONDS = 30;

    private final Supplier<? extends BrokerEndpoints> broker;
    private final String authPlugin;
    private final String authParams;
    private final List<AutoCloseable> created = new ArrayList<>();
    private PulsarAdmin internalAdmin;

    /**
     * @param broker     the broker the clients connect to, asked at each new client (it may have been restarted)
     * @param authPlugin the clients' authentication plugin class; null: none
     */
    TestClients(Supplier<? extends BrokerEndpoints> broker, String authPlugin, String authParams) {
        this.broker = broker;
        this.authPlugin = authPlugin;
        this.authParams = authParams;
    }

    PulsarClient newClient() throws PulsarClientException {
        var builder = PulsarClient.builder()
                .serviceUrl(broker.get().brokerServiceUrl())
                .ioThreads(1)
                .listenerThreads(1)
                // Pulsar's default lets a consumer that lost its broker (a restart, a topic load stuck on a dead
                // bookie cluster) wait up to a minute between attempts; tests that bring the broker or the bookies
                // back would then wait for the client, not for the product
                .maxBackoffInterval(CLIENT_MAX_BACKOFF_SECONDS, TimeUnit.SECONDS);
        if (authPlugin != null) {
            builder.authentication(authPlugin, authParams);
        }
        PulsarClient client = builder.build();
        created.add(client);
        return client;
    }

    PulsarAdmin newAdmin() throws PulsarClientException {
        PulsarAdmin admin = adminBuilder().build();
        created.add(admin);
        return admin;
    }

    /** The fixture's own admin client (tenants, namespaces), made once. */
    PulsarAdmin admin() throws PulsarClientException {
        if (internalAdmin == null) {
            internalAdmin = adminBuilder().build();
        }
        return internalAdmin;
    }

    /**
     * Creates tenant {@code tenant} (allowed on cluster {@code test}) and namespace {@code <tenant>/ns}.
     *
     * @return {@code <tenant>/ns}
     */
    String createTenant(String tenant) throws PulsarAdminException, PulsarClientException {
        admin().tenants().createTenant(tenant,
                TenantInfo.builder().allowedClusters(Set.of(BrokerProperties.CLUSTER_NAME)).build());
        String namespace = tenant + "/ns";
        admin().namespaces().createNamespace(namespace);
        return namespace;
    }

    private PulsarAdminBuilder adminBuilder() throws PulsarClientException {
        var builder = PulsarAdmin.builder().serviceHttpUrl(broker.get().webServiceUrl());
        if (authPlugin != null) {
            builder.authentication(authPlugin, authParams);
        }
        return builder;
    }

    /**
     * Closes the clients side by side, then the fixture's admin client: each client's close waits out its own event
     * loop's quiet period (about two seconds), and a test that made several (a reader client per attempt, say) paid
     * those one after another. They share nothing, so the order does not matter; the wait is bounded so that one
     * hung close cannot keep the brokers from stopping.
     */
    @Override
    public void close() {
        List<Thread> closing = new ArrayList<>();
        for (AutoCloseable client : created) {
            Thread t = new Thread(() -> closeQuietly("client", client), "test-cluster-client-close");
            t.setDaemon(true);
            t.start();
            closing.add(t);
        }
        created.clear();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLIENT_CLOSE_WAIT_SECONDS);
        for (Thread t : closing) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (t.isAlive()) {
                LOG.warn("A client did not close within {} s; going on with the brokers", CLIENT_CLOSE_WAIT_SECONDS);
            }
        }
        if (internalAdmin != null) {
            closeQuietly("admin", internalAdmin);
        }
    }

    /** Closes one part of the fixture; an error is logged, so that the rest is still closed. */
    static void closeQuietly(String what, AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            LOG.warn("Error closing {}", what, e);
        }
    }
}
