package io.bcswitch.adapter;

import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.schema.BcsRoutedSchemaStorage;
import org.apache.pulsar.common.protocol.schema.SchemaStorage;
import org.apache.pulsar.broker.service.schema.SchemaStorageFactory;

/**
 * Schema storage whose ledgers follow the bookie-cluster registry:
 * {@code schemaRegistryStorageClassName=io.bcswitch.adapter.RoutedSchemaStorageFactory}.
 *
 * <p>New schema versions are written to the active cluster; existing ones are read and deleted on
 * the cluster that owns their ledger id, like every other ledger. Requires the plugin's managed-ledger
 * storage ({@link BookieClusterSwitchStorage}) on the same broker.
 */
public class RoutedSchemaStorageFactory implements SchemaStorageFactory {

    @Override
    public SchemaStorage create(PulsarService pulsar) throws Exception {
        Object storage = pulsar.getManagedLedgerStorage();
        if (!(storage instanceof BookieClusterSwitchStorage plugin)) {
            throw new IllegalStateException("schemaRegistryStorageClassName=" + getClass().getName()
                    + " needs managedLedgerStorageClassName=" + BookieClusterSwitchStorage.class.getName());
        }
        plugin.bindBroker(pulsar);
        return new BcsRoutedSchemaStorage(pulsar, () -> plugin.newRoutingClient(pulsar));
    }
}
