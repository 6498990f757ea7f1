package io.bcswitch.launcher;

import io.bcswitch.audit.VerifyReport;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.switching.StatusReport;
import java.io.PrintStream;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.CursorStats;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;

/**
 * The demo's closing report: messages per topic (every acknowledged message accounted for), publish latency per
 * phase, the migration and the invariant check, the switch and the cutover, the id-range table, and where each
 * topic's ledgers are, asked of each bookie cluster; then the verdict.
 */
final class DemoReport {

    /** What the demo observed, read by the report. */
    record Results(List<TopicLoad> loads, Latencies[] latencies, List<String> failures, List<String> warnings,
                   MigrationState migration, long buildStartNanos, long buildEndNanos, VerifyReport verifyReport,
                   Rest.Reply switchReply, long cutoverNanos, StatusReport lastStatus) {
    }

    private final PrintStream out;
    private final DateTimeFormatter time;
    private final long statusPollMs;

    DemoReport(PrintStream out, DateTimeFormatter time, long statusPollMs) {
        this.out = out;
        this.time = time;
        this.statusPollMs = statusPollMs;
    }

    static void section(PrintStream out, DateTimeFormatter time, String title) {
        out.println();
        out.println("== " + title + " [" + time.format(Instant.now()) + "]");
        out.flush();
    }

/** Prints the report; failures and warnings found on the way are added to the results' lists. */
void print(Results r, PulsarAdmin admin, Map<String, Set<Long>> onCluster) throws Exception {
    List<TopicLoad> loads = r.loads();
    List<String> failures = r.failures();
    List<String> warnings = r.warnings();
    section(out, time, "REPORT");

        // messages
        out.println("Messages (sent = acknowledged to the producer)");
        String fmt = "  %-10s %8s %9s %6s %11s %13s %12s %8s %12s%n";
        out.printf(fmt, "topic", "sent", "received", "lost", "duplicated", "out-of-order", "send-failed",
                "pending", "unconfirmed");
        TopicLoad.Counts total = TopicLoad.Counts.zero();
        List<TopicLoad.Counts> perTopic = new ArrayList<>();
        for (TopicLoad load : loads) {
            TopicLoad.Counts c = load.counts();
            perTopic.add(c);
            total = total.plus(c);
            printCounts(fmt, shortName(load.topic), c);
        }
        printCounts(fmt, "TOTAL", total);
        for (int i = 0; i < loads.size(); i++) {
            TopicLoad.Counts c = perTopic.get(i);
            String name = shortName(loads.get(i).topic);
            if (c.lostSample() != null) {
                out.println("  " + name + " lost seq: " + c.lostSample());
            }
            if (c.firstSendError() != null) {
                out.println("  " + name + " first send error: " + c.firstSendError());
            }
            if (c.pending() > 0) {
                out.println("  " + name + " " + c.pending() + " sends outstanding; " + loads.get(i).producerState());
            }
            if (c.consumerError() != null) {
                out.println("  " + name + " consumer error: " + c.consumerError());
            }
        }
        if (total.lost() > 0) {
            failures.add(total.lost() + " acknowledged messages were never received");
        }
        if (total.sendFailed() > 0 || total.pending() > 0) {
            failures.add(total.sendFailed() + " sends failed, " + total.pending() + " never completed");
        }
        if (total.sent() == 0) {
            failures.add("no message was acknowledged");
        }
        if (total.duplicates() > 0) {
            warnings.add(total.duplicates() + " duplicate deliveries (redelivery, at-least-once)");
        }
        if (total.outOfOrder() > 0) {
            warnings.add(total.outOfOrder() + " messages arrived out of order");
        }

        // latency
        out.println();
        out.println("Publish latency, send -> ack (ms)");
        String lfmt = "  %-8s %8s %9s %9s %9s%n";
        out.printf(lfmt, "phase", "count", "p50", "p99", "max");
        String[] names = {"before", "during", "build", "after"};
        long[] p99 = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            Latencies.Summary s = r.latencies()[i].summary();
            p99[i] = s.p99();
            out.printf(lfmt, names[i], s.count(), ms(s.p50()), ms(p99[i]), ms(s.max()));
        }
        if (p99[0] > 0) {
            StringBuilder ratios = new StringBuilder("  p99 relative to 'before':");
            for (int i = 1; i < names.length; i++) {
                ratios.append(p99[i] < 0 ? String.format(" %s -", names[i])
                        : String.format(" %s %.1fx", names[i], (double) p99[i] / p99[0]));
            }
            out.println(ratios);
        }

