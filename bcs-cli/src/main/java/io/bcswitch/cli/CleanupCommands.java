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
                Params.with(Params.clusterParams(), Params.asyncParam()), (p, a, o) -> {
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
        return cleanupTargets("cleanup-targets");
    }

    /** PIP-477's name for {@code cleanup-targets}. */
    CustomCommand listCleanupTargets() {
        return cleanupTargets("list-cleanup-targets");
    }

    private CustomCommand cleanupTargets(String name) {
        return new AdminCommand(name,
                "List the ledgers cleanup may delete now from a cluster (all clusters "
                        + "that are not active when no name is given). Changes nothing",
                Params.clusterParams(), (p, a, o) -> {
                    boolean named = p.get(Params.CLUSTER) != null || p.get(Params.NAME) != null;
                    var t = a.cleanupTargets(named ? Params.cluster(p) : null);
                    o.print(t, Render.cleanupTargets(t));
                }, out);
    }

    CustomCommand cleanup() {
        return new AdminCommand("cleanup",
                "Delete from an old cluster the ledgers nothing needs any more: originals of "
                        + "relocated ledgers and unreferenced Pulsar ledgers. A dry run (it only lists what it would "
                        + "delete) unless --delete is given. Refused inside the rollback window unless --force",
                List.of(ParameterDescriptor.builder().names(List.of("--src-cluster", "-s"))
                                .description("the old bookie cluster to clean up (optional when exactly one "
                                        + "cluster that is not active has something to delete)")
                                .type(ParameterType.STRING).build(),
                        ParameterDescriptor.builder().names(List.of(DRY_RUN))
                                .description("only list what would be deleted (what cleanup does anyway unless "
                                        + "--delete is given)")
                                .type(ParameterType.BOOLEAN_FLAG).build(),
                        ParameterDescriptor.builder().names(List.of(DELETE))
                                .description("really delete (without it, cleanup is a dry run)")
                                .type(ParameterType.BOOLEAN_FLAG).build(),
                        ParameterDescriptor.builder().names(List.of(DRY_RUN_VALUE)).mainParameter(true)
                                .description("'false' after --dry-run: the earlier spelling of --delete")
                                .type(ParameterType.STRING).build(),
                        ParameterDescriptor.builder().names(List.of("--max-deletions"))
                                .description("delete at most this many ledgers (0: no limit)")
                                .type(ParameterType.INTEGER).build(),
                        ParameterDescriptor.builder().names(List.of("--force"))
                                .description("run inside the rollback window (a rollback is impossible afterwards)")
                                .type(ParameterType.BOOLEAN_FLAG).build(), Params.asyncParam()),
                (p, a, o) -> {
                    Object max = p.get("--max-deletions");
                    boolean dryRun = dryRun(p);
                    String src = (String) p.get("--src-cluster");
                    if (src == null) {
                        src = onlyClusterWithTargets(a.cleanupTargets(null));
                    }
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

    private static final String DRY_RUN = "--dry-run";
    private static final String DELETE = "--delete";
    private static final String DRY_RUN_VALUE = "dry-run-value";

    /**
     * Whether the cleanup only lists: yes unless {@code --delete}. {@code --dry-run} is a flag (PIP-477's form); the
     * earlier {@code --dry-run false} and {@code --dry-run true} still work (the value arrives as a stray word).
     */
    static boolean dryRun(java.util.Map<String, Object> p) {
        Object v = p.get(DRY_RUN_VALUE);
        if (v instanceof List<?> l) {
            v = l.isEmpty() ? null : String.join(" ", l.stream().map(String::valueOf).toList());
        }
        boolean flag = Boolean.TRUE.equals(p.get(DRY_RUN));
        boolean delete = Boolean.TRUE.equals(p.get(DELETE));
        if (v != null) {
            if (!flag || !(v.equals("false") || v.equals("true"))) {
                throw new IllegalArgumentException("unexpected argument '" + v + "' (cleanup takes none; "
                        + "--dry-run takes no value, --delete really deletes)");
            }
            delete = delete || v.equals("false");
            flag = v.equals("true");
        }
        if (flag && delete) {
            throw new IllegalArgumentException("--dry-run and --delete contradict each other: give one");
        }
        return !delete;
    }

    /** The one cluster that is not active and has cleanup targets; refused when there are none or several. */
    static String onlyClusterWithTargets(List<io.bcswitch.client.CleanupTarget> targets) {
        java.util.SortedSet<String> clusters = new java.util.TreeSet<>();
        targets.forEach(t -> clusters.add(t.cluster()));
        if (clusters.size() != 1) {
            throw new IllegalArgumentException(clusters.isEmpty()
                    ? "no cluster has anything to clean up now (see cleanup-targets); nothing to do"
                    : "several clusters have ledgers to clean up (" + String.join(", ", clusters)
                            + "): name one with --src-cluster");
        }
        return clusters.first();
    }
}
