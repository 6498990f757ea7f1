package io.bcswitch.cli;

import java.io.PrintStream;
import java.util.List;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;

/** The commands that tell what pins an old cluster and delete what nothing needs there any more. */
final class CleanupCommands {
    private final PrintStream out;

    CleanupCommands(PrintStream out) {
        this.out = out;
    }

    CustomCommand drainReport() {
        return new AdminCommand("drain-report",
                "What still pins a bookie cluster (referenced ledgers by kind, bytes) and "
                        + "when retention will have removed its data ledgers, i.e. when it can be switched off",
                List.of(Params.clusterParam(), Params.asyncParam()), (p, a, o) -> {
                    if (Boolean.TRUE.equals(p.get(Params.ASYNC))) {
                        var op = a.startDrainReport(Params.cluster(p));
                        o.print(op, Render.operationStarted(op));
                        return;
                    }
                    var d = a.drainReport(Params.cluster(p));
                    o.print(d, Render.drain(d));
                }, out);
    }

    CustomCommand cleanupTargets() {
        return new AdminCommand("cleanup-targets",
                "List the ledgers cleanup may delete now from a cluster (all clusters "
                        + "that are not active when no name is given). Changes nothing",
                List.of(ParameterDescriptor.builder().names(List.of(Params.CLUSTER)).mainParameter(true)
                        .required(false).description("bookie cluster name").type(ParameterType.STRING).build()),
                (p, a, o) -> {
                    Object c = p.get(Params.CLUSTER);
                    var t = a.cleanupTargets(c == null ? null : Params.cluster(p));
                    o.print(t, Render.cleanupTargets(t));
                }, out);
    }

    CustomCommand cleanup() {
        return new AdminCommand("cleanup",
                "Delete from an old cluster the ledgers nothing needs any more: originals of "
                        + "relocated ledgers and unreferenced Pulsar ledgers. Dry run unless --dry-run false. Refused "
                        + "inside the rollback window unless --force",
                List.of(ParameterDescriptor.builder().names(List.of("--src-cluster", "-s"))
                                .description("the old bookie cluster to clean up").type(ParameterType.STRING)
                                .required(true).build(),
                        ParameterDescriptor.builder().names(List.of("--dry-run"))
                                .description("true (default): only list what would be deleted")
                                .type(ParameterType.BOOLEAN).build(),
                        ParameterDescriptor.builder().names(List.of("--max-deletions"))
                                .description("delete at most this many ledgers (0: no limit)")
                                .type(ParameterType.INTEGER).build(),
                        ParameterDescriptor.builder().names(List.of("--force"))
                                .description("run inside the rollback window (a rollback is impossible afterwards)")
                                .type(ParameterType.BOOLEAN_FLAG).build(), Params.asyncParam()),
                (p, a, o) -> {
                    Object dry = p.get("--dry-run");
                    Object max = p.get("--max-deletions");
                    String src = (String) p.get("--src-cluster");
                    boolean dryRun = dry == null || Boolean.TRUE.equals(dry);
                    int maxDeletions = max == null ? 0 : ((Number) max).intValue();
                    boolean force = Boolean.TRUE.equals(p.get("--force"));
                    if (Boolean.TRUE.equals(p.get(Params.ASYNC))) {
                        var op = a.startCleanup(src, dryRun, maxDeletions, force);
                        o.print(op, Render.operationStarted(op));
                        return;
                    }
                    var r = a.cleanup(src, dryRun, maxDeletions, force);
                    o.print(r, Render.cleanup(r));
                }, out);
    }
}
