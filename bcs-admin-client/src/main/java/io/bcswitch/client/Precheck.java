package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * Whether a registered cluster can become active, and why not.
 *
 * @param target                  the cluster checked
 * @param ok                      true when {@code problems} is empty
 * @param problems                reasons a switch would be refused
 * @param warnings                things worth knowing that do not block a switch
 * @param source                  the active cluster
 * @param sourceReachable         whether the active cluster's metadata answered (not required)
 * @param sourceError             why it did not, or null
 * @param sourceFacts             the active cluster's facts, or null
 * @param targetFacts             the target's facts, or null
 * @param requiredWritableBookies writable bookies new ledgers need
 * @param proposedFirstLedgerId   first ledger id the target would issue
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Precheck(String target, boolean ok, List<String> problems, List<String> warnings, String source,
                       boolean sourceReachable,
                       String sourceError, ClusterFacts sourceFacts, ClusterFacts targetFacts,
                       int requiredWritableBookies, long proposedFirstLedgerId) {
}
