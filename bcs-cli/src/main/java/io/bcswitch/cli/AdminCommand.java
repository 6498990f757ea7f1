package io.bcswitch.cli;

import io.bcswitch.client.BookieClustersAdmin;
import io.bcswitch.client.BookieClustersAdminException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.pulsar.admin.cli.extensions.CommandExecutionContext;
import org.apache.pulsar.admin.cli.extensions.CustomCommand;
import org.apache.pulsar.admin.cli.extensions.ParameterDescriptor;
import org.apache.pulsar.admin.cli.extensions.ParameterType;
import org.apache.pulsar.client.admin.PulsarAdminException;

/**
 * One {@code pulsar-admin bookie-clusters} command: its parameters plus {@code --output}, and on execution the REST
 * client built from pulsar-admin's settings, its action, and every failure as a {@link PulsarAdminException}.
 */
final class AdminCommand implements CustomCommand {
    static final String OUTPUT = "--output";

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

    private final String name;
    private final String description;
    private final List<ParameterDescriptor> parameters;
    private final Action action;
    private final PrintStream out;

    AdminCommand(String name, String description, List<ParameterDescriptor> params, Action action, PrintStream out) {
        List<ParameterDescriptor> all = new ArrayList<>(params);
        all.add(ParameterDescriptor.builder().names(List.of(OUTPUT, "-o"))
                .description("output format: text (default) or json").type(ParameterType.STRING).build());
        this.name = name;
        this.description = description;
        this.parameters = all;
        this.action = action;
        this.out = out;
    }

    /**
     * A failure as pulsar-admin reports it. The extension API ignores a command's return value, so throwing is the
     * only way to make pulsar-admin exit with status 1.
     */
    static PulsarAdminException failure(int status, String reason) {
        // pulsar-admin prints the second argument first, then "Reason: <message>", and exits with 1
        return new PulsarAdminException(status > 0 ? "HTTP " + status : "bookie-clusters command failed", null,
                "error: " + reason, status);
    }

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
        return parameters;
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
}
