package io.bcswitch.cli;

import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.BookieClustersAdminException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.pulsar.admin.cli.extensions.CommandExecutionContext;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.CustomCommandFactory;
import org.apache.pulsar.admin.cli.extensions.CustomCommandGroup;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;
import org.apache.pulsar.client.admin.PulsarAdminException;

/**
 * {@code pulsar-admin bookie-clusters ...}: the pulsar-admin extension (client.conf:
 * {@code customCommandFactories=bookie-clusters}, NAR in {@code cliExtensionsDirectory}).
 *
 * <p>Failures are thrown as {@link PulsarAdminException}, which pulsar-admin turns into exit status 1
 * and prints (the extension API ignores a command's return value, so throwing is the only way to fail).
 */
public class BookieClustersCommandFactory implements CustomCommandFactory {
    static final String OUTPUT = "--output";
    static final String CLUSTER = "cluster";

    @Override
    public List<CustomCommandGroup> commandGroups(CommandExecutionContext context) {
        return List.of(new CustomCommandGroup() {
            @Override
            public String name() {
                return "bookie-clusters";
            }

            @Override
            public String description() {
                return "Register bookie clusters and switch this Pulsar cluster's storage between them";
            }

            @Override
            public List<CustomCommand> commands(CommandExecutionContext ctx) {
                return BookieClustersCommandFactory.commands(System.out, System.in);
            }
        });
    }

    /** The body of a command: calls the API and prints the result in the chosen format. */
    interface Action {
        void run(Map<String, Object> params, BookieClustersAdmin admin, Output out) throws Exception;
    }

    /** Where a command prints: JSON or the human form. */
    record Output(PrintStream stream, boolean json) {
        void print(Object value, String human) {
            stream.print(json ? BookieClustersAdmin.toJson(value) + "\n" : human);
            stream.flush();
        }
    }

