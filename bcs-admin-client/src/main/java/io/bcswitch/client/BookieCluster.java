package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A registered bookie cluster.
 *
 * @param name               cluster name
 * @param metadataServiceUri its BookKeeper metadata service URI
 * @param status             ACTIVE, STANDBY or DEPRECATED
 * @param registeredAt       epoch millis of registration
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BookieCluster(String name, String metadataServiceUri, String status, long registeredAt) {
}
