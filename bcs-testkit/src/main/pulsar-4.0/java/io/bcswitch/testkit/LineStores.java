package io.bcswitch.testkit;

import org.apache.pulsar.metadata.api.MetadataStore;

/** Broker metadata stores on Pulsar 4.0. */
public final class LineStores {
    private LineStores() {
    }

    /** The store behind {@code store}: on 4.0 the broker uses its store as it is. */
    public static MetadataStore underlying(MetadataStore store) {
        return store;
    }
}
