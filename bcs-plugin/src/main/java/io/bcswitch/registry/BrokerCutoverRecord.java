package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * A broker's state as the plugin on it reports it, kept as an ephemeral node at
 * {@code <configPath>/brokers/<brokerId>} (re-created after a metadata session is re-established), so that status
 * only shows live brokers and every switch, PROMOTE batch and deletion can tell what each broker routes with.
 *
 * @param appliedEpoch       switch epoch this broker has made active
 * @param activeCluster      cluster new ledgers are created on by this broker
 * @param topicsTotal        open ledgers found on another cluster since the cutover started
 * @param topicsMoved        of those, now writing to the active cluster (or closed)
 * @param topicsFailed       of those, still on another cluster although their roll was tried
 * @param startedAt          epoch millis the cutover started
 * @param finishedAt         epoch millis every open ledger of the broker (cursor ledgers included) was found on
 *                           the active cluster, 0 until then
 * @param activationError    why the broker could not make the latest directive's target active yet (it retries),
 *                           null when nothing failed
 * @param activationAttempts failed attempts to activate the latest directive's target
 * @param openHandles        ledger handles this broker holds open, by cluster
 * @param openLedgers        ids of ledgers this broker holds open on clusters other than the active one (at most
 *                           {@link #MAX_OPEN_LISTED} per cluster): cleanup never deletes them there
 * @param preparedFirstLedgerId first ledger id of the announced switch ({@link SwitchPreparation}) this broker has
 *                           its clients of the target ready for, 0 for none
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record BrokerCutoverRecord(int formatVersion, String broker, long appliedEpoch, String activeCluster,
                                  int topicsTotal, int topicsMoved, int topicsFailed,
                                  long startedAt, long finishedAt, String activationError, int activationAttempts,
                                  Map<String, Integer> openHandles, Map<String, List<Long>> openLedgers,
                                  long preparedFirstLedgerId) {
    public static final int FORMAT_VERSION = 1;
    public static final int MAX_OPEN_LISTED = 1000;

    public BrokerCutoverRecord {
        openHandles = openHandles == null ? Map.of() : Map.copyOf(openHandles);
        openLedgers = openLedgers == null ? Map.of() : Map.copyOf(openLedgers);
    }

    public BrokerCutoverRecord(int formatVersion, String broker, long appliedEpoch, String activeCluster,
                               int topicsTotal, int topicsMoved, int topicsFailed, long startedAt, long finishedAt) {
        this(formatVersion, broker, appliedEpoch, activeCluster, topicsTotal, topicsMoved, topicsFailed, startedAt,
                finishedAt, null, 0, Map.of(), Map.of(), 0L);
    }

    public boolean done() {
        return finishedAt > 0;
    }

    /** Whether this broker may still read ledger {@code ledgerId} on {@code cluster} through an open handle. */
    public boolean holdsOpen(String cluster, long ledgerId) {
        List<Long> ids = openLedgers.get(cluster);
        if (ids != null && ids.contains(ledgerId)) {
            return true;
        }
        // more handles than listed: any ledger of that cluster may be among them
        return ids != null && ids.size() >= MAX_OPEN_LISTED;
    }

    public BrokerCutoverRecord withActivation(String error, int attempts) {
        return new BrokerCutoverRecord(formatVersion, broker, appliedEpoch, activeCluster, topicsTotal, topicsMoved,
                topicsFailed, startedAt, finishedAt, error, attempts, openHandles, openLedgers, preparedFirstLedgerId);
    }

    /** The same record under broker id {@code id}. */
    public BrokerCutoverRecord withBroker(String id) {
        return new BrokerCutoverRecord(formatVersion, id, appliedEpoch, activeCluster, topicsTotal, topicsMoved,
                topicsFailed, startedAt, finishedAt, activationError, activationAttempts, openHandles, openLedgers,
                preparedFirstLedgerId);
    }

    public BrokerCutoverRecord withHandles(Map<String, Integer> counts, Map<String, List<Long>> ids) {
        return new BrokerCutoverRecord(formatVersion, broker, appliedEpoch, activeCluster, topicsTotal, topicsMoved,
                topicsFailed, startedAt, finishedAt, activationError, activationAttempts, counts, ids,
                preparedFirstLedgerId);
    }

    public BrokerCutoverRecord withPrepared(long firstLedgerId) {
        return new BrokerCutoverRecord(formatVersion, broker, appliedEpoch, activeCluster, topicsTotal, topicsMoved,
                topicsFailed, startedAt, finishedAt, activationError, activationAttempts, openHandles, openLedgers,
                firstLedgerId);
    }
}
