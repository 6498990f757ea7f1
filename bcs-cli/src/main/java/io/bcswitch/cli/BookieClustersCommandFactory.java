package io.bcswitch.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.admin.cli.extensions.CommandExecutionContext;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.CustomCommandFactory;
import org.apache.pulsar.admin.cli.extensions.CustomCommandGroup;
import org.apache.pulsar.client.admin.PulsarAdminException;

/**
 * {@code pulsar-admin bookie-clusters ...}: the pulsar-admin extension (client.conf:
 * {@code customCommandFactories=bookie-clusters}, NAR in {@code cliExtensionsDirectory}).
 *
 * <p>Failures are thrown as {@link PulsarAdminException}, which pulsar-admin turns into exit status 1
 * and prints (the extension API ignores a command's return value, so throwing is the only way to fail).
 */
public class BookieClustersCommandFactory implements CustomCommandFactory {

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

    /** Every command, printing to {@code out} and reading confirmations from {@code in}, in the order of the help. */
    static List<CustomCommand> commands(PrintStream out, InputStream in) {
        ClusterCommands clusters = new ClusterCommands(out);
        SwitchCommands switching = new SwitchCommands(out, new Prompt(out, in));
        CleanupCommands cleanup = new CleanupCommands(out);
        TuningCommands tuning = new TuningCommands(out);
        InspectCommands inspect = new InspectCommands(out);
        return new ArrayList<>(List.of(clusters.list(), clusters.get(), clusters.register(), clusters.unregister(),
                clusters.precheck(), switching.switchTo(), cleanup.drainReport(), cleanup.cleanupTargets(),
                cleanup.listCleanupTargets(), cleanup.cleanup(), switching.rollback(), switching.retryMigration(),
                tuning.getTuning(), tuning.setTuning(), clusters.closeClient(), inspect.verify(), inspect.operation(),
                inspect.status(), switching.setReadMode()));
    }
}
