package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * An accepted rollback: the switch undone, the switch back, promotions flipped, copies to delete. {@code switched}
 * is null when a later switch had already replaced the switch back; its {@code precheck} is null when another
 * broker's pass finished the rollback and made the switch back.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RollbackResult(long rolledBackEpoch, SwitchOutcome switched, int promotionsFlipped,
                             int copiesToDelete) {
}
