package io.bcswitch.topics;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Port: the ledgers of a persistent topic, as its managed ledger lists them. Implemented in
 * {@code adapter/} over the broker's managed-ledger factory; this package never sees Pulsar types.
 */
public interface TopicLedgers {

    /**
     * The PIP-404 ledger property ({@code LedgerInfo.properties} in the managed-ledger metadata) that
     * names the bookie cluster owning the ledger id. Written by the plugin right after each data ledger
     * is created; informational only: routing never reads it.
     */
    String BOOKIE_CLUSTER_PROPERTY = "_pulsar.bookieClusterName";

    /**
     * The ledgers of {@code persistent://tenant/namespace/localName}, oldest first. Fails with
     * {@code RegistryException} INVALID for a malformed name, NOT_FOUND when the topic has no managed
     * ledger, UNAVAILABLE when the broker's managed-ledger storage is not started.
     */
    CompletableFuture<List<Ledger>> ledgers(String tenant, String namespace, String localName);

    /**
     * One ledger of a managed ledger.
     *
     * @param ledgerId   ledger id
     * @param entries    entries in it; null when unknown (the ledger is still being written by another
     *                   broker, its count is recorded when it closes)
     * @param size       bytes in it; null when unknown, as {@code entries}
     * @param properties its PIP-404 properties (empty when none)
     */
    record Ledger(long ledgerId, Long entries, Long size, Map<String, String> properties) {
        public Ledger {
            properties = properties == null ? Map.of() : Map.copyOf(properties);
        }
    }
}
