package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A broker's progress in applying the latest switch, kept as an ephemeral node at
 * {@code <configPath>/brokers/<brokerId>} so that status only shows live brokers.
 *
 * @param appliedEpoch   switch epoch this broker has made active
 * @param activeCluster  cluster new ledgers are created on by this broker
 * @param topicsTotal    topics whose open ledger needed to move at the start of the cutover
 * @param topicsMoved    of those, topics now writing to the active cluster
 * @param topicsFailed   topics whose rollover failed (they were unloaded or will retry)
 * @param startedAt      epoch millis the cutover started
 * @param finishedAt     epoch millis the cutover finished, 0 while running
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BrokerCutoverRecord(int formatVersion, String broker, long appliedEpoch, String activeCluster,
                                  int topicsTotal, int topicsMoved, int topicsFailed,
                                  long startedAt, long finishedAt) {
    public static final int FORMAT_VERSION = 1;

    public boolean done() {
        return finishedAt > 0;
    }
}
