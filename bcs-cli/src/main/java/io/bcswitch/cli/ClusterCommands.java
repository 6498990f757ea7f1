package io.bcswitch.cli;

import java.io.PrintStream;
import java.util.List;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;

/** The commands about the registered bookie clusters themselves: list, show, register, check, retire. */
final class ClusterCommands {
    private final PrintStream out;

    ClusterCommands(PrintStream out) {
        this.out = out;
    }

    CustomCommand list() {
        return new AdminCommand("list",
                "List registered bookie clusters with their status and metadata service URI",
                List.of(), (p, a, o) -> {
                    var clusters = a.list();
                    o.print(clusters, Render.clusters(clusters));
                }, out);
    }

    CustomCommand get() {
        return new AdminCommand("get", "Show one registered bookie cluster",
                Params.clusterParams(), (p, a, o) -> {
                    var c = a.get(Params.cluster(p));
                    o.print(c, Render.cluster(c));
                }, out);
    }

    CustomCommand register() {
        return new AdminCommand("register",
                "Register a bookie cluster as STANDBY. Its metadata service must answer; "
                        + "nothing is written to it. Example: register cluster-b "
                        + "--metadata-service-uri zk+hierarchical://zk-b:2181/ledgers",
                Params.with(Params.clusterParams(), ParameterDescriptor.builder()
                        .names(List.of("--metadata-service-uri", "-u", "--uri"))
                        .description("BookKeeper metadata service URI of the cluster, "
                                + "e.g. zk+hierarchical://zk1:2181,zk2:2181/ledgers")
                        .type(ParameterType.STRING).required(true).build(), ParameterDescriptor.builder()
                        .names(List.of("--status"))
                        .description("STANDBY, the status every cluster registers with (PIP-477's form); a "
                                + "cluster becomes ACTIVE by a switch and DEPRECATED by close-client")
                        .type(ParameterType.STRING).build()),
                (p, a, o) -> {
                    Object status = p.get("--status");
                    if (status != null && !"STANDBY".equals(status)) {
                        throw new IllegalArgumentException("--status may only be STANDBY: a cluster registers as "
                                + "STANDBY, becomes ACTIVE by a switch to it and DEPRECATED by close-client "
                                + "(statuses follow the switch)");
                    }
                    var c = a.register(Params.cluster(p), (String) p.get("--metadata-service-uri"),
                            (String) status);
                    o.print(c, "Registered bookie cluster '" + c.name() + "' as " + c.status() + ".\n");
                }, out);
    }

    CustomCommand unregister() {
        return new AdminCommand("unregister",
                "Unregister a bookie cluster. Refused while it is the active cluster or "
                        + "still holds ledgers that topics, cursors or schemas reference",
                Params.clusterParams(), (p, a, o) -> {
                    var c = a.unregister(Params.cluster(p));
                    o.print(c, "Unregistered bookie cluster '" + c.name() + "'.\n");
                }, out);
    }

    CustomCommand precheck() {
        return new AdminCommand("precheck",
                "Check whether a registered cluster can become active: its metadata "
                        + "answers, it can issue 63-bit ledger ids, it has enough writable bookies. Changes nothing",
                Params.clusterParams(), (p, a, o) -> {
                    var pre = a.precheck(Params.cluster(p));
                    o.print(pre, Render.precheck(pre));
                    if (!pre.ok()) {
                        throw AdminCommand.failure(0, "precheck failed: " + String.join("; ", pre.problems()));
                    }
                }, out);
    }

    CustomCommand closeClient() {
        return new AdminCommand("close-client",
                "Retire a drained cluster: marks it DEPRECATED and the brokers close their "
                        + "clients to it. Refused while it holds ledgers the brokers reference",
                Params.clusterParams(), (p, a, o) -> {
                    var c = a.closeClient(Params.cluster(p));
                    o.print(c, "Bookie cluster '" + c.name() + "' is " + c.status() + "; brokers close their clients "
                            + "to it.\n");
                }, out);
    }
}
