package io.bcswitch.adapter;

import io.bcswitch.registry.RegistryException;
import io.bcswitch.topics.TopicLedgers;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ManagedLedgerInfoCallback;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.mledger.ManagedLedgerInfo;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerFactoryImpl;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.pulsar.common.naming.TopicName;

/**
 * {@link TopicLedgers} over the broker's managed-ledger factory.
 *
 * <ul>
 *   <li>Topic loaded on this broker: the open managed ledger's own ledger list
 *       ({@link ManagedLedger#getLedgersInfo()}), the same list {@code stats-internal} shows; the ledger
 *       being written gets the live entry and byte counts.</li>
 *   <li>Otherwise (unloaded, or served by another broker): the stored managed-ledger metadata, read
 *       without opening or creating anything. The ledger still being written elsewhere has no counts yet.
 *       Ledger properties are in the stored protobuf only, which the factory's metadata store returns;
 *       a factory that is not the stock one falls back to the public
 *       {@link ManagedLedgerFactory#asyncGetManagedLedgerInfo}, which has no ledger properties.</li>
 * </ul>
 */
final class ManagedLedgerTopicLedgers implements TopicLedgers {

    private final Supplier<ManagedLedgerFactory> factory;

    ManagedLedgerTopicLedgers(Supplier<ManagedLedgerFactory> factory) {
        this.factory = factory;
    }

    @Override
    public CompletableFuture<List<Ledger>> ledgers(String tenant, String namespace, String localName) {
        TopicName topic;
        try {
            topic = parse(tenant, namespace, localName);
        } catch (RegistryException e) {
            return CompletableFuture.failedFuture(e);
        }
        ManagedLedgerFactory f = factory.get();
        if (f == null) {
            return CompletableFuture.failedFuture(new RegistryException(RegistryException.Kind.UNAVAILABLE,
                    "the broker's managed-ledger storage is not started"));
        }
        String name = topic.getPersistenceNamingEncoding();
        ManagedLedger ml = f.getManagedLedgers().get(name);
        if (ml instanceof ManagedLedgerImpl impl && isServing(impl.getState())) {
            return CompletableFuture.completedFuture(live(impl));
        }
        return stored(f, name, topic.toString());
    }

    /** A v2 persistent topic name from its parts; a part Pulsar refuses is a 400. */
    static TopicName parse(String tenant, String namespace, String localName) {
        TopicName t;
        try {
            t = TopicName.get("persistent", tenant, namespace, localName);
        } catch (RuntimeException e) {
            throw RegistryException.invalid("invalid topic name persistent://" + tenant + "/" + namespace + "/"
                    + localName + ": " + e.getMessage());
        }
        if (!t.isPersistent() || !t.getTenant().equals(tenant) || !t.getNamespacePortion().equals(namespace)
                || !t.getLocalName().equals(localName)) {
            throw RegistryException.invalid("invalid topic name persistent://" + tenant + "/" + namespace + "/"
                    + localName);
        }
        return t;
    }

    private static boolean isServing(ManagedLedgerImpl.State s) {
        return s != ManagedLedgerImpl.State.None && s != ManagedLedgerImpl.State.Closed && !s.isFenced();
    }

    private static List<Ledger> live(ManagedLedgerImpl ml) {
        long currentEntries = ml.getCurrentLedgerEntries();
        long currentSize = ml.getCurrentLedgerSize();
        List<Ledger> out = new ArrayList<>(LineManagedLedgers.listed(ml));
        int last = out.size() - 1;
        if (last >= 0 && out.get(last).entries() == null) {
            // the ledger being written: its counts are in the managed ledger, not yet in its LedgerInfo
            Ledger l = out.get(last);
            out.set(last, new Ledger(l.ledgerId(), currentEntries, currentSize, l.properties()));
        }
        return out;
    }

    private static CompletableFuture<List<Ledger>> stored(ManagedLedgerFactory f, String name, String topic) {
        CompletableFuture<List<Ledger>> out = new CompletableFuture<>();
        if (f instanceof ManagedLedgerFactoryImpl stock) {
            LineManagedLedgers.stored(stock, name).whenComplete((list, e) -> {
                if (e == null) {
                    out.complete(oldestFirst(new ArrayList<>(list)));
                } else {
                    out.completeExceptionally(e instanceof ManagedLedgerException m ? failure(m, topic) : e);
                }
            });
        } else {
            f.asyncGetManagedLedgerInfo(name, new ManagedLedgerInfoCallback() {
                @Override
                public void getInfoComplete(ManagedLedgerInfo info, Object ctx) {
                    List<Ledger> list = new ArrayList<>();
                    for (ManagedLedgerInfo.LedgerInfo li : info.ledgers) {
                        list.add(new Ledger(li.ledgerId, li.entries, li.size, Map.of()));
                    }
                    out.complete(oldestFirst(list));
                }

                @Override
                public void getInfoFailed(ManagedLedgerException e, Object ctx) {
                    out.completeExceptionally(failure(e, topic));
                }
            }, null);
        }
        return out;
    }

    /**
     * The stored list is not necessarily in id order: a LedgerInfo transformation (ledger properties,
     * offload) writes it from a HashMap (ManagedLedgerImpl.java:3880-3882); the managed ledger sorts it
     * when it loads it.
     */
    private static List<Ledger> oldestFirst(List<Ledger> list) {
        list.sort(Comparator.comparingLong(Ledger::ledgerId));
        return list;
    }

    private static Throwable failure(ManagedLedgerException e, String topic) {
        if (e instanceof ManagedLedgerException.MetadataNotFoundException
                || e instanceof ManagedLedgerException.ManagedLedgerNotFoundException) {
            return RegistryException.notFound("topic " + topic + " does not exist (it has no managed ledger; "
                    + "for a partitioned topic ask for each partition, " + topic + "-partition-<n>)");
        }
        return new RegistryException(RegistryException.Kind.UNAVAILABLE,
                "cannot read the managed-ledger metadata of " + topic + ": " + e.getMessage());
    }
}
