package io.bcswitch.cli;

import io.bcswitch.client.BookieCluster;
import io.bcswitch.client.BrokerProgress;
import io.bcswitch.client.ClusterFacts;
import io.bcswitch.client.IdRange;
import io.bcswitch.client.Precheck;
import io.bcswitch.client.Status;
import io.bcswitch.client.SwitchOutcome;
import io.bcswitch.client.VerifyReport;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

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
                + "registered:           " + time(c.registeredAt()) + "\n"
                + "instanceId:           " + (c.instanceId() == null ? "-" : c.instanceId()) + "\n";
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
        if (s.readMode() != null) {
            sb.append("Read mode:             ").append(s.readMode())
                    .append(" (each ledger from the cluster that holds it)\n");
        }
        sb.append("Cutover:               ").append(s.cutoverComplete() ? "complete" : "in progress");
        if (!s.cutoverComplete() && s.pendingBrokers() != null && !s.pendingBrokers().isEmpty()) {
            sb.append(" (waiting for ").append(String.join(", ", s.pendingBrokers())).append(')');
        }
        sb.append('\n');
        if (s.brokersWithoutRecord() != null && !s.brokersWithoutRecord().isEmpty()) {
            sb.append("Brokers without the plugin: ").append(String.join(", ", s.brokersWithoutRecord()))
                    .append(" (they run without it or are starting; a switch is refused while there are any)\n");
        }
        sb.append('\n');
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
            // what is wrong with a broker goes right under its row, so it cannot be read as another broker's
            List<String> lines = brokers.toString().lines().toList();
            sb.append("  ").append(lines.get(0)).append('\n');
            for (int i = 0; i < s.brokers().size(); i++) {
                sb.append("  ").append(lines.get(i + 1)).append('\n');
                brokerNotes(s.brokers().get(i)).forEach(n -> sb.append("      ").append(n).append('\n'));
            }
        }
        sb.append('\n').append("Registered clusters:\n").append(indent(clusters(s.clusters())));
        var t = s.tuning();
        if (t != null && (t.migrationBytesPerSecond() != null || t.migrationConcurrency() != null
                || t.cutoverTopicsPerSecond() != null)) {
            List<String> changed = new java.util.ArrayList<>();
            if (t.migrationBytesPerSecond() != null) {
                changed.add("migrationBytesPerSecond=" + t.migrationBytesPerSecond());
            }
            if (t.migrationConcurrency() != null) {
                changed.add("migrationConcurrency=" + t.migrationConcurrency());
            }
            if (t.cutoverTopicsPerSecond() != null) {
                changed.add("cutoverTopicsPerSecond=" + number(t.cutoverTopicsPerSecond()));
            }
            sb.append('\n').append("Pacing changed at run time (over broker.conf): ").append(String.join(", ", changed))
                    .append(" (get-tuning)\n");
        }
        if (s.migration() != null) {
            sb.append('\n').append(migration(s.migration()));
        }
        if (s.rolledBack() != null) {
            // the latest switch is this one's switch back: what the rollback did stays in view
            sb.append('\n').append("Rolled back: ").append(migration(s.rolledBack()));
        }
        if (s.relocationPendingBrokers() != null && !s.relocationPendingBrokers().isEmpty()) {
            sb.append("Relocation epoch ").append(s.relocationEpoch()).append(" not yet applied by: ")
                    .append(String.join(", ", s.relocationPendingBrokers()))
                    .append(" (PROMOTE waits for them; nothing they may read is deleted)\n");
        }
        return sb.toString();
    }

    /** A broker's activation failure and the handles it holds open on clusters that are not active. */
    static List<String> brokerNotes(BrokerProgress b) {
        List<String> notes = new ArrayList<>();
        if (b.activationError() != null) {
            notes.add("activation failed (" + b.activationAttempts() + " attempt(s), retrying): "
                    + b.activationError());
        }
        if (b.openHandles() != null && !b.openHandles().isEmpty()) {
            notes.add("handles open: " + counts(b.openHandles()));
        }
        return notes;
    }

    /** {@code a=1, b=2}, in key order. */
    private static String counts(Map<String, Integer> m) {
        return new TreeMap<>(m).entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(", "));
    }

    static String migration(io.bcswitch.client.Migration m) {
        StringBuilder sb = new StringBuilder();
        sb.append("Migration of switch epoch ").append(m.switchEpoch()).append(" to '").append(m.target()).append("': ")
                .append(m.phase()).append(m.owner() == null ? "" : " (on " + m.owner() + ")").append('\n');
        int moved = m.promoted();
        sb.append("  ").append(Table.progressBar(moved, m.planned(), 20)).append(' ').append(moved).append('/')
                .append(m.planned()).append(" promoted; ").append(m.copied()).append(" copied, ")
                .append(m.alreadyPresent()).append(" already present, ").append(m.failed()).append(" failed, ")
                .append(m.skipped()).append(" skipped, ").append(m.collisions()).append(" collisions, ")
                .append(m.bytesCopied()).append(" bytes copied");
        long end = m.finishedAt() > 0 ? m.finishedAt() : m.updatedAt();
        double secs = Math.max(0.001, (end - m.startedAt()) / 1000.0);
        sb.append(String.format(" (%.1f KB/s)", m.bytesCopied() / secs / 1024));
        if (m.notPromoted() > 0) {
            sb.append("; ").append(m.notPromoted()).append(" not promoted");
        }
        sb.append('\n');
        if ("ROLLING_BACK".equals(m.phase())) {
            // a rollback is recorded before it is carried out; the brokers retry a failed step by themselves
            sb.append("  Rollback to ").append(m.rollbackTo()).append(" in progress")
                    .append(m.rollbackError() == null ? "" : ": " + m.rollbackError()
                            + " (retried; 'rollback' again resumes it)").append('\n');
        }
        if (m.pendingDeletionCount() > 0) {
            sb.append("  Copies still to delete from '").append(m.target()).append("': ")
                    .append(m.pendingDeletionCount()).append(" (deleted once every live broker routes without them)\n");
        }
        if (m.issues() != null && !m.issues().isEmpty()) {
            Table t = new Table("LEDGER", "KIND", "ON", "RESULT", "DETAIL");
            for (var i : m.issues()) {
                t.row(i.ledgerId(), i.kind(), i.cluster(), i.result(), i.detail());
            }
            sb.append(indent(t.toString()));
        }
        return sb.toString();
    }

    static String tuning(io.bcswitch.client.Tuning t) {
        StringBuilder sb = new StringBuilder("Pacing (this broker now; broker.conf; changed at run time):\n");
        var s = t.stored();
        row(sb, "migrationBytesPerSecond", t.effective().migrationBytesPerSecond(),
                t.brokerConf().migrationBytesPerSecond(), s == null ? null : s.migrationBytesPerSecond());
        row(sb, "migrationConcurrency", t.effective().migrationConcurrency(), t.brokerConf().migrationConcurrency(),
                s == null ? null : s.migrationConcurrency());
        row(sb, "cutoverTopicsPerSecond", t.effective().cutoverTopicsPerSecond(),
                t.brokerConf().cutoverTopicsPerSecond(), s == null ? null : s.cutoverTopicsPerSecond());
        sb.append("Every broker applies a change within seconds.\n");
        return sb.toString();
    }

    private static void row(StringBuilder sb, String key, Object now, Object conf, Object stored) {
        sb.append(String.format("  %-24s %-14s broker.conf %-14s %s%n", key, number(now), number(conf),
                stored == null ? "(not changed)" : "changed to " + number(stored)));
    }

    private static String number(Object n) {
        return n instanceof Double d && d == Math.rint(d) ? Long.toString(d.longValue()) : String.valueOf(n);
    }

    static String drain(io.bcswitch.client.DrainReport d) {
        StringBuilder sb = new StringBuilder();
        sb.append("Bookie cluster '").append(d.cluster()).append("' (").append(d.status())
                .append(d.active() ? ", active" : "").append("): ")
                .append(d.empty() ? "holds nothing the brokers reference" : d.ledgers() + " referenced ledger(s), "
                        + d.bytes() + " bytes").append('\n');
        if (!d.byKind().isEmpty()) {
            Table t = new Table("KIND", "LEDGERS", "BYTES");
            d.byKind().forEach(k -> t.row(k.kind(), k.ledgers(), k.bytes()));
            sb.append(indent(t.toString()));
        }
        if (d.openLedgers() > 0) {
            sb.append("  open ledgers: ").append(d.openLedgers()).append('\n');
        }
        if (d.openHandles() != null && !d.openHandles().isEmpty()) {
            // they keep the cluster's clients open and the ledgers they read from being deleted
            sb.append("Open handles on ").append(d.cluster()).append(": ").append(counts(d.openHandles()))
                    .append(" (released when their topics unload)\n");
        }
        if (!d.dataLedgers().isEmpty()) {
            Table t = new Table("DATA LEDGER", "MANAGED LEDGER", "BYTES", "REMOVED BY RETENTION AFTER", "RETENTION");
            d.dataLedgers().forEach(l -> t.row(l.ledgerId(), l.managedLedger(), l.bytes(),
                    l.removableAfter() == null ? "never" : time(l.removableAfter()), l.retention()));
            sb.append(indent(t.toString()));
        }
        sb.append("Can be switched off after: ").append(d.empty() ? "now (after cleanup)"
                : d.switchOffAfter() == null ? "unknown" : time(d.switchOffAfter())).append('\n');
        sb.append(d.note()).append('\n');
        return sb.toString();
    }

    static String cleanup(io.bcswitch.client.CleanupResult r) {
        StringBuilder sb = new StringBuilder();
        sb.append(r.dryRun() ? "Dry run: would delete " : "Deleted ").append(r.dryRun() ? r.targets().size() : r.deleted())
                .append(" ledger(s) from '").append(r.srcCluster()).append("'; ").append(r.kept()).append(" kept")
                .append(r.deprecated() ? "; the cluster is now DEPRECATED" : "").append('\n');
        sb.append(cleanupTargets(r.targets()));
        r.errors().forEach(e -> sb.append("  error: ").append(e).append('\n'));
        if (r.notes() != null) {
            r.notes().forEach(n -> sb.append("  kept for now: ").append(n).append('\n'));
        }
        if (r.dryRun() && !r.targets().isEmpty()) {
            sb.append("Run again with --delete to delete them.\n");
        }
        return sb.toString();
    }

    static String cleanupTargets(java.util.List<io.bcswitch.client.CleanupTarget> targets) {
        if (targets.isEmpty()) {
            return "  (no ledger to delete)\n";
        }
        Table t = new Table("LEDGER", "CLUSTER", "REASON");
        targets.forEach(x -> t.row(x.ledgerId(), x.cluster(), x.reason()));
        return indent(t.toString());
    }

    static String rollback(io.bcswitch.client.RollbackResult r) {
        String flipped = r.promotionsFlipped() + " promotion(s) flipped back, " + r.copiesToDelete();
        String done;
        if (r.switched() == null) {
            done = "Rolled back switch epoch " + r.rolledBackEpoch() + ": a later switch had already replaced the "
                    + "switch back (see status for the active cluster); " + flipped + " copy/copies of the rolled-back "
                    + "switch deleted once every broker has applied that.\n";
        } else {
            var d = r.switched().directive();
            done = "Rolled back switch epoch " + r.rolledBackEpoch() + ": new ledgers are created on '" + d.target()
                    + "' again (epoch " + d.epoch() + ", first ledger id " + d.firstLedgerId() + "); " + flipped
                    + " copy/copies on '" + d.origin() + "' deleted once every broker has applied that.\n";
        }
        if (r.notReversed().isEmpty()) {
            return done;
        }
        // nothing of them is lost: they stay readable where they are, and the next migration moves them
        StringBuilder sb = new StringBuilder(done).append(r.notReversed().size())
                .append(" ledger(s) could not be routed back and stay home where they are:\n");
        r.notReversed().forEach(i -> sb.append("  ledger ").append(i.ledgerId()).append(" on '").append(i.cluster())
                .append("': ").append(i.detail()).append('\n'));
        return sb.toString();
    }

    static String operationStarted(io.bcswitch.client.Operation op) {
        return "Started operation " + op.id() + " (" + op.operation() + " on broker " + op.broker() + "); follow it "
                + "with: pulsar-admin bookie-clusters operation " + op.id() + "\n";
    }

    static String operations(List<io.bcswitch.client.Operation> ops) {
        if (ops.isEmpty()) {
            return "  (no operation)\n";
        }
        Table t = new Table("ID", "OPERATION", "STATE", "STATUS", "BROKER", "STARTED");
        ops.forEach(o -> t.row(o.id(), o.operation(), o.state(), o.httpStatus() == null ? "" : o.httpStatus(),
                o.broker(), time(o.startedAt())));
        return t.toString();
    }

    /** One operation; once it is DONE, its result as the synchronous command prints it. */
    static String operation(io.bcswitch.client.Operation op) {
        StringBuilder sb = new StringBuilder("Operation " + op.id() + ": " + op.operation() + " " + op.parameters()
                + " on broker " + op.broker() + ", " + op.state() + ", started " + time(op.startedAt())
                + (op.finishedAt() == null ? "" : ", finished " + time(op.finishedAt())) + "\n");
        if (op.running()) {
            return sb.toString();
        }
        if ("LOST".equals(op.state())) {
            return sb.append("The broker running it stopped before it ended; start it again.\n").toString();
        }
        if (!"DONE".equals(op.state())) {
            String reason = op.result() != null && op.result().hasNonNull("reason") ? op.result().get("reason").asText()
                    : String.valueOf(op.result());
            return sb.append("Failed (HTTP ").append(op.httpStatus()).append("): ").append(reason).append('\n')
                    .toString();
        }
        try {
            switch (op.operation()) {
                case "drain" -> sb.append(drain(RESULTS.treeToValue(op.result(),
                        io.bcswitch.client.DrainReport.class)));
                case "cleanup" -> sb.append(cleanup(RESULTS.treeToValue(op.result(),
                        io.bcswitch.client.CleanupResult.class)));
                case "verify" -> sb.append(verify(RESULTS.treeToValue(op.result(), VerifyReport.class)));
                default -> sb.append(op.result()).append('\n');
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            sb.append(op.result()).append('\n');
        }
        return sb.toString();
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper RESULTS =
            new com.fasterxml.jackson.databind.ObjectMapper().configure(
                    com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    static String verify(VerifyReport v) {
        StringBuilder sb = new StringBuilder();
        String scope = " (" + v.referencedLedgers() + " referenced ledgers on " + v.clusters().size() + " clusters, "
                + v.relocations() + " relocations checked" + (v.deep() ? ", deep" : "") + ")";
        sb.append(v.violations().isEmpty() ? "OK: no violation" : "VIOLATIONS: " + v.violations().size())
                .append(scope).append('\n');
        for (VerifyReport.Violation x : v.violations()) {
            sb.append("  ").append(x.check()).append(" ledger=").append(x.ledgerId() == null ? "-" : x.ledgerId())
                    .append(" cluster=").append(x.cluster() == null ? "-" : x.cluster())
                    .append(x.referencedBy() == null ? "" : " [" + x.referencedBy() + "]")
                    .append(": ").append(x.detail()).append('\n');
        }
        for (String u : v.unchecked()) {
            sb.append("Not checked: ").append(u).append('\n');
        }
        for (VerifyReport.Notice n : v.notices()) {
            sb.append("Notice: ").append(n.kind()).append(" ledger=").append(n.ledgerId() == null ? "-" : n.ledgerId())
                    .append(" cluster=").append(n.cluster() == null ? "-" : n.cluster()).append(": ")
                    .append(n.detail()).append('\n');
        }
        if (v.removal() != null) {
            sb.append("Safe to remove the plugin: ").append(v.removal().safe() ? "yes" : "no").append(", because ")
                    .append(String.join("; ", v.removal().because())).append('\n');
        }
        return sb.toString();
    }

    private static String indent(String block) {
        return block.lines().map(l -> "  " + l).reduce("", (a, b) -> a + b + "\n");
    }
}
