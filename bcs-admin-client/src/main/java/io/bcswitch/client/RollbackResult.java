package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** An accepted rollback: the switch undone, the switch back, promotions flipped, copies to delete. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RollbackResult(long rolledBackEpoch, SwitchOutcome switched, int promotionsFlipped,
                             int copiesToDelete) {
}
