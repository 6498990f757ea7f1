package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * An accepted rollback: the switch undone, the switch back, promotions flipped, copies to delete. {@code switched}
 * is null when a later switch had already replaced the switch back; its {@code precheck} is null when another
 * broker's pass finished the rollback and made the switch back. {@code notReversed} names the ledgers the rollback
 * could not route back: they stay home on the rolled-back target, readable there, each with why (empty from brokers
 * that do not report them).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RollbackResult(long rolledBackEpoch, SwitchOutcome switched, int promotionsFlipped,
                             int copiesToDelete, List<Migration.Issue> notReversed) {
    public RollbackResult {
        notReversed = notReversed == null ? List.of() : notReversed;
    }

    /** Without notReversed (kept so that code written against earlier versions still compiles). */
    public RollbackResult(long rolledBackEpoch, SwitchOutcome switched, int promotionsFlipped, int copiesToDelete) {
        this(rolledBackEpoch, switched, promotionsFlipped, copiesToDelete, List.of());
    }
}
