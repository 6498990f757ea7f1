package io.bcswitch.cli;

import io.bcswitch.client.Tuning;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;

/** The commands that show and change the pacing of the migration and the cutover at run time. */
final class TuningCommands {
    private final PrintStream out;

    TuningCommands(PrintStream out) {
        this.out = out;
    }

    CustomCommand getTuning() {
        return new AdminCommand("get-tuning",
                "Show the pacing settings: what the answering broker uses now, its "
                        + "broker.conf's values, and what was changed at run time",
                List.of(), (p, a, o) -> {
                    var t = a.tuning();
                    o.print(t, Render.tuning(t));
                }, out);
    }

    CustomCommand setTuning() {
        return new AdminCommand("set-tuning",
                "Change the migration's copy rate and concurrency and the cutover's pace while "
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
                    var change = change(p);
                    var t = a.setTuning(change);
                    o.print(t, Render.tuning(t));
                }, out);
    }

    /** The change the options of set-tuning ask for; refused (nothing sent) when it asks for none. */
    static Tuning.Change change(Map<String, Object> p) {
        var change = new Tuning.Change();
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
}
