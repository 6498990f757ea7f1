package io.bcswitch.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Asks the operator to confirm a command that changes what the cluster writes to. */
final class Prompt {
    private final PrintStream out;
    private final InputStream in;

    Prompt(PrintStream out, InputStream in) {
        this.out = out;
        this.in = in;
    }

    boolean confirm(String question) throws IOException {
        out.print(question + " [y/N] ");
        out.flush();
        String answer = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).readLine();
        return answer != null && (answer.trim().equalsIgnoreCase("y") || answer.trim().equalsIgnoreCase("yes"));
    }
}
