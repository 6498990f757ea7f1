package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;
import java.util.Map;

/**
 * One live broker's progress applying the latest switch.
 *
 * @param broker             broker id
 * @param appliedEpoch       switch epoch the broker has applied
 * @param activeCluster      cluster the broker creates new ledgers on
 * @param topicsTotal        topics whose open ledger had to move
 * @param topicsMoved        of those, topics now writing to the active cluster
 * @param topicsFailed       topics whose rollover failed (unloaded or retried)
 * @param startedAt          epoch millis the cutover started
 * @param finishedAt         epoch millis it finished, 0 while running
 * @param activationError    why the broker could not make the latest switch's target active yet (it retries),
 *                           null when nothing failed
 * @param activationAttempts failed attempts to activate the latest switch's target
 * @param openHandles        ledger handles the broker holds open on clusters other than the active one, by
 *                           cluster
 * @param openLedgers        ids of the ledgers it holds open on clusters other than the active one (at most
 *                           1000 per cluster): cleanup does not delete them there, nor close-client that cluster
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BrokerProgress(String broker, long appliedEpoch, String activeCluster, int topicsTotal,
                             int topicsMoved, int topicsFailed, long startedAt, long finishedAt,
                             String activationError, int activationAttempts, Map<String, Integer> openHandles,
                             Map<String, List<Long>> openLedgers) {

    public BrokerProgress {
        // the plugin leaves empty maps out of its records; absent means none
        openHandles = openHandles == null ? Map.of() : openHandles;
        openLedgers = openLedgers == null ? Map.of() : openLedgers;
    }

    /** Progress only (kept so that code written against earlier versions still compiles). */
    public BrokerProgress(String broker, long appliedEpoch, String activeCluster, int topicsTotal, int topicsMoved,
                          int topicsFailed, long startedAt, long finishedAt) {
        this(broker, appliedEpoch, activeCluster, topicsTotal, topicsMoved, topicsFailed, startedAt, finishedAt,
                null, 0, Map.of(), Map.of());
    }

    public boolean done() {
        return finishedAt > 0;
    }
}
