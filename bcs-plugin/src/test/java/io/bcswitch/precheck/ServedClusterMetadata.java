package io.bcswitch.precheck;

import io.bcswitch.adapter.PulsarMetadataPort;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.metadata.api.MetadataStore;

/**
 * Cluster metadata for unit tests: the clusters registered under the given URIs are read from in-memory stores
 * (ledgers root {@code /ledgers}); any other URI is opened as in production.
 */
public class ServedClusterMetadata extends ClusterMetadataAccess {
    private final Map<String, ? extends MetadataStore> served;

    public ServedClusterMetadata(long timeoutMillis, Map<String, ? extends MetadataStore> served) {
        super(timeoutMillis, PulsarMetadataPort::probe);
        this.served = served;
    }

    @Override
    public CompletableFuture<ClusterMetadata> forLocation(ClusterLocation location) {
        MetadataStore store = served.get(location.uri());
        return store != null
                ? CompletableFuture.completedFuture(new StoreClusterMetadata(new PulsarMetadataPort(store), "/ledgers", timeoutMillis()))
                : super.forLocation(location);
    }
}
