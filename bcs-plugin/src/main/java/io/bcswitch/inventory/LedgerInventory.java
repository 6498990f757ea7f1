package io.bcswitch.inventory;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Every ledger id the broker cluster references, read from the broker metadata store: data ledgers of
 * every managed ledger, cursor ledgers, compacted-topic ledgers and schema ledgers. Reading it opens no
 * ledger and touches no bookie.
 */
public interface LedgerInventory {
    /** Every reference; fails rather than answer a picture with a part it could not learn. */
    CompletableFuture<List<LedgerReference>> references();

    /**
     * What can be learnt now, and what could not: for a caller that can act on part of the picture and says what
     * it left out (the migration moves what it knows and ends with an issue; the auditor reports). Callers that
     * delete or declare a cluster drained use {@link #references} instead.
     */
    default CompletableFuture<Picture> picture() {
        return references().thenApply(refs -> new Picture(refs, List.of()));
    }

    /**
     * @param references what is known (for an unknown part: what the stored metadata names)
     * @param unknown    the parts whose current value could not be learnt
     */
    record Picture(List<LedgerReference> references, List<Unknown> unknown) {
        public Picture {
            references = List.copyOf(references);
            unknown = List.copyOf(unknown);
        }

        public boolean complete() {
            return unknown.isEmpty();
        }
    }

    /**
     * A reference whose current value could not be learnt.
     *
     * @param referencedBy what refers to it (the managed ledger of a compacted topic)
     * @param storedLedger the ledger the stored metadata names for it (one of the picture's references)
     * @param reason       why it could not be learnt, in words
     */
    record Unknown(String referencedBy, long storedLedger, String reason) {
    }
}
