package io.bcswitch.cli;

import io.bcswitch.client.BookieCluster;
import io.bcswitch.client.BrokerProgress;
import io.bcswitch.client.ClusterFacts;
import io.bcswitch.client.IdRange;
import io.bcswitch.client.Precheck;
import io.bcswitch.client.Status;
import io.bcswitch.client.SwitchOutcome;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/** Human-readable output of each command (what is printed without {@code --output json}). */
final class Render {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'")
            .withZone(ZoneOffset.UTC);

    private Render() {
    }

    static String time(long millis) {
        return millis <= 0 ? "-" : TIME.format(Instant.ofEpochMilli(millis));
    }

    static String clusters(List<BookieCluster> clusters) {
        if (clusters.isEmpty()) {
            return "No bookie clusters are registered.\n";
        }
        Table t = new Table("NAME", "STATUS", "METADATA SERVICE URI", "REGISTERED");
        for (BookieCluster c : clusters) {
            t.row(c.name(), c.status(), c.metadataServiceUri(), time(c.registeredAt()));
        }
        return t.toString();
    }

    static String cluster(BookieCluster c) {
        return "name:                 " + c.name() + "\n"
                + "status:               " + c.status() + "\n"
                + "metadataServiceUri:   " + c.metadataServiceUri() + "\n"
                + "registered:           " + time(c.registeredAt()) + "\n";
    }

    static String precheck(Precheck p) {
        StringBuilder sb = new StringBuilder();
        sb.append("Precheck for switching to '").append(p.target()).append("': ")
                .append(p.ok() ? "OK" : "NOT OK").append('\n');
        for (String problem : p.problems()) {
            sb.append("  problem: ").append(problem).append('\n');
        }
        if (p.warnings() != null) {
            for (String warning : p.warnings()) {
                sb.append("  warning: ").append(warning).append('\n');
            }
        }
        Table t = new Table("", "CLUSTER", "REACHABLE", "WRITABLE BOOKIES", "READ-ONLY BOOKIES", "63-BIT IDS");
        t.row("source", p.source(), p.sourceReachable() ? "yes" : "no (" + p.sourceError() + ")",
                writable(p.sourceFacts()), readOnly(p.sourceFacts()), ids(p.sourceFacts()));
        t.row("target", p.target(), p.targetFacts() != null ? "yes" : "no", writable(p.targetFacts()),
                readOnly(p.targetFacts()), ids(p.targetFacts()));
        sb.append(t);
        sb.append("Writable bookies needed: ").append(p.requiredWritableBookies())
                .append("; first ledger id on the target would be ").append(p.proposedFirstLedgerId()).append('\n');
        return sb.toString();
    }

    private static Object writable(ClusterFacts f) {
        return f == null ? null : f.writableBookies();
    }

    private static Object readOnly(ClusterFacts f) {
        return f == null ? null : f.readOnlyBookies();
    }

    private static Object ids(ClusterFacts f) {
        return f == null ? null : f.supports63BitIds() ? "yes" : "no";
    }

    static String switched(SwitchOutcome s) {
        return "Switched: new ledgers are created on '" + s.directive().target() + "' (epoch "
                + s.directive().epoch() + ", previously '" + s.directive().origin() + "', first ledger id "
                + s.directive().firstLedgerId() + ").\n"
                + "Brokers move their open ledgers now; follow with: pulsar-admin bookie-clusters status\n";
    }

    static String status(Status s) {
        StringBuilder sb = new StringBuilder();
        sb.append("Active bookie cluster: ").append(s.activeCluster()).append('\n');
        sb.append("Epoch:                 ").append(s.epoch());
        if (s.directive() != null) {
            sb.append(" (switched from '").append(s.directive().origin()).append("' at ")
                    .append(time(s.directive().ts())).append(')');
        }
        sb.append('\n');
        sb.append("Cutover:               ").append(s.cutoverComplete() ? "complete" : "in progress");
        if (!s.cutoverComplete() && s.pendingBrokers() != null && !s.pendingBrokers().isEmpty()) {
            sb.append(" (waiting for ").append(String.join(", ", s.pendingBrokers())).append(')');
        }
        sb.append("\n\n");
        sb.append("Ledger-id ranges:\n");
        Table ranges = new Table("EPOCH", "CLUSTER", "FIRST LEDGER ID", "SINCE");
        for (IdRange r : s.ranges()) {
            ranges.row(r.epoch(), r.cluster(), r.firstLedgerId(), time(r.since()));
        }
        sb.append(indent(ranges.toString())).append('\n');
        sb.append("Brokers:\n");
        if (s.brokers().isEmpty()) {
            sb.append("  (no live broker has reported progress)\n");
        } else {
            Table brokers = new Table("BROKER", "EPOCH", "ACTIVE", "CUTOVER", "TOPICS", "FAILED");
            for (BrokerProgress b : s.brokers()) {
                String state = b.appliedEpoch() != s.epoch() ? "not applied" : b.done() ? "done" : "running";
                brokers.row(b.broker(), b.appliedEpoch(), b.activeCluster(),
                        Table.progressBar(b.topicsMoved(), b.topicsTotal(), 20) + " " + state,
                        b.topicsMoved() + "/" + b.topicsTotal(), b.topicsFailed());
            }
            sb.append(indent(brokers.toString()));
        }
        sb.append('\n').append("Registered clusters:\n").append(indent(clusters(s.clusters())));
        return sb.toString();
    }

    private static String indent(String block) {
        return block.lines().map(l -> "  " + l).reduce("", (a, b) -> a + b + "\n");
    }
}
