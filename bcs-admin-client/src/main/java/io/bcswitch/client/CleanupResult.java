package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * Outcome of a cleanup; with {@code dryRun} nothing was deleted and {@code targets} is the plan.
 *
 * @param notes why ledgers that would otherwise go are kept for now (open on a broker, home copy missing);
 *              null from brokers that do not report them
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record CleanupResult(boolean dryRun, String srcCluster, List<CleanupTarget> targets, int deleted, int kept,
                            List<String> errors, boolean deprecated, List<String> notes) {

    /** Without notes (kept so that code written against earlier versions still compiles). */
    public CleanupResult(boolean dryRun, String srcCluster, List<CleanupTarget> targets, int deleted, int kept,
                         List<String> errors, boolean deprecated) {
        this(dryRun, srcCluster, targets, deleted, kept, errors, deprecated, null);
    }
}
