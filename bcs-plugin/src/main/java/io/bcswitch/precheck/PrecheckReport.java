package io.bcswitch.precheck;

import java.util.List;

/**
 * Result of checking whether a registered cluster can become active.
 *
 * @param target                target cluster
 * @param ok                    true when nothing below is a problem
 * @param problems              reasons the switch would be refused, empty when ok
 * @param warnings              things worth knowing that do not block the switch
 * @param source                currently active cluster
 * @param sourceReachable       whether the source's metadata service answered (a dead source does not block a switch)
 * @param sourceError           why the source could not be read, or null
 * @param sourceFacts           the source's facts, or null when unreachable
 * @param targetFacts           the target's facts, or null when unreachable
 * @param requiredWritableBookies ensemble size new ledgers need
 * @param proposedHighOrderBits   high-order bits the target's id range would start at
 * @param proposedFirstLedgerId   first ledger id of that range
 */
public record PrecheckReport(String target, boolean ok, List<String> problems, List<String> warnings, String source,
                             boolean sourceReachable, String sourceError, ClusterFacts sourceFacts,
                             ClusterFacts targetFacts, int requiredWritableBookies, long proposedHighOrderBits,
                             long proposedFirstLedgerId) {
}
