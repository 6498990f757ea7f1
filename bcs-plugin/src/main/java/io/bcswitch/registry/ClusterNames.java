package io.bcswitch.registry;

import java.util.Set;

/** Cluster-name rules shared by registration and start-up. */
public final class ClusterNames {

    /** Words used by REST endpoints under the registry path; they cannot name a cluster. */
    public static final Set<String> RESERVED = Set.of("precheck", "switch", "status", "topics", "drain",
            "cleanup", "cleanup-targets", "rollback", "migration", "brokers", "close-client", "verify",
            "tuning", "operations", "read-mode", "internal");

    private ClusterNames() {
    }

    /** Null when {@code name} is acceptable, else why not. */
    public static String problem(String name) {
        if (name == null || name.isEmpty()) {
            return "cluster name is empty";
        }
        if (!BookieClusterRecord.isValidName(name)) {
            return "cluster name '" + printable(name) + "' must match [a-zA-Z0-9_.-]{1,64} and not be '.' or '..'";
        }
        if (RESERVED.contains(name)) {
            return "cluster name '" + name + "' is reserved (it is an endpoint name)";
        }
        return null;
    }

    /** A name derived from a metadata service URI, for a broker whose cluster was never named. */
    public static String derive(String metadataServiceUri) {
        String s = metadataServiceUri.replaceFirst("^[a-zA-Z+\\-]+:(//)?", "")
                .replaceFirst("^zk:", "")
                .replaceAll("[^a-zA-Z0-9_.-]+", "-")
                .replaceAll("^-+|-+$", "");
        if (s.isEmpty() || s.equals(".") || s.equals("..")) {
            s = "bookies";
        }
        if (s.length() > 64) {
            s = s.substring(s.length() - 64);
        }
        return RESERVED.contains(s) ? s + "-cluster" : s;
    }

    private static String printable(String s) {
        String cut = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        StringBuilder b = new StringBuilder();
        cut.codePoints().forEach(c -> {
            if (c >= 0x20 && c < 0x7f) {
                b.appendCodePoint(c);
            } else {
                b.append(String.format("\\u%04x", c));
            }
        });
        return b.toString();
    }
}
