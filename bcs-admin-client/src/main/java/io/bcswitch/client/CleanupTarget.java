package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** A ledger cleanup deletes (or would), with why it is safe: RELOCATED, STRAY_COPY or UNREFERENCED. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record CleanupTarget(long ledgerId, String cluster, String reason) {
}