        // migration
        if (r.migration() != null) {
            out.println();
            double secs = r.buildStartNanos() < 0 || r.buildEndNanos() < 0 ? -1
                : (r.buildEndNanos() - r.buildStartNanos()) / 1e9;
            int moved = r.migration().copied() + r.migration().alreadyPresent();
            out.printf("%-34s %s: %d planned, %d copied, %d promoted, %d failed, %d skipped, %d collisions%n",
                    "Migration (switch epoch " + r.migration().switchEpoch() + ")", r.migration().phase(),
                    r.migration().planned(), r.migration().copied(), r.migration().promoted(), r.migration().failed(),
                    r.migration().skipped(), r.migration().collisions());
            out.printf("%-34s %s%n", "BUILD throughput", secs <= 0 ? "BUILD not observed"
                    : String.format("%d ledgers, %.2f MB in %.2f s: %.1f ledgers/s, %.2f MB/s (status polled "
                            + "every 100 ms)", moved, r.migration().bytesCopied() / 1e6, secs, moved / secs,
                            r.migration().bytesCopied() / 1e6 / secs));
        }

        if (r.verifyReport() != null) {
            out.printf("%-34s %s: %d referenced ledgers on %s, %d relocations, copies compared entry by entry%s%n",
                    "Invariants (GET /verify?deep=true)", r.verifyReport().ok() ? "OK"
                            : r.verifyReport().violations().size() + " VIOLATION(S)", r.verifyReport().referencedLedgers(),
                    r.verifyReport().clusters(), r.verifyReport().relocations(), r.verifyReport().unchecked().isEmpty() ? ""
                            : "; not checked: " + r.verifyReport().unchecked());
        }

        // switch
        out.println();
        out.printf("%-34s %s%n", "Switch call (POST /switch)", r.switchReply() == null ? "-"
                : String.format("%.1f ms, HTTP %d", r.switchReply().millis(), r.switchReply().status()));
        out.printf("%-34s %s%n", "Switch -> cutover complete", r.cutoverNanos() < 0 ? "not reached"
                : String.format("%.2f s (status polled every %d ms)", r.cutoverNanos() / 1e9, statusPollMs));
        if (r.lastStatus() != null) {
            out.printf("%-34s %s, epoch %d%n", "Active bookie cluster", r.lastStatus().activeCluster(),
                    r.lastStatus().epoch());
            if (r.lastStatus().brokers() != null) {
                for (BrokerCutoverRecord b : r.lastStatus().brokers()) {
                    out.printf("%-34s applied epoch %d on %s, moved %d/%d, failed %d, %s%n",
                            "Broker " + b.broker(), b.appliedEpoch(), b.activeCluster(), b.topicsMoved(),
                            b.topicsTotal(), b.topicsFailed(), b.done()
                                    ? String.format("took %d ms", b.finishedAt() - b.startedAt())
                                    : "running");
                    if (b.topicsFailed() > 0) {
                        warnings.add("broker " + b.broker() + " reports " + b.topicsFailed()
                                + " topics whose rollover failed");
                    }
                }
            }
        }

