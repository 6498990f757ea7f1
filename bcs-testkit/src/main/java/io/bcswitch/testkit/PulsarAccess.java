package io.bcswitch.testkit;

import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/** How a test or a tool reaches the brokers and bookie clusters of either fixture (in-process or of processes). */
public interface PulsarAccess extends AutoCloseable {

    /** Broker {@code i}, where it is reached. */
    BrokerEndpoints broker(int i);

    /** The metadata service URI of bookie cluster {@code name}, as an operator registers it. */
    String metadataServiceUri(String bookieCluster);

    /** A client against broker 0; closed with the fixture if the caller has not done so. */
    PulsarClient newClient() throws PulsarClientException;

    /** An admin client against broker 0; closed with the fixture if the caller has not done so. */
    PulsarAdmin newAdmin() throws PulsarClientException;

    /** Creates tenant {@code tenant} and namespace {@code <tenant>/ns}; returns the namespace. */
    String createTenant(String tenant) throws PulsarAdminException, PulsarClientException;

    /** Stops everything the fixture started and deletes its temporary files. */
    @Override
    void close();
}
