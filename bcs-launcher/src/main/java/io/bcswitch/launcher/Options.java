package io.bcswitch.launcher;

import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Command-line options of the launcher (parsed with picocli, as pulsar-admin's are). */
@Command(name = "run-demo.sh", sortOptions = false, usageHelpWidth = 110,
        description = {"Starts ZooKeeper, bookie clusters cluster-a and cluster-b and one broker with the "
                + "bookie-cluster-switch plugin, in this process or (--processes) each as a process of its own. "
                + "Without --serve it runs the switch demo and exits (0 = no message lost and the switch "
                + "completed).", ""})
final class Options {

    @Option(names = "--serve", description = "stay up for pulsar-admin / pulsar-client / curl (Ctrl-C to stop)")
    boolean serve;

    @Option(names = "--processes", description = "run ZooKeeper, every bookie and the broker each as a JVM of its own,"
            + " the broker from a Pulsar installation with the plugin installed from this build's distribution "
            + "archive, as production runs them (ps shows them; each writes its log under "
            + "bcs-launcher/target/process-cluster/)")
    boolean processes;

    @Option(names = "--bookies", paramLabel = "N", description = "bookies per cluster, 1..3 (default ${DEFAULT-VALUE})")
    int bookies = 2;

    @Option(names = "--port", paramLabel = "P", description = "broker service port (default ${DEFAULT-VALUE})")
    int port = 6650;

    @Option(names = "--web-port", paramLabel = "W", description = "broker web service port (default ${DEFAULT-VALUE})")
    int webPort = 8080;

    @Option(names = "--topics", paramLabel = "N",
            description = "demo: number of topics, one producer and consumer each, 1..100 (default ${DEFAULT-VALUE})")
    int topics = 4;

    @Option(names = "--rate", paramLabel = "R",
            description = "demo: messages per second per topic, 1..10000 (default ${DEFAULT-VALUE})")
    int rate = 50;

    @Option(names = "--phase-seconds", paramLabel = "S",
            description = "demo: length of the 'before' and 'after' phases, 0.5..3600 (default ${DEFAULT-VALUE})")
    double phaseSeconds = 5;

    @Option(names = "--schema-topics", paramLabel = "N", description = "demo: extra topics with a schema on "
            + "cluster-a, one schema ledger each, for the migration to move, 0..10000 (default ${DEFAULT-VALUE})")
    int schemaTopics = 100;

    @Option(names = "--compacted-mb", paramLabel = "M", description = "demo: size of a compacted topic's compacted "
            + "ledger on cluster-a, 0..1024 (default ${DEFAULT-VALUE})")
    int compactedMb = 4;

    @Option(names = "--migration-rate", paramLabel = "B",
            description = "bookieClusterSwitch.migrationBytesPerSecond of the broker (default: the plugin's)")
    long migrationRate = -1;

    @Option(names = "--migration-concurrency", paramLabel = "N",
            description = "bookieClusterSwitch.migrationConcurrency of the broker, 1..1024 (default: the plugin's)")
    int migrationConcurrency = -1;

    @Option(names = {"--help", "-h"}, usageHelp = true, description = "this text")
    boolean help;

    /** The options, or IllegalArgumentException saying what is wrong with them. */
    static Options parse(String[] args) {
        Options o = new Options();
        // "$*" in a shell script can produce one empty argument when none were given
        String[] given = Arrays.stream(args).filter(a -> !a.isBlank()).toArray(String[]::new);
        try {
            new CommandLine(o).parseArgs(given);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        o.check();
        return o;
    }

    static String usage() {
        return new CommandLine(new Options()).getUsageMessage(CommandLine.Help.Ansi.OFF);
    }

    private void check() {
        range("--bookies", bookies, 1, 3);
        range("--port", port, 1, 65535);
        range("--web-port", webPort, 1, 65535);
        range("--topics", topics, 1, 100);
        range("--rate", rate, 1, 10_000);
        range("--schema-topics", schemaTopics, 0, 10_000);
        range("--compacted-mb", compactedMb, 0, 1024);
        if (migrationRate != -1) {
            range("--migration-rate", migrationRate, 0, Integer.MAX_VALUE);
        }
        if (migrationConcurrency != -1) {
            range("--migration-concurrency", migrationConcurrency, 1, 1024);
        }
        if (!(phaseSeconds >= 0.5 && phaseSeconds <= 3600)) {
            throw new IllegalArgumentException("--phase-seconds must be in 0.5..3600: " + phaseSeconds);
        }
        if (port == webPort) {
            throw new IllegalArgumentException("--port and --web-port must differ");
        }
    }

    private static void range(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ": " + v);
        }
    }
}
