package io.bcswitch.migration;

import java.util.List;

/**
 * What still pins a bookie cluster: the ledgers the broker cluster references whose home is there.
 *
 * @param empty          nothing the brokers reference is there: it can be switched off (after cleanup)
 * @param byKind         count and bytes per ledger kind
 * @param openLedgers    of those, ledgers whose metadata says open (or could not be read)
 * @param dataLedgers    data ledgers with the time retention removes them, oldest first (first 1000)
 * @param switchOffAfter epoch millis after which retention will have removed every data ledger there and
 *                       nothing else pins it, or null when that cannot be known (infinite retention, other
 *                       kinds still there, open ledgers)
 * @param note           how to read {@code switchOffAfter}
 * @param openHandles    ledger handles live brokers hold open on the cluster, by broker: its clients are not
 *                       closed, nor the ledgers those handles read deleted, while there are any (a topic unload
 *                       releases them)
 */
public record DrainReport(String cluster, boolean active, String status, boolean empty, int ledgers, long bytes,
                          List<KindTotal> byKind, int openLedgers, List<DataLedger> dataLedgers, Long switchOffAfter,
                          String note, java.util.Map<String, Integer> openHandles) {

    public record KindTotal(String kind, int ledgers, long bytes) {
    }

    /**
     * @param removableAfter epoch millis retention removes it once consumed, or null (infinite, or still open)
     */
    public record DataLedger(long ledgerId, String managedLedger, long bytes, Long removableAfter, String retention) {
    }
}
