package io.bcswitch.migration;

import java.util.List;

/**
 * Outcome of a cleanup call.
 *
 * @param dryRun   true: nothing was deleted, {@code targets} is what a real run would delete
 * @param targets  ledgers deleted (or to delete), at most {@code maxDeletions}
 * @param deleted  ledgers actually deleted
 * @param kept     ledgers on the cluster that stay: still referenced and home there, or of unknown origin
 * @param deprecated the cluster now holds nothing the brokers reference and was marked DEPRECATED
 * @param notes    why ledgers that would otherwise go are kept for now (open on a broker, home copy missing)
 */
public record CleanupResult(boolean dryRun, String srcCluster, List<CleanupTarget> targets, int deleted, int kept,
                            List<String> errors, boolean deprecated, List<String> notes) {
}
