package io.bcswitch.testkit;

import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.impl.DualMetadataStore;

/** Broker metadata stores on Pulsar 4.1 and later (built for 4.2 and 5.0). */
public final class LineStores {
    private LineStores() {
    }

    /** The store behind {@code store}: Pulsar wraps a broker's store for metadata-store migrations. */
    public static MetadataStore underlying(MetadataStore store) {
        return store instanceof DualMetadataStore dual ? dual.getSourceStore() : store;
    }
}
