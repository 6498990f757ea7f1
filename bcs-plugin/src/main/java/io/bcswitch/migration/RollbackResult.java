package io.bcswitch.migration;

import io.bcswitch.switching.SwitchResult;

/**
 * An accepted rollback.
 *
 * @param rolledBackEpoch  the switch that was undone
 * @param switched         the new switch back to the previous cluster (a fresh id range); null when a later switch
 *                         had already replaced it. Its precheck is null when another pass made the switch back
 * @param promotionsFlipped relocations of the rolled-back switch removed (reads go back to the originals)
 * @param copiesToDelete   copies on the rolled-back target deleted once every broker has applied that
 */
public record RollbackResult(long rolledBackEpoch, SwitchResult switched, int promotionsFlipped, int copiesToDelete) {
}
