package io.bcswitch.migration;

import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.switching.SwitchResult;
import java.util.List;

/**
 * An accepted rollback.
 *
 * @param rolledBackEpoch  the switch that was undone
 * @param switched         the new switch back to the previous cluster (a fresh id range); null when a later switch
 *                         had already replaced it. Its precheck is null when another pass made the switch back
 * @param promotionsFlipped relocations of the rolled-back switch removed (reads go back to the originals)
 * @param copiesToDelete   copies on the rolled-back target deleted once every broker has applied that
 * @param notReversed      ledgers that could not be routed back and stay home on the rolled-back target, each with
 *                         why (their copy elsewhere is gone, or its cluster is unregistered, retired, or did not
 *                         answer); nothing of them is lost, the next migration moves them
 */
public record RollbackResult(long rolledBackEpoch, SwitchResult switched, int promotionsFlipped, int copiesToDelete,
                             List<LedgerIssue> notReversed) {
    public RollbackResult {
        notReversed = notReversed == null ? List.of() : List.copyOf(notReversed);
    }

    /** With nothing kept on the rolled-back target. */
    public RollbackResult(long rolledBackEpoch, SwitchResult switched, int promotionsFlipped, int copiesToDelete) {
        this(rolledBackEpoch, switched, promotionsFlipped, copiesToDelete, List.of());
    }
}