        // ranges
        List<IdRange> ranges = r.lastStatus() == null || r.lastStatus().ranges() == null ? List.of()
                : r.lastStatus().ranges();
        out.println();
        out.println("Ledger-id range table (GET /status)");
        String rfmt = "  %-12s %20s %5s %6s  %s%n";
        out.printf(rfmt, "cluster", "firstLedgerId", "HOB", "epoch", "since");
        for (IdRange range : ranges) {
            out.printf(rfmt, range.cluster(), range.firstLedgerId(), range.highOrderBits(), range.epoch(),
                    time.format(Instant.ofEpochMilli(range.since())));
        }
        if (ranges.isEmpty()) {
            out.println("  (none)");
        }

        // ledgers
        out.println();
        out.println("Ledgers per topic (getInternalStats) and the bookie cluster that holds them");
        String gfmt = "  %-10s %-7s %20s %14s  %-12s %-12s %s%n";
        out.printf(gfmt, "topic", "kind", "ledgerId", "entries", "found on", "range owner", "");
        int anomalies = 0;
        for (TopicLoad load : loads) {
            PersistentTopicInternalStats stats = admin.topics().getInternalStats(load.topic);
            for (int i = 0; i < stats.ledgers.size(); i++) {
                LedgerInfo li = stats.ledgers.get(i);
                // the last ledger is the open one: its entry count is only in currentLedgerEntries
                boolean open = i == stats.ledgers.size() - 1 && li.entries == 0;
                anomalies += printLedger(gfmt, shortName(load.topic), "data", li.ledgerId,
                        open ? stats.currentLedgerEntries + " (open)" : Long.toString(li.entries),
                        onCluster, ranges);
            }
            CursorStats cursor = stats.cursors == null ? null : stats.cursors.get(TopicLoad.SUBSCRIPTION);
            if (cursor != null && cursor.cursorLedger >= 0) {
                anomalies += printLedger(gfmt, shortName(load.topic), "cursor", cursor.cursorLedger, "",
                        onCluster, ranges);
            }
        }
        if (anomalies > 0) {
            warnings.add(anomalies + " ledgers found on both clusters or on neither (see !! above)");
        }

        // verdict
        out.println();
        for (String w : warnings) {
            out.println("WARNING: " + w);
        }
        for (String f : failures) {
            out.println("FAILURE: " + f);
        }
        out.println(failures.isEmpty() ? "RESULT: PASS" : "RESULT: FAIL");
        out.flush();
    }

    private int printLedger(String fmt, String topic, String kind, long ledgerId, String entries,
                            Map<String, Set<Long>> onCluster, List<IdRange> ranges) {
        List<String> where = new ArrayList<>();
        onCluster.forEach((name, ids) -> {
            if (ids.contains(ledgerId)) {
                where.add(name);
            }
        });
        String found = where.isEmpty() ? "NEITHER" : String.join("+", where);
        String owner = rangeOwner(ranges, ledgerId);
        String flag = where.size() == 1 ? (where.get(0).equals(owner) ? "" : "(owner differs)")
                : where.isEmpty() ? "!! on neither cluster" : "!! on both clusters";
        out.printf(fmt, topic, kind, ledgerId, entries, found, owner, flag);
        return where.size() == 1 ? 0 : 1;
    }

    private void printCounts(String fmt, String name, TopicLoad.Counts c) {
        out.printf(fmt, name, c.sent(), c.received(), c.lost(), c.duplicates(), c.outOfOrder(), c.sendFailed(),
                c.pending(), c.unconfirmed());
    }

    static String rangeOwner(List<IdRange> ranges, long ledgerId) {
        String owner = "?";
        for (IdRange r : ranges) {
            if (r.firstLedgerId() <= ledgerId) {
                owner = r.cluster();
            } else {
                break;
            }
        }
        return owner;
    }

    private static String shortName(String topic) {
        return topic.substring(topic.lastIndexOf('/') + 1);
    }

    private static String ms(long nanos) {
        return nanos < 0 ? "-" : String.format("%.2f", nanos / 1e6);
    }
}
