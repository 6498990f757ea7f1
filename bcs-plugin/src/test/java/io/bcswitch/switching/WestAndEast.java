package io.bcswitch.switching;

import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;

/**
 * The registry of a Pulsar cluster on bookie cluster "west" (ACTIVE, bootstrap) with "east" registered STANDBY, and
 * east's bookie metadata ({@code /ledgers}, two bookies) in the same in-memory store.
 */
final class WestAndEast {
    private WestAndEast() {
    }

    static void seed(MetadataStoreExtended store, RegistryStore registry, String westUri, String eastUri) {
        put(store, "/ledgers/LAYOUT", "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1");
        put(store, "/ledgers/available/b1:3181", "");
        put(store, "/ledgers/available/b2:3181", "");
        registry.write(registry.paths().cluster("west"), new BookieClusterRecord(1, "west", westUri,
                ClusterStatus.ACTIVE, 1L), -1).join();
        registry.write(registry.paths().cluster("east"), new BookieClusterRecord(1, "east", eastUri,
                ClusterStatus.STANDBY, 2L), -1).join();
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, "west", 1L), -1).join();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap("west", 1L), -1).join();
    }

    private static void put(MetadataStoreExtended store, String path, String value) {
        store.put(path, value.getBytes(StandardCharsets.UTF_8), Optional.empty()).join();
    }
}
