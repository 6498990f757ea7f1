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

    /** PIP-477 passes the cluster as {@code --name} where this CLI takes it as the first argument: both work. */
    static final String NAME = "--name";
    /** ... and as {@code --target} to {@code switch}. */
    static final String TARGET = "--target";

    /** The cluster, as the first argument or as {@code option} (PIP-477's form). */
    static List<ParameterDescriptor> clusterParams(String option) {
        return List.of(ParameterDescriptor.builder().names(List.of(CLUSTER)).mainParameter(true).required(false)
                        .description("bookie cluster name (or " + option + " NAME)").type(ParameterType.STRING)
                        .build(),
                ParameterDescriptor.builder().names(List.of(option)).required(false)
                        .description("bookie cluster name, as PIP-477 writes it (same as the first argument)")
                        .type(ParameterType.STRING).build());
    }

    static List<ParameterDescriptor> clusterParams() {
        return clusterParams(NAME);
    }

    /** {@code first} followed by {@code more}. */
    static List<ParameterDescriptor> with(List<ParameterDescriptor> first, ParameterDescriptor... more) {
        List<ParameterDescriptor> all = new java.util.ArrayList<>(first);
        all.addAll(List.of(more));
        return List.copyOf(all);
    }

    static String cluster(Map<String, Object> p) {
        return cluster(p, NAME);
    }

    /** The cluster named by the first argument or by {@code option}; refused when neither or two different. */
    static String cluster(Map<String, Object> p, String option) {
        // a main parameter may come as a list of the words given
        Object v = p.get(CLUSTER);
        if (v instanceof List<?> l) {
            v = l.isEmpty() ? null : l.get(0);
        }
        String main = v == null || v.toString().isBlank() ? null : v.toString();
        Object o = p.get(option);
        String named = o == null || o.toString().isBlank() ? null : o.toString();
        if (main != null && named != null && !main.equals(named)) {
            throw new IllegalArgumentException("two bookie clusters named: '" + main + "' and " + option + " '"
                    + named + "'; give one");
        }
        if (main == null && named == null) {
            throw new IllegalArgumentException("a bookie cluster name is required (first argument or " + option
                    + ")");
        }
        return main != null ? main : named;
    }
}
