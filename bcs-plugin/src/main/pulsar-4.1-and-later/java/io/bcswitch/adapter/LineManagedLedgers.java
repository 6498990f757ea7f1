package io.bcswitch.adapter;

import io.bcswitch.topics.TopicLedgers.Ledger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerException.MetaStoreException;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerFactoryImpl;
import org.apache.bookkeeper.mledger.impl.MetaStore.MetaStoreCallback;
import org.apache.bookkeeper.mledger.proto.KeyValue;
import org.apache.bookkeeper.mledger.proto.ManagedLedgerInfo;
import org.apache.bookkeeper.mledger.proto.ManagedLedgerInfo.LedgerInfo;
import org.apache.pulsar.metadata.api.Stat;

/**
 * Pulsar 4.1 and later (built for 4.2 and 5.0): a managed ledger's ledger list as LightProto {@code LedgerInfo}s,
 * with the per-ledger properties of PIP-404 (Pulsar 4.1 on).
 */
final class LineManagedLedgers {
    /** Whether ledgers carry properties on this line (the bookie cluster's name can be stamped on them). */
    static final boolean LEDGER_PROPERTIES = true;

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
                List<Ledger> list = new ArrayList<>(info.getLedgerInfosCount());
                for (int i = 0; i < info.getLedgerInfosCount(); i++) {
                    list.add(of(info.getLedgerInfoAt(i)));
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

    /** Sets a property of one ledger in {@code ml}'s metadata (under the managed ledger's own metadata lock). */
    static CompletableFuture<Void> addLedgerProperty(ManagedLedger ml, long ledgerId, String key, String value) {
        return ml.asyncAddLedgerProperty(ledgerId, key, value);
    }

    private static Ledger of(LedgerInfo li) {
        Map<String, String> properties = Map.of();
        if (li.getPropertiesCount() > 0) {
            properties = new HashMap<>();
            for (int i = 0; i < li.getPropertiesCount(); i++) {
                KeyValue kv = li.getPropertyAt(i);
                properties.put(kv.getKey(), kv.getValue());
            }
        }
        return new Ledger(li.getLedgerId(), li.hasEntries() ? li.getEntries() : null,
                li.hasSize() ? li.getSize() : null, properties);
    }
}
