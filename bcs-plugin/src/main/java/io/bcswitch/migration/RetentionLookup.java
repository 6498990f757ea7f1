package io.bcswitch.migration;

import java.util.concurrent.CompletableFuture;

/** The retention that applies to a managed ledger's consumed data (namespace policy or broker default). */
public interface RetentionLookup {
    /**
     * @param minutes retention time in minutes; -1 for infinite
     * @param source  where it comes from (for the report)
     */
    record Retention(long minutes, String source) {
    }

    CompletableFuture<Retention> retention(String managedLedger);
}
