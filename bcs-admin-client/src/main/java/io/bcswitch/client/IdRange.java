package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * One row of the ledger-id range table: ids from {@code firstLedgerId} up to the next row's first id
 * were issued by {@code cluster}.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record IdRange(String cluster, long firstLedgerId, long epoch, long since) {
}
