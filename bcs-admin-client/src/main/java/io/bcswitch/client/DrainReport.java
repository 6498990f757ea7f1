package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * What still pins a bookie cluster (ledgers the broker cluster references whose home is there), and
 * when retention will have removed its data ledgers ({@code switchOffAfter}, epoch millis, or null).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record DrainReport(String cluster, boolean active, String status, boolean empty, int ledgers, long bytes,
                          List<KindTotal> byKind, int openLedgers, List<DataLedger> dataLedgers, Long switchOffAfter,
                          String note) {

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record KindTotal(String kind, int ledgers, long bytes) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record DataLedger(long ledgerId, String managedLedger, long bytes, Long removableAfter, String retention) {
    }
}
