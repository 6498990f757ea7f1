package io.bcswitch.launcher;

import io.bcswitch.precheck.ClusterFacts;
import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.BrokerCutoverRecord;
import java.io.PrintStream;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;

/** What the switch demo prints while it runs: its sections and phases, each REST call, the precheck. */
final class DemoConsole {
    static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());
    private static final int BODY_CHARS = 600;

    private final PrintStream out;

    DemoConsole(PrintStream out) {
        this.out = out;
    }

    void section(String title) {
        DemoReport.section(out, TIME, title);
    }

    void phase(String name, double seconds) {
        section("Phase '" + name + "'" + (seconds > 0 ? String.format(" (%.1f s)", seconds)
                : " (switch until cutover complete)"));
    }

    void show(Rest.Reply r) {
        out.println("  " + r);
        out.println("    " + r.compact(BODY_CHARS));
    }

    void precheck(PrecheckReport p) {
        if (p == null) {
            return;
        }
        out.printf("  precheck %s -> %s: ok=%s, source reachable=%s, required writable bookies=%d, "
                        + "proposed first ledger id=%d (HOB %d)%n", p.source(), p.target(), p.ok(),
                p.sourceReachable(), p.requiredWritableBookies(), p.proposedFirstLedgerId(),
                p.proposedHighOrderBits());
        out.println("    source facts: " + facts(p.sourceFacts()));
        out.println("    target facts: " + facts(p.targetFacts()));
        if (p.problems() != null) {
            for (String problem : p.problems()) {
                out.println("    problem: " + problem);
            }
        }
        if (p.sourceError() != null) {
            out.println("    source error: " + p.sourceError());
        }
    }

    private static String facts(ClusterFacts f) {
        if (f == null) {
            return "-";
        }
        String layout = f.layoutManagerFactory() == null ? "?"
                : f.layoutManagerFactory().substring(f.layoutManagerFactory().lastIndexOf('.') + 1);
        return String.format("%s, 63-bit ids=%s, max HOB=%d, max ledger id=%d, writable bookies=%d, "
                        + "read-only=%d", layout, f.supports63BitIds(), f.maxHighOrderBits(), f.maxLedgerId(),
                f.writableBookies(), f.readOnlyBookies());
    }

    /** Each broker's cutover, for the status line printed while the demo waits for the cutover. */
    static String progress(List<BrokerCutoverRecord> brokers) {
        if (brokers == null || brokers.isEmpty()) {
            return "no broker progress";
        }
        StringBuilder sb = new StringBuilder();
        for (BrokerCutoverRecord b : brokers) {
            if (sb.length() > 0) {
                sb.append(" | ");
            }
            sb.append(b.broker()).append(": applied epoch ").append(b.appliedEpoch())
                    .append(" on ").append(b.activeCluster())
                    .append(", moved ").append(b.topicsMoved()).append('/').append(b.topicsTotal())
                    .append(", failed ").append(b.topicsFailed())
                    .append(b.done() ? ", done" : ", running");
        }
        return sb.toString();
    }
}
