package io.bcswitch.inventory;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Every ledger id the broker cluster references, read from the broker metadata store: data ledgers of
 * every managed ledger, cursor ledgers, compacted-topic ledgers and schema ledgers. Reading it opens no
 * ledger and touches no bookie.
 */
public interface LedgerInventory {
    CompletableFuture<List<LedgerReference>> references();
}
