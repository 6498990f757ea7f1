package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A registered bookie cluster.
 *
 * @param name               cluster name
 * @param metadataServiceUri its BookKeeper metadata service URI
 * @param status             ACTIVE, STANDBY or DEPRECATED
 * @param registeredAt       epoch millis of registration
 * @param instanceId         the bookie cluster's own identity (its {@code INSTANCEID}), null until the plugin
 *                           read it (and from brokers that do not record it)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BookieCluster(String name, String metadataServiceUri, String status, long registeredAt,
                            String instanceId) {

    /** Without an instance id (kept so that code written against earlier versions still compiles). */
    public BookieCluster(String name, String metadataServiceUri, String status, long registeredAt) {
        this(name, metadataServiceUri, status, registeredAt, null);
    }
}
