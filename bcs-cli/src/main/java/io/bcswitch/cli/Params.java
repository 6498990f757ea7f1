package io.bcswitch.cli;

import java.util.List;
import java.util.Map;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;

/** The parameters several commands share, and how a command reads them from what pulsar-admin parsed. */
final class Params {
    static final String CLUSTER = "cluster";
    static final String ASYNC = "--async";

    private Params() {
    }

    /** Starts the command as an operation and returns at once (for long cleanups, drain reports, deep verifies). */
    static ParameterDescriptor asyncParam() {
        return ParameterDescriptor.builder().names(List.of(ASYNC))
                .description("start it as an operation and return its id at once; follow it with 'operation ID'")
                .type(ParameterType.BOOLEAN_FLAG).build();
    }

    static ParameterDescriptor clusterParam() {
        return ParameterDescriptor.builder().names(List.of(CLUSTER)).mainParameter(true).required(true)
                .description("bookie cluster name").type(ParameterType.STRING).build();
    }

    static String cluster(Map<String, Object> p) {
        // a main parameter may come as a list of the words given
        Object v = p.get(CLUSTER);
        if (v instanceof List<?> l) {
            v = l.isEmpty() ? null : l.get(0);
        }
        if (v == null || v.toString().isBlank()) {
            throw new IllegalArgumentException("a bookie cluster name is required");
        }
        return v.toString();
    }
}
