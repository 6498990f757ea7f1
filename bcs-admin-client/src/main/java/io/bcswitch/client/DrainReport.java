package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;
import java.util.Map;

/**
 * What still pins a bookie cluster (ledgers the broker cluster references whose home is there), and
 * when retention will have removed its data ledgers ({@code switchOffAfter}, epoch millis, or null).
 * {@code openHandles} counts, by broker, the ledger handles live brokers hold open on the cluster: its
 * clients are not closed, nor the ledgers those handles read deleted, while there are any (a topic unload
 * releases them); null from brokers that do not report them.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record DrainReport(String cluster, boolean active, String status, boolean empty, int ledgers, long bytes,
                          List<KindTotal> byKind, int openLedgers, List<DataLedger> dataLedgers, Long switchOffAfter,
                          String note, Map<String, Integer> openHandles) {

    /** Without open handles (kept so that code written against earlier versions still compiles). */
    public DrainReport(String cluster, boolean active, String status, boolean empty, int ledgers, long bytes,
                       List<KindTotal> byKind, int openLedgers, List<DataLedger> dataLedgers, Long switchOffAfter,
                       String note) {
        this(cluster, active, status, empty, ledgers, bytes, byKind, openLedgers, dataLedgers, switchOffAfter, note,
                null);
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record KindTotal(String kind, int ledgers, long bytes) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record DataLedger(long ledgerId, String managedLedger, long bytes, Long removableAfter, String retention) {
    }
}
