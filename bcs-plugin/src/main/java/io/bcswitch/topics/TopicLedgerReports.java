package io.bcswitch.topics;

import io.bcswitch.routing.Ownership;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Answers {@code GET /topics/{tenant}/{namespace}/{topic}}: each ledger of the topic with the cluster
 * that owns its id in this broker's range table, its size and entries, and the
 * {@value TopicLedgers#BOOKIE_CLUSTER_PROPERTY} ledger property when present.
 *
 * <p>Like the router, an id in the newest known range may belong to a range this broker has not heard
 * of yet, so in that case the ownership view is refreshed first.
 */
public final class TopicLedgerReports {

    private final TopicLedgers ledgers;
    private final Supplier<Ownership> ownership;
    private final Supplier<CompletableFuture<Ownership>> refresh;

    public TopicLedgerReports(TopicLedgers ledgers, Supplier<Ownership> ownership,
                              Supplier<CompletableFuture<Ownership>> refresh) {
        this.ledgers = ledgers;
        this.ownership = ownership;
        this.refresh = refresh;
    }

    /** The report for {@code persistent://tenant/namespace/localName}. */
    public CompletableFuture<TopicReport> report(String tenant, String namespace, String localName) {
        String topic = "persistent://" + tenant + "/" + namespace + "/" + localName;
        return ledgers.ledgers(tenant, namespace, localName).thenCompose(list -> {
            Ownership known = ownership.get();
            boolean mayBeNewer = list.stream().anyMatch(l -> known.mayBeInUnknownRange(l.ledgerId()));
            CompletableFuture<Ownership> view = mayBeNewer
                    ? refresh.get().exceptionally(e -> known)
                    : CompletableFuture.completedFuture(known);
            return view.thenApply(o -> build(topic, list, o));
        });
    }

    /** Joins the ledgers with the owners {@code o} gives their ids. */
    public static TopicReport build(String topic, List<TopicLedgers.Ledger> list, Ownership o) {
        List<LedgerReport> out = new ArrayList<>(list.size());
        for (TopicLedgers.Ledger l : list) {
            out.add(new LedgerReport(l.ledgerId(), o.owner(l.ledgerId()).orElse(null), l.size(), l.entries(),
                    l.properties().get(TopicLedgers.BOOKIE_CLUSTER_PROPERTY)));
        }
        return new TopicReport(topic, out);
    }

    /** The answer: the topic and its ledgers, oldest first. */
    public record TopicReport(String topic, List<LedgerReport> ledgers) {
        public TopicReport {
            ledgers = List.copyOf(ledgers);
        }
    }

    /**
     * One ledger.
     *
     * @param ledgerId                  ledger id
     * @param cluster                   owner of the id in the range table (null: no range covers it)
     * @param size                      bytes (null: still being written on another broker)
     * @param entries                   entries (null: as {@code size})
     * @param bookieClusterNameProperty value of the {@value TopicLedgers#BOOKIE_CLUSTER_PROPERTY} ledger
     *                                  property, null when the ledger has none
     */
    public record LedgerReport(long ledgerId, String cluster, Long size, Long entries,
                               String bookieClusterNameProperty) {
    }
}
