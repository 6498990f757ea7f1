package io.bcswitch.migration;

/**
 * A ledger cleanup may delete from an old cluster, and why it is safe.
 *
 * @param reason RELOCATED (its verified copy elsewhere is its home and every live broker routes there),
 *               STRAY_COPY (a copy whose id another cluster owns and that is not home here), or
 *               UNREFERENCED (nothing in the broker metadata names it)
 */
public record CleanupTarget(long ledgerId, String cluster, String reason) {
}
