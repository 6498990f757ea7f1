package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * One live broker's progress applying the latest switch.
 *
 * @param broker        broker id
 * @param appliedEpoch  switch epoch the broker has applied
 * @param activeCluster cluster the broker creates new ledgers on
 * @param topicsTotal   topics whose open ledger had to move
 * @param topicsMoved   of those, topics now writing to the active cluster
 * @param topicsFailed  topics whose rollover failed (unloaded or retried)
 * @param startedAt     epoch millis the cutover started
 * @param finishedAt    epoch millis it finished, 0 while running
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BrokerProgress(String broker, long appliedEpoch, String activeCluster, int topicsTotal,
                             int topicsMoved, int topicsFailed, long startedAt, long finishedAt) {
    public boolean done() {
        return finishedAt > 0;
    }
}