    static List<CustomCommand> commands(PrintStream out, java.io.InputStream in) {
        List<CustomCommand> list = new ArrayList<>();
        list.add(command("list", "List registered bookie clusters with their status and metadata service URI",
                List.of(), (p, a, o) -> {
                    var clusters = a.list();
                    o.print(clusters, Render.clusters(clusters));
                }, out));
        list.add(command("get", "Show one registered bookie cluster", List.of(clusterParam()), (p, a, o) -> {
            var c = a.get(cluster(p));
            o.print(c, Render.cluster(c));
        }, out));
        list.add(command("register", "Register a bookie cluster as STANDBY. Its metadata service must answer; "
                        + "nothing is written to it. Example: register cluster-b "
                        + "--metadata-service-uri zk+hierarchical://zk-b:2181/ledgers",
                List.of(clusterParam(), ParameterDescriptor.builder()
                        .names(List.of("--metadata-service-uri", "-u"))
                        .description("BookKeeper metadata service URI of the cluster, "
                                + "e.g. zk+hierarchical://zk1:2181,zk2:2181/ledgers")
                        .type(ParameterType.STRING).required(true).build()),
                (p, a, o) -> {
                    var c = a.register(cluster(p), (String) p.get("--metadata-service-uri"));
                    o.print(c, "Registered bookie cluster '" + c.name() + "' as " + c.status() + ".\n");
                }, out));
        list.add(command("unregister", "Unregister a bookie cluster. Refused while it is the active cluster or "
                        + "still holds ledgers that topics, cursors or schemas reference",
                List.of(clusterParam()), (p, a, o) -> {
                    var c = a.unregister(cluster(p));
                    o.print(c, "Unregistered bookie cluster '" + c.name() + "'.\n");
                }, out));
        list.add(command("precheck", "Check whether a registered cluster can become active: its metadata "
                        + "answers, it can issue 63-bit ledger ids, it has enough writable bookies. Changes nothing",
                List.of(clusterParam()), (p, a, o) -> {
                    var pre = a.precheck(cluster(p));
                    o.print(pre, Render.precheck(pre));
                    if (!pre.ok()) {
                        throw failure(0, "precheck failed: " + String.join("; ", pre.problems()));
                    }
                }, out));
        list.add(command("switch", "Make a registered cluster the active one: new ledgers are created on it from "
                        + "now on, existing ledgers stay readable where they are. Runs precheck first. Asks for "
                        + "confirmation unless --yes is given",
                List.of(clusterParam(), ParameterDescriptor.builder().names(List.of("--yes", "-y"))
                        .description("do not ask for confirmation").type(ParameterType.BOOLEAN_FLAG).build(),
                        ParameterDescriptor.builder().names(List.of("--allow-unknown-source-ids"))
                                .description("switch although the active cluster's metadata cannot be read and "
                                        + "nothing records which ledger ids it issued (the new range may overlap "
                                        + "them)")
                                .type(ParameterType.BOOLEAN_FLAG).build()),
                (p, a, o) -> {
                    String target = cluster(p);
                    boolean allowUnknown = Boolean.TRUE.equals(p.get("--allow-unknown-source-ids"));
                    String question = "Switch new ledgers of this Pulsar cluster to bookie cluster '" + target + "'"
                            + (allowUnknown ? " although the ledger ids the active cluster issued may be unknown" : "")
                            + "?";
                    if (!Boolean.TRUE.equals(p.get("--yes")) && !confirm(out, in, question)) {
                        throw failure(0, "switch to '" + target + "' not confirmed; nothing changed "
                                + "(use --yes to skip the question)");
                    }
                    var s = a.switchTo(target, allowUnknown);
                    o.print(s, Render.switched(s));
                }, out));
        list.add(command("drain-report", "What still pins a bookie cluster (referenced ledgers by kind, bytes) and "
                        + "when retention will have removed its data ledgers, i.e. when it can be switched off",
                List.of(clusterParam(), asyncParam()), (p, a, o) -> {
                    if (Boolean.TRUE.equals(p.get(ASYNC))) {
                        var op = a.startDrainReport(cluster(p));
                        o.print(op, Render.operationStarted(op));
                        return;
                    }
                    var d = a.drainReport(cluster(p));
                    o.print(d, Render.drain(d));
                }, out));
        list.add(command("cleanup-targets", "List the ledgers cleanup may delete now from a cluster (all clusters "
                        + "that are not active when no name is given). Changes nothing",
                List.of(ParameterDescriptor.builder().names(List.of(CLUSTER)).mainParameter(true).required(false)
                        .description("bookie cluster name").type(ParameterType.STRING).build()),
                (p, a, o) -> {
                    Object c = p.get(CLUSTER);
                    var t = a.cleanupTargets(c == null ? null : cluster(p));
                    o.print(t, Render.cleanupTargets(t));
                }, out));
        list.add(command("cleanup", "Delete from an old cluster the ledgers nothing needs any more: originals of "
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
                                .type(ParameterType.BOOLEAN_FLAG).build(), asyncParam()),
                (p, a, o) -> {
                    Object dry = p.get("--dry-run");
                    Object max = p.get("--max-deletions");
                    String src = (String) p.get("--src-cluster");
                    boolean dryRun = dry == null || Boolean.TRUE.equals(dry);
                    int maxDeletions = max == null ? 0 : ((Number) max).intValue();
                    boolean force = Boolean.TRUE.equals(p.get("--force"));
                    if (Boolean.TRUE.equals(p.get(ASYNC))) {
                        var op = a.startCleanup(src, dryRun, maxDeletions, force);
                        o.print(op, Render.operationStarted(op));
                        return;
                    }
                    var r = a.cleanup(src, dryRun, maxDeletions, force);
                    o.print(r, Render.cleanup(r));
                }, out));
        list.add(command("rollback", "Undo the latest switch inside rollbackWindowHours: the previous cluster becomes "
                        + "active again and reads of migrated ledgers go back to it. Asks for confirmation unless --yes",
                List.of(ParameterDescriptor.builder().names(List.of("--yes", "-y"))
                        .description("do not ask for confirmation").type(ParameterType.BOOLEAN_FLAG).build()),
                (p, a, o) -> {
                    String question = "Roll back the latest switch (the previous bookie cluster becomes active again)?";
                    if (!Boolean.TRUE.equals(p.get("--yes")) && !confirm(out, in, question)) {
                        throw failure(0, "rollback not confirmed; nothing changed (use --yes to skip the question)");
                    }
                    var r = a.rollback();
                    o.print(r, Render.rollback(r));
                }, out));
        list.add(command("retry-migration", "Run the latest switch's finished migration again, e.g. after fixing "
                        + "what made ledgers fail, collide or stay open: only what is still on an old cluster is "
                        + "copied and promoted", List.of(), (p, a, o) -> {
                    var m = a.retryMigration();
                    o.print(m, "Migration of switch epoch " + m.switchEpoch() + " to '" + m.target() + "' runs again ("
                            + m.phase() + " on " + m.owner() + "); follow it with 'status'.\n");
                }, out));
        list.add(command("get-tuning", "Show the pacing settings: what the answering broker uses now, its "
                        + "broker.conf's values, and what was changed at run time", List.of(), (p, a, o) -> {
                    var t = a.tuning();
                    o.print(t, Render.tuning(t));
                }, out));
        list.add(command("set-tuning", "Change the migration's copy rate and concurrency and the cutover's pace while "
                        + "the system runs: stored in the metadata store, applied by every broker within seconds "
                        + "(a migration or cutover under way included). broker.conf keeps the defaults",
                List.of(ParameterDescriptor.builder().names(List.of("--migration-bytes-per-second"))
                                .description("bytes per second the migration reads at most (0: unlimited)")
                                .type(ParameterType.STRING).build(),
                        ParameterDescriptor.builder().names(List.of("--migration-concurrency"))
                                .description("ledgers the migration copies at the same time (1-1024)")
                                .type(ParameterType.STRING).build(),
                        ParameterDescriptor.builder().names(List.of("--cutover-topics-per-second"))
                                .description("topics per second each broker rolls onto the new cluster (> 0)")
                                .type(ParameterType.STRING).build(),
                        ParameterDescriptor.builder().names(List.of("--reset"))
                                .description("comma-separated settings to set back to broker.conf's values: "
                                        + "migrationBytesPerSecond, migrationConcurrency, cutoverTopicsPerSecond")
                                .type(ParameterType.STRING).build()),
                (p, a, o) -> {
                    var change = tuningChange(p);
                    var t = a.setTuning(change);
                    o.print(t, Render.tuning(t));
                }, out));
        list.add(command("close-client", "Retire a drained cluster: marks it DEPRECATED and the brokers close their "
                        + "clients to it. Refused while it holds ledgers the brokers reference",
                List.of(clusterParam()), (p, a, o) -> {
                    var c = a.closeClient(cluster(p));
                    o.print(c, "Bookie cluster '" + c.name() + "' is " + c.status() + "; brokers close their clients "
                            + "to it.\n");
                }, out));
        list.add(command("verify", "Check the plugin's invariants and list every violation: referenced ledgers "
                        + "exist (closed) where routing reads them, ledger ids on several clusters are explained "
                        + "copies with their home's content, ranges and id generator agree, every live broker "
                        + "follows, nothing scheduled for deletion is a ledger's home. Changes nothing; exits "
                        + "non-zero when there is a violation",
                List.of(ParameterDescriptor.builder().names(List.of("--deep"))
                        .description("also compare every copy entry by entry (CRC32C of each payload): reads "
                                + "every copied ledger on both clusters, paced like the migration")
                        .type(ParameterType.BOOLEAN_FLAG).build(), asyncParam()),
                (p, a, o) -> {
                    if (Boolean.TRUE.equals(p.get(ASYNC))) {
                        var op = a.startVerify(Boolean.TRUE.equals(p.get("--deep")));
                        o.print(op, Render.operationStarted(op));
                        return;
                    }
                    var v = a.verify(Boolean.TRUE.equals(p.get("--deep")));
                    o.print(v, Render.verify(v));
                    if (!v.violations().isEmpty()) {
                        // after printing, in either format: scripts read the report and test the exit status
                        throw failure(0, "verify found " + v.violations().size() + " violation(s)");
                    }
                }, out));
        list.add(command("operation", "Show an operation started with --async (its result once it ended), or, "
                        + "without an id, the operations kept: the newest finished ones of the last day and those "
                        + "running. Exits non-zero when the operation FAILED or was LOST",
                List.of(ParameterDescriptor.builder().names(List.of("id")).mainParameter(true).required(false)
                        .description("operation id").type(ParameterType.STRING).build()),
                (p, a, o) -> {
                    Object id = p.get("id");
                    if (id instanceof List<?> l) {
                        id = l.isEmpty() ? null : l.get(0);
                    }
                    if (id == null || id.toString().isBlank()) {
                        var all = a.operations();
                        o.print(all, Render.operations(all));
                        return;
                    }
                    var op = a.operation(String.valueOf(id));
                    o.print(op, Render.operation(op));
                    if ("FAILED".equals(op.state()) || "LOST".equals(op.state())) {
                        throw failure(0, "operation " + op.id() + " " + op.state());
                    }
                }, out));
        list.add(command("status", "Show the active cluster, the switch epoch, the ledger-id range table, "
                        + "each live broker's cutover progress and the migration's progress",
                List.of(), (p, a, o) -> {
                    var s = a.status();
                    o.print(s, Render.status(s));
                }, out));
        return list;
    }

    /** The change the options of set-tuning ask for; refused (nothing sent) when it asks for none. */
    static io.bcswitch.client.Tuning.Change tuningChange(Map<String, Object> p) {
        var change = new io.bcswitch.client.Tuning.Change();
        boolean any = false;
        Object bytes = p.get("--migration-bytes-per-second");
        if (bytes != null) {
            change.migrationBytesPerSecond(whole(bytes, "--migration-bytes-per-second"));
            any = true;
        }
        Object concurrency = p.get("--migration-concurrency");
        if (concurrency != null) {
            long c = whole(concurrency, "--migration-concurrency");
            if (c < 1 || c > 1024) {
                throw new IllegalArgumentException("--migration-concurrency must be between 1 and 1024, not " + c);
            }
            change.migrationConcurrency((int) c);
            any = true;
        }
        Object rate = p.get("--cutover-topics-per-second");
        if (rate != null) {
            try {
                change.cutoverTopicsPerSecond(Double.parseDouble(rate.toString().trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--cutover-topics-per-second is not a number: '" + rate + "'");
            }
            any = true;
        }
        Object reset = p.get("--reset");
        if (reset != null) {
            for (String k : reset.toString().split(",")) {
                if (!k.isBlank()) {
                    change.reset(k.trim());
                    any = true;
                }
            }
        }
        if (!any) {
            throw new IllegalArgumentException("nothing to change: give --migration-bytes-per-second, "
                    + "--migration-concurrency, --cutover-topics-per-second or --reset");
        }
        return change;
    }

    private static long whole(Object v, String option) {
        try {
            return Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " is not a whole number: '" + v + "'");
        }
    }

    private static final String ASYNC = "--async";

    /** Starts the command as an operation and returns at once (for long cleanups, drain reports, deep verifies). */
    private static ParameterDescriptor asyncParam() {
        return ParameterDescriptor.builder().names(List.of(ASYNC))
                .description("start it as an operation and return its id at once; follow it with 'operation ID'")
                .type(ParameterType.BOOLEAN_FLAG).build();
    }

    private static ParameterDescriptor clusterParam() {
        return ParameterDescriptor.builder().names(List.of(CLUSTER)).mainParameter(true).required(true)
                .description("bookie cluster name").type(ParameterType.STRING).build();
    }

    private static String cluster(Map<String, Object> p) {
        Object v = p.get(CLUSTER);
        if (v instanceof List<?> l) {
            v = l.isEmpty() ? null : l.get(0);
        }
        if (v == null || v.toString().isBlank()) {
            throw new IllegalArgumentException("a bookie cluster name is required");
        }
        return v.toString();
    }

    private static boolean confirm(PrintStream out, java.io.InputStream in, String question) throws IOException {
        out.print(question + " [y/N] ");
        out.flush();
        String answer = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).readLine();
        return answer != null && (answer.trim().equalsIgnoreCase("y") || answer.trim().equalsIgnoreCase("yes"));
    }

    static PulsarAdminException failure(int status, String reason) {
        // pulsar-admin prints the second argument first, then "Reason: <message>", and exits with 1
        return new PulsarAdminException(status > 0 ? "HTTP " + status : "bookie-clusters command failed", null,
                "error: " + reason, status);
    }

    private static CustomCommand command(String name, String description, List<ParameterDescriptor> params,
                                         Action action, PrintStream out) {
        List<ParameterDescriptor> all = new ArrayList<>(params);
        all.add(ParameterDescriptor.builder().names(List.of(OUTPUT, "-o"))
                .description("output format: text (default) or json").type(ParameterType.STRING).build());
        return new CustomCommand() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public String description() {
                return description;
            }

            @Override
            public List<ParameterDescriptor> parameters() {
                return all;
            }

            @Override
            public boolean execute(Map<String, Object> parameters, CommandExecutionContext context) throws Exception {
                Object fmt = parameters.get(OUTPUT);
                String format = fmt == null ? "text" : fmt.toString().toLowerCase(Locale.ROOT);
                if (!format.equals("text") && !format.equals("json")) {
                    throw failure(0, "--output must be text or json, not '" + fmt + "'");
                }
                try {
                    action.run(parameters, AdminConnection.open(context), new Output(out, format.equals("json")));
                } catch (BookieClustersAdminException e) {
                    throw failure(e.status(), e.getMessage());
                } catch (IllegalArgumentException | IllegalStateException e) {
                    throw failure(0, e.getMessage());
                }
                return true;
            }
        };
    }
}
