package io.bcswitch.adapter;

import io.bcswitch.topics.TopicLedgers.Ledger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerException.MetaStoreException;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerFactoryImpl;
import org.apache.bookkeeper.mledger.impl.MetaStore.MetaStoreCallback;
import org.apache.bookkeeper.mledger.proto.MLDataFormats.ManagedLedgerInfo;
import org.apache.bookkeeper.mledger.proto.MLDataFormats.ManagedLedgerInfo.LedgerInfo;
import org.apache.pulsar.metadata.api.Stat;

/**
 * Pulsar 4.0: a managed ledger's ledger list as protobuf {@code LedgerInfo}s, which have no per-ledger properties
 * (PIP-404 arrived in 4.1).
 */
final class LineManagedLedgers {
    /** Whether ledgers carry properties on this line (the bookie cluster's name can be stamped on them). */
    static final boolean LEDGER_PROPERTIES = false;

    private LineManagedLedgers() {
    }

    /**
     * The ledgers {@code ml} lists now, oldest first; a ledger without counts in its metadata (the one being written)
     * has null entries and size.
     */
    static List<Ledger> listed(ManagedLedger ml) {
        List<Ledger> out = new ArrayList<>();
        for (LedgerInfo li : ml.getLedgersInfo().values()) {
            out.add(of(li));
        }
        return out;
    }

    /** One ledger {@code ml} lists now, if it lists it (a lookup, not a walk of the whole list). */
    static Optional<Ledger> listed(ManagedLedger ml, long ledgerId) {
        LedgerInfo li = ml.getLedgersInfo().get(ledgerId);
        return li == null ? Optional.empty() : Optional.of(of(li));
    }

    /** The ledgers in the stored managed-ledger metadata {@code name}, as stored (not necessarily in id order). */
    static CompletableFuture<List<Ledger>> stored(ManagedLedgerFactoryImpl f, String name) {
        CompletableFuture<List<Ledger>> out = new CompletableFuture<>();
        f.getMetaStore().getManagedLedgerInfo(name, false /* never create */, new MetaStoreCallback<ManagedLedgerInfo>() {
            @Override
            public void operationComplete(ManagedLedgerInfo info, Stat stat) {
                List<Ledger> list = new ArrayList<>(info.getLedgerInfoCount());
                for (LedgerInfo li : info.getLedgerInfoList()) {
                    list.add(of(li));
                }
                out.complete(list);
            }

            @Override
            public void operationFailed(MetaStoreException e) {
                out.completeExceptionally(e);
            }
        });
        return out;
    }

    /** Ledgers have no properties on this line. */
    static CompletableFuture<Void> addLedgerProperty(ManagedLedger ml, long ledgerId, String key, String value) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(
                "Pulsar 4.0 keeps no per-ledger properties (PIP-404 arrived in 4.1)"));
    }

    private static Ledger of(LedgerInfo li) {
        return new Ledger(li.getLedgerId(), li.hasEntries() ? li.getEntries() : null,
                li.hasSize() ? li.getSize() : null, Map.of());
    }
}
