package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/** Outcome of a cleanup; with {@code dryRun} nothing was deleted and {@code targets} is the plan. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record CleanupResult(boolean dryRun, String srcCluster, List<CleanupTarget> targets, int deleted, int kept,
                            List<String> errors, boolean deprecated) {
}
