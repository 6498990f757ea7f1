package io.bcswitch.launcher;

import java.util.ArrayList;
import java.util.List;

/** Command-line options of the launcher. */
final class Options {

    static final String USAGE = String.join("\n",
            "Usage: run-demo.sh [options]",
            "",
            "Starts ZooKeeper, bookie clusters cluster-a and cluster-b and one broker with the",
            "bookie-cluster-switch plugin in this process. Without --serve it runs the switch demo",
            "and exits (0 = no message lost and the switch completed).",
            "",
            "  --serve               stay up for pulsar-admin / pulsar-client / curl (Ctrl-C to stop)",
            "  --bookies N           bookies per cluster, 1..3 (default 2)",
            "  --port P              broker service port (default 6650)",
            "  --web-port W          broker web service port (default 8080)",
            "  --topics N            demo: number of topics, one producer and consumer each (default 4)",
            "  --rate R              demo: messages per second per topic (default 50)",
            "  --phase-seconds S     demo: length of the 'before' and 'after' phases (default 5)",
            "  --schema-topics N     demo: extra topics with a schema on cluster-a, one schema ledger each, for the",
            "                        migration to move (default 100)",
            "  --compacted-mb M      demo: size of a compacted topic's compacted ledger on cluster-a (default 4)",
            "  --migration-rate B    bookieClusterSwitch.migrationBytesPerSecond of the broker (default: plugin default)",
            "  --migration-concurrency N",
            "                        bookieClusterSwitch.migrationConcurrency of the broker (default: plugin default)",
            "  --help                this text");

    boolean serve;
    int bookies = 2;
    int port = 6650;
    int webPort = 8080;
    int topics = 4;
    int rate = 50;
    double phaseSeconds = 5;
    int schemaTopics = 100;
    int compactedMb = 4;
    long migrationRate = -1;
    int migrationConcurrency = -1;
    boolean help;

    static Options parse(String[] args) {
        Options o = new Options();
        List<String> list = new ArrayList<>();
        for (String a : args) {
            // "$*" in a shell script can produce one empty argument when none were given.
            if (!a.isBlank()) {
                list.add(a);
            }
        }
        for (int i = 0; i < list.size(); i++) {
            String arg = list.get(i);
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            switch (name) {
                case "--serve" -> o.serve = true;
                case "--help", "-h" -> o.help = true;
                case "--bookies" -> o.bookies = intArg(name, value != null ? value : next(list, ++i, name), 1, 3);
                case "--port" -> o.port = intArg(name, value != null ? value : next(list, ++i, name), 1, 65535);
                case "--web-port" -> o.webPort = intArg(name, value != null ? value : next(list, ++i, name), 1, 65535);
                case "--topics" -> o.topics = intArg(name, value != null ? value : next(list, ++i, name), 1, 100);
                case "--rate" -> o.rate = intArg(name, value != null ? value : next(list, ++i, name), 1, 10_000);
                case "--schema-topics" -> o.schemaTopics = intArg(name, value != null ? value : next(list, ++i, name),
                        0, 10_000);
                case "--migration-rate" -> o.migrationRate = intArg(name,
                        value != null ? value : next(list, ++i, name), 0, Integer.MAX_VALUE);
                case "--migration-concurrency" -> o.migrationConcurrency = intArg(name,
                        value != null ? value : next(list, ++i, name), 1, 1024);
                case "--compacted-mb" -> o.compactedMb = intArg(name, value != null ? value : next(list, ++i, name),
                        0, 1024);
                case "--phase-seconds" -> o.phaseSeconds = doubleArg(name,
                        value != null ? value : next(list, ++i, name), 0.5, 3600);
                default -> throw new IllegalArgumentException("unknown option: " + arg);
            }
        }
        if (o.port == o.webPort) {
            throw new IllegalArgumentException("--port and --web-port must differ");
        }
        return o;
    }

    private static String next(List<String> args, int i, String name) {
        if (i >= args.size()) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args.get(i);
    }

    private static int intArg(String name, String value, int min, int max) {
        int v;
        try {
            v = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer: " + value);
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ": " + v);
        }
        return v;
    }

    private static double doubleArg(String name, String value, double min, double max) {
        double v;
        try {
            v = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number: " + value);
        }
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ": " + v);
        }
        return v;
    }
}
