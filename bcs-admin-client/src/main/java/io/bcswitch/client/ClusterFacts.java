package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** What a bookie cluster's metadata says about it (read without touching its bookies). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ClusterFacts(String layoutManagerFactory, boolean supports63BitIds, long maxHighOrderBits,
                           long maxLedgerId, int writableBookies, int readOnlyBookies) {
}
