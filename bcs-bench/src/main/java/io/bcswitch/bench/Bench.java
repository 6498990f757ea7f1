package io.bcswitch.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Entry point of {@code run-bench.sh}: {@code <scenario>|all [--smoke] [--rounds N] [--out DIR]}. Each scenario
 * starts its own clusters (in this JVM, or for the {@code -processes} scenarios each node a JVM of its own), compares
 * both sides alternately and writes {@code <scenario>.json} and
 * {@code <scenario>.txt} to the output directory (default {@code bench-results}); the table is printed too.
 */
public final class Bench {
    private final Map<String, Scenario> scenarios = new LinkedHashMap<>();

    public Bench() {
        for (Scenario s : List.of(new SteadyState(Sides.Layout.ONE_JVM), new SteadyState(Sides.Layout.PROCESSES),
                new CutoverAtScale(Sides.Layout.ONE_JVM), new CutoverAtScale(Sides.Layout.PROCESSES),
                new BuildAtScale(), new InventoryAtScale(), new DataSize(), new DisasterSwitch())) {
            scenarios.put(s.name(), s);
        }
    }

    public List<String> names() {
        return List.copyOf(scenarios.keySet());
    }

    /** Runs {@code which} (a scenario name or {@code all}); returns the results, each already written. */
    public List<ScenarioResult> run(String which, BenchOptions options) throws Exception {
        List<Scenario> chosen = new ArrayList<>();
        if (which.equals("all")) {
            chosen.addAll(scenarios.values());
        } else if (scenarios.containsKey(which)) {
            chosen.add(scenarios.get(which));
        } else {
            throw new IllegalArgumentException("unknown scenario '" + which + "'; one of " + names() + " or all");
        }
        List<ScenarioResult> results = new ArrayList<>();
        for (Scenario s : chosen) {
            ScenarioResult r = s.run(options);
            Results.write(r, options.out());
            results.add(r);
        }
        return results;
    }

    public static void main(String[] args) {
        try {
            String which = null;
            boolean smoke = false;
            int rounds = 3;
            Path out = Path.of("bench-results");
            String serviceUrl = null;
            String adminUrl = null;
            String namespace = "public/default";
            String target = null;
            String token = System.getenv("BENCH_AUTH_TOKEN");
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--smoke" -> smoke = true;
                    case "--service-url" -> serviceUrl = value(args, ++i, "--service-url");
                    case "--admin-url" -> adminUrl = value(args, ++i, "--admin-url");
                    case "--namespace" -> namespace = value(args, ++i, "--namespace");
                    case "--target" -> target = value(args, ++i, "--target");
                    case "--rounds" -> rounds = Integer.parseInt(value(args, ++i, "--rounds"));
                    case "--out" -> out = Path.of(value(args, ++i, "--out"));
                    case "-h", "--help" -> {
                        System.out.println(usage());
                        return;
                    }
                    default -> {
                        if (args[i].startsWith("-") || which != null) {
                            throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
                        }
                        which = args[i];
                    }
                }
            }
            if (which == null) {
                throw new IllegalArgumentException("name a scenario");
            }
            if (which.equals("report")) {
                System.out.println("wrote " + Report.write(out, Path.of("docs"), new Bench().names()));
                System.exit(0);
            }
            BenchOptions options = new BenchOptions(smoke, smoke ? 1 : rounds, out);
            if (serviceUrl != null || adminUrl != null) {
                if (serviceUrl == null || adminUrl == null) {
                    throw new IllegalArgumentException("a running cluster needs both --service-url and --admin-url");
                }
                if (!which.equals("cutover")) {
                    throw new IllegalArgumentException("only the cutover scenario runs against a running cluster: the "
                            + "others start clusters of their own, stock and plugin side by side");
                }
                ScenarioResult r = new RemoteCutover(new RemoteCutover.Target(serviceUrl, adminUrl, namespace, target,
                        token)).run(options);
                Results.write(r, out);
                System.out.println(Results.table(r));
                System.out.println("results in " + out.toAbsolutePath());
                System.exit(0);
            }
            for (ScenarioResult r : new Bench().run(which, options)) {
                System.out.println(Results.table(r));
            }
            System.out.println("results in " + out.toAbsolutePath());
            System.exit(0);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static String usage() {
        return "usage: run-bench.sh <scenario>|all [--smoke] [--rounds N] [--out DIR]\n"
                + "       run-bench.sh report [--out DIR]   docs/benchmarks.md and its plots from the result files\n"
                + "scenarios: " + new Bench().names() + "\n"
                + "  --smoke     tiny sizes (seconds per scenario; what CI runs: its figures mean nothing)\n"
                + "  --rounds N  alternating rounds per side (default 3)\n"
                + "  --out DIR   where <scenario>.json and <scenario>.txt go (default bench-results)\n"
                + "against a running cluster with the plugin and two registered bookie clusters (cutover only):\n"
                + "       run-bench.sh cutover --service-url pulsar://HOST:6650 --admin-url http://HOST:8080\n"
                + "                    [--namespace TENANT/NS] [--target CLUSTER] [--rounds N]\n"
                + "  switches back and forth once per round under a paced load on topics bcs-bench-cutover-t*\n"
                + "  (created in --namespace, default public/default, and deleted at the end); a token for\n"
                + "  authentication is read from the environment variable BENCH_AUTH_TOKEN";
    }
}
