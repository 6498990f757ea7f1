package io.bcswitch.launcher;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * What the demo runs on: ZooKeeper, bookie clusters {@code cluster-a} and {@code cluster-b} and one broker with the
 * plugin writing to {@code cluster-a}, either all in this JVM ({@link InProcessDemoCluster}) or each a process of
 * its own started from an installation ({@link ProcessDemoCluster}). Closing it stops everything it started.
 */
interface DemoCluster extends AutoCloseable {

    /** Creates tenant {@code tenant} and its namespace; returns the namespace. */
    String createTenant(String tenant) throws Exception;

    /** An admin client of the broker; closed with the cluster. */
    PulsarAdmin newAdmin() throws Exception;

    /** A client of the broker; closed with the cluster. */
    PulsarClient newClient() throws Exception;

    String brokerServiceUrl();

    String webServiceUrl();

    /** The bookie clusters, cluster-a (the broker's) first. */
    List<String> bookieClusters();

    /** The metadata service URI of bookie cluster {@code name}, as an operator registers it. */
    String metadataServiceUri(String name);

    /** Ids of the ledgers bookie cluster {@code name} holds now (read from its ledger manager). */
    Set<Long> ledgerIds(String name) throws Exception;

    /** Says what runs where (the processes and their logs, for a process cluster); nothing for one in-process. */
    void describe(PrintStream out);

    @Override
    void close();
}
