package io.bcswitch.cli;

import java.io.PrintStream;
import java.util.List;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;

/** The commands that change where this Pulsar cluster writes: switch, roll back, run the migration again. */
final class SwitchCommands {
    private final PrintStream out;
    private final Prompt prompt;

    SwitchCommands(PrintStream out, Prompt prompt) {
        this.out = out;
        this.prompt = prompt;
    }

    CustomCommand switchTo() {
        return new AdminCommand("switch",
                "Make a registered cluster the active one: new ledgers are created on it from "
                        + "now on, existing ledgers stay readable where they are. Runs precheck first. Asks for "
                        + "confirmation unless --yes is given",
                Params.with(Params.clusterParams(Params.TARGET), yes(),
                        ParameterDescriptor.builder().names(List.of("--allow-unknown-source-ids"))
                                .description("switch although the active cluster's metadata cannot be read and "
                                        + "nothing records which ledger ids it issued (the new range may overlap "
                                        + "them)")
                                .type(ParameterType.BOOLEAN_FLAG).build()),
                (p, a, o) -> {
                    String target = Params.cluster(p, Params.TARGET);
                    boolean allowUnknown = Boolean.TRUE.equals(p.get("--allow-unknown-source-ids"));
                    String question = "Switch new ledgers of this Pulsar cluster to bookie cluster '" + target + "'"
                            + (allowUnknown ? " although the ledger ids the active cluster issued may be unknown" : "")
                            + "?";
                    if (!Boolean.TRUE.equals(p.get("--yes")) && !prompt.confirm(question)) {
                        throw AdminCommand.failure(0, "switch to '" + target + "' not confirmed; nothing changed "
                                + "(use --yes to skip the question)");
                    }
                    var s = a.switchTo(target, allowUnknown);
                    o.print(s, Render.switched(s));
                }, out);
    }

    /** PIP-477's read-mode override: see the broker's {@code POST /read-mode}. */
    CustomCommand setReadMode() {
        return new AdminCommand("set-read-mode",
                "PIP-477's read mode. Every ledger is always read from the one cluster that holds it: that is "
                        + "DUAL_READ, which this accepts and changes nothing; OLD_CLUSTER_ONLY and NEW_CLUSTER_ONLY "
                        + "are refused with what to use instead (rollback or switch; drain-report, cleanup, "
                        + "close-client)",
                List.of(ParameterDescriptor.builder().names(List.of("--mode"))
                        .description("DUAL_READ (the others are refused)").type(ParameterType.STRING)
                        .required(true).build()),
                (p, a, o) -> {
                    String mode = a.setReadMode((String) p.get("--mode"));
                    o.print(java.util.Map.of("readMode", mode), "Read mode: " + mode + " (every ledger is read from "
                            + "the cluster that holds it; nothing changed).\n");
                }, out);
    }

    CustomCommand rollback() {
        return new AdminCommand("rollback",
                "Undo the latest switch inside rollbackWindowHours: the previous cluster becomes "
                        + "active again and reads of migrated ledgers go back to it. Asks for confirmation unless "
                        + "--yes",
                List.of(yes()),
                (p, a, o) -> {
                    String question = "Roll back the latest switch (the previous bookie cluster becomes active "
                            + "again)?";
                    if (!Boolean.TRUE.equals(p.get("--yes")) && !prompt.confirm(question)) {
                        throw AdminCommand.failure(0, "rollback not confirmed; nothing changed (use --yes to skip "
                                + "the question)");
                    }
                    var r = a.rollback();
                    o.print(r, Render.rollback(r));
                }, out);
    }

    CustomCommand retryMigration() {
        return new AdminCommand("retry-migration",
                "Run the latest switch's finished migration again, e.g. after fixing "
                        + "what made ledgers fail, collide or stay open: only what is still on an old cluster is "
                        + "copied and promoted",
                List.of(), (p, a, o) -> {
                    var m = a.retryMigration();
                    o.print(m, "Migration of switch epoch " + m.switchEpoch() + " to '" + m.target() + "' runs again ("
                            + m.phase() + " on " + m.owner() + "); follow it with 'status'.\n");
                }, out);
    }

    private static ParameterDescriptor yes() {
        return ParameterDescriptor.builder().names(List.of("--yes", "-y"))
                .description("do not ask for confirmation").type(ParameterType.BOOLEAN_FLAG).build();
    }
}
