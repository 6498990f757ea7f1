package io.bcswitch.cli;

import java.io.PrintStream;
import java.util.List;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;

/** The commands that show the state of the switch: the invariants, the operations, the status. */
final class InspectCommands {
    private final PrintStream out;

    InspectCommands(PrintStream out) {
        this.out = out;
    }

    CustomCommand verify() {
        return new AdminCommand("verify",
                "Check the plugin's invariants and list every violation: referenced ledgers "
                        + "exist (closed) where routing reads them, ledger ids on several clusters are explained "
                        + "copies with their home's content, ranges and id generator agree, every live broker "
                        + "follows, nothing scheduled for deletion is a ledger's home. Changes nothing; exits "
                        + "non-zero when there is a violation",
                List.of(ParameterDescriptor.builder().names(List.of("--deep"))
                        .description("also compare every copy entry by entry (CRC32C of each payload): reads "
                                + "every copied ledger on both clusters, paced like the migration")
                        .type(ParameterType.BOOLEAN_FLAG).build(), Params.asyncParam()),
                (p, a, o) -> {
                    if (Boolean.TRUE.equals(p.get(Params.ASYNC))) {
                        var op = a.startVerify(Boolean.TRUE.equals(p.get("--deep")));
                        o.print(op, Render.operationStarted(op));
                        return;
                    }
                    var v = a.verify(Boolean.TRUE.equals(p.get("--deep")));
                    o.print(v, Render.verify(v));
                    if (!v.violations().isEmpty()) {
                        // after printing, in either format: scripts read the report and test the exit status
                        throw AdminCommand.failure(0, "verify found " + v.violations().size() + " violation(s)");
                    }
                }, out);
    }

    CustomCommand operation() {
        return new AdminCommand("operation",
                "Show an operation started with --async (its result once it ended), or, "
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
                        throw AdminCommand.failure(0, "operation " + op.id() + " " + op.state());
                    }
                }, out);
    }

    CustomCommand status() {
        return new AdminCommand("status",
                "Show the active cluster, the switch epoch, the ledger-id range table, "
                        + "each live broker's cutover progress and the migration's progress",
                List.of(), (p, a, o) -> {
                    var s = a.status();
                    o.print(s, Render.status(s));
                }, out);
    }
}
