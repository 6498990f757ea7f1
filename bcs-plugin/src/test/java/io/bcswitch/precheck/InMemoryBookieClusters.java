package io.bcswitch.precheck;

import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryStore;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bookie clusters' metadata for unit tests, each in its own in-memory store at {@link #uri(String)}: layout, instance
 * id, bookies, the high-order bits its id generator reached. A cluster without a store refuses the connection.
 */
public final class InMemoryBookieClusters implements AutoCloseable {
    public static final String HIERARCHICAL = "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1";
    public static final String FLAT = "2\norg.apache.bookkeeper.meta.FlatLedgerManagerFactory:1";

    /** Stores by store URL ({@code zk:<name>:2181}). */
    private final Map<String, InMemoryMetadataPort> stores = new ConcurrentHashMap<>();
    private final ClusterMetadataAccess access = new ClusterMetadataAccess(2000, (url, timeout) -> {
        MetadataPort p = stores.get(url);
        if (p == null) {
            throw new IllegalStateException("connection refused by " + url);
        }
        return p;
    });

    public static String uri(String name) {
        return "zk+hierarchical://" + name + ":2181/ledgers";
    }

    /** Opens the stores of this class (and refuses every other). */
    public ClusterMetadataAccess access() {
        return access;
    }

    /** A cluster named {@code name}; {@code highOrderBits} 0: its long id generator was never used. */
    public InMemoryMetadataPort add(String name, String layout, String instanceId, int writable, int readOnly,
                                    long highOrderBits) {
        InMemoryMetadataPort p = new InMemoryMetadataPort();
        put(p, "/ledgers/LAYOUT", layout);
        put(p, "/ledgers/INSTANCEID", instanceId);
        for (int i = 0; i < writable; i++) {
            put(p, "/ledgers/available/" + name + "-" + i + ":3181", "");
        }
        for (int i = 0; i < readOnly; i++) {
            put(p, "/ledgers/available/readonly/" + name + "-ro-" + i + ":3181", "");
        }
        if (highOrderBits > 0) {
            put(p, "/ledgers/idgen-long/HOB-" + String.format("%010d", highOrderBits), "");
        }
        stores.put("zk:" + name + ":2181", p);
        return p;
    }

    /**
     * Bootstraps {@code registry} on the first of {@code names} and registers each of them there and here: the first
     * ACTIVE (its id generator at high-order bits 1), the others STANDBY and never used, each with three writable
     * bookies. Answers their stores by name.
     */
    public Map<String, InMemoryMetadataPort> registerAll(RegistryStore registry, String... names) {
        String active = names[0];
        registry.write(registry.paths().bootstrap(), new BootstrapRecord(1, active, 1), -1).join();
        registry.write(registry.paths().ranges(), RangeTable.bootstrap(active, 1), -1).join();
        Map<String, InMemoryMetadataPort> added = new TreeMap<>();
        for (String c : names) {
            boolean isActive = c.equals(active);
            registry.write(registry.paths().cluster(c), new BookieClusterRecord(1, c, uri(c),
                    isActive ? ClusterStatus.ACTIVE : ClusterStatus.STANDBY, 1L, "id-" + c), -1).join();
            added.put(c, add(c, HIERARCHICAL, "id-" + c, 3, 0, isActive ? 1 : 0));
        }
        return added;
    }

    public static void put(MetadataPort p, String path, String value) {
        p.put(path, value.getBytes(StandardCharsets.UTF_8), Optional.empty(), false).join();
    }

    @Override
    public void close() {
        access.close();
        stores.values().forEach(InMemoryMetadataPort::close);
    }
}
