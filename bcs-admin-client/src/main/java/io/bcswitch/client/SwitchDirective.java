package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** The latest switch: target cluster, the cluster it replaced, its epoch, time and first ledger id. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SwitchDirective(String target, String origin, long epoch, long ts, long firstLedgerId) {
}
