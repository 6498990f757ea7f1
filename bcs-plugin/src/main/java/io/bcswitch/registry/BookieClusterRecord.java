package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.regex.Pattern;

/**
 * One registered bookie cluster, persisted as JSON at {@code <configPath>/clusters/<name>}.
 *
 * @param formatVersion     persisted-format version, see {@link #FORMAT_VERSION}
 * @param name              operator-chosen name, {@code [a-zA-Z0-9_.-]{1,64}}
 * @param metadataServiceUri the cluster's BookKeeper metadata service URI
 * @param status            lifecycle status
 * @param registeredAt      epoch millis of registration
 * @param instanceId        the bookie cluster's own identity ({@code INSTANCEID} under its ledgers root), null
 *                          until it was read; two registrations of one bookie cluster are refused by it
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BookieClusterRecord(int formatVersion, String name, String metadataServiceUri,
                                  ClusterStatus status, long registeredAt, String instanceId) {

    public BookieClusterRecord(int formatVersion, String name, String metadataServiceUri, ClusterStatus status,
                               long registeredAt) {
        this(formatVersion, name, metadataServiceUri, status, registeredAt, null);
    }

    public static final int FORMAT_VERSION = 1;
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_.-]{1,64}");

    public static boolean isValidName(String name) {
        return name != null && NAME.matcher(name).matches() && !name.equals(".") && !name.equals("..");
    }

    public BookieClusterRecord withStatus(ClusterStatus newStatus) {
        return new BookieClusterRecord(FORMAT_VERSION, name, metadataServiceUri, newStatus, registeredAt, instanceId);
    }

    public BookieClusterRecord withInstanceId(String id) {
        return new BookieClusterRecord(FORMAT_VERSION, name, metadataServiceUri, status, registeredAt, id);
    }
}
