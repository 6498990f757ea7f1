package io.bcswitch.adapter;

import io.bcswitch.concurrent.InFlightLimit;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ManagedLedgerInfoCallback;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.mledger.ManagedLedgerInfo;
import org.apache.pulsar.broker.service.schema.LineSchemaLocators;
import org.apache.pulsar.compaction.Compactor;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LedgerInventory} over the broker metadata store: managed ledgers under {@code /managed-ledgers}
 * (their metadata read through the managed-ledger factory, which decodes every stored format) and
 * schema locators under {@code /schemas}. The children of a v2 namespace's {@code persistent} node are managed
 * ledgers; elsewhere a node that holds data is a managed ledger (or a schema locator). A managed ledger's children
 * are cursors, which the managed-ledger metadata already lists.
 *
 * <p>Every read goes through one {@link InFlightLimit} shared by all readings of this broker, so the metadata
 * store never has more than its limit of this inventory's reads in flight, however many managed ledgers there
 * are and however many readings run at once. A managed ledger's metadata read counts as one: the managed-ledger
 * factory reads the ledger's node and then its cursors' nodes.
 */
final class MetadataLedgerInventory implements LedgerInventory {
    private static final Logger log = LoggerFactory.getLogger(MetadataLedgerInventory.class);
    private static final String MANAGED_LEDGERS = "/managed-ledgers";
    private static final String SCHEMAS = "/schemas";
    /**
     * Pulsar's deduplication cursor ({@code PersistentTopic.DEDUPLICATION_CURSOR_NAME}): its properties are each
     * producer's last sequence id, never ledger ids (read as ledgers they pinned the cluster whose id range holds them).
     */
    static final String DEDUPLICATION_CURSOR = "pulsar.dedup";
    /** A replicated subscription's flag (1) among its cursor's properties (Pulsar's {@code PersistentSubscription}). */
    static final String REPLICATED_SUBSCRIPTION_PROPERTY = "pulsar.replicated.subscription";

    private final MetadataStore store;
    private final Supplier<MetadataStore> configuration;
    private final Supplier<ManagedLedgerFactory> factory;
    private final InFlightLimit reads;

    /** Reads namespace policies from {@code store} too (one store for both, as in a test). */
    MetadataLedgerInventory(MetadataStore store, Supplier<ManagedLedgerFactory> factory, InFlightLimit reads) {
        this(store, () -> store, factory, reads);
    }

    /**
     * @param configuration where namespace policies are (the configuration store: {@code store} itself unless
     *                      the cluster keeps configuration apart)
     */
    MetadataLedgerInventory(MetadataStore store, Supplier<MetadataStore> configuration,
                            Supplier<ManagedLedgerFactory> factory, InFlightLimit reads) {
        this.store = store;
        this.configuration = configuration;
        this.factory = factory;
        this.reads = reads;
    }

    @Override
    public CompletableFuture<List<LedgerReference>> references() {
        long started = System.nanoTime();
        AtomicInteger managedLedgers = new AtomicInteger();
        AtomicInteger schemaIds = new AtomicInteger();
        // each node's references are read as soon as the walk finds it, not once the whole tree is listed
        CompletableFuture<List<LedgerReference>> managed = managedLedgersBelow(MANAGED_LEDGERS, managedLedgers);
        CompletableFuture<List<LedgerReference>> schemas = dataNodes(SCHEMAS, (path, value) -> {
            schemaIds.incrementAndGet();
            return CompletableFuture.completedFuture(schema(path.substring(SCHEMAS.length() + 1), value));
        });
        return managed.thenCombine(schemas, (a, b) -> {
            List<LedgerReference> all = new ArrayList<>(a.size() + b.size());
            all.addAll(a);
            all.addAll(b);
            log.info("Ledger inventory read: {} managed ledgers, {} schemas, {} references in {} ms; at most {} "
                            + "metadata reads in flight at once since the broker started (limit {})",
                    managedLedgers.get(), schemaIds.get(), all.size(), (System.nanoTime() - started) / 1_000_000,
                    reads.peak(), reads.limit());
            return all;
        });
    }

    /** Attempts to read a managed ledger whose node is still there although a read said "not found". */
    static final int NOT_FOUND_ATTEMPTS = 3;

    private CompletableFuture<List<LedgerReference>> managedLedger(String name) {
        return info(name, 1).thenApply(i -> toReferences(name, i));
    }

    /**
     * The managed ledger's metadata, or null when it is gone. "Not found" alone does not say it is gone: Pulsar
     * answers so when one of its cursors is deleted while the cursors are read (a subscription removed at that
     * moment), and taking the whole managed ledger for deleted would leave its ledgers out of the inventory, for
     * cleanup to delete. So the node itself is asked: gone means gone; still there means read again, and after
     * {@link #NOT_FOUND_ATTEMPTS} the reading fails rather than answer without it.
     */
    private CompletableFuture<ManagedLedgerInfo> info(String name, int attempt) {
        ManagedLedgerFactory f = factory.get();
        if (f == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("managed-ledger factory not started"));
        }
        return reads.submit(() -> {
            CompletableFuture<ManagedLedgerInfo> info = new CompletableFuture<>();
            f.asyncGetManagedLedgerInfo(name, new ManagedLedgerInfoCallback() {
                @Override
                public void getInfoComplete(ManagedLedgerInfo i, Object ctx) {
                    info.complete(i);
                }

                @Override
                public void getInfoFailed(ManagedLedgerException e, Object ctx) {
                    info.completeExceptionally(e);
                }
            }, null);
            return info;
        }).handle((i, e) -> {
            if (e == null) {
                return CompletableFuture.completedFuture(i);
            }
            Throwable t = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                    ? e.getCause() : e;
            if (!(t instanceof ManagedLedgerException.MetadataNotFoundException
                    || t instanceof ManagedLedgerException.ManagedLedgerNotFoundException)) {
                return CompletableFuture.<ManagedLedgerInfo>failedFuture(t);
            }
            return reads.submit(() -> store.exists(MANAGED_LEDGERS + "/" + name)).thenCompose(exists -> {
                if (!exists) {
                    return CompletableFuture.<ManagedLedgerInfo>completedFuture(null); // deleted while we walked
                }
                if (attempt >= NOT_FOUND_ATTEMPTS) {
                    return CompletableFuture.<ManagedLedgerInfo>failedFuture(new IllegalStateException(
                            "managed ledger " + name + " exists but its metadata read " + attempt
                                    + " times as not found (" + t.getMessage() + ")"));
                }
                log.info("ledger-name={}: metadata read as not found while its node exists (a cursor removed "
                        + "meanwhile?): reading it again", name);
                return info(name, attempt + 1);
            });
        }).thenCompose(x -> x);
    }

    static List<LedgerReference> toReferences(String name, ManagedLedgerInfo i) {
        if (i == null) {
            return List.<LedgerReference>of();
        }
        List<LedgerReference> refs = new ArrayList<>();
        if (i.ledgers != null) {
            for (ManagedLedgerInfo.LedgerInfo l : i.ledgers) {
                // the current ledger has no size or close time yet
                Long closedAt = l.timestamp != null && l.timestamp > 0 ? l.timestamp : null;
                refs.add(new LedgerReference(l.ledgerId, LedgerKind.DATA, name, l.size, closedAt));
            }
        }
        if (i.cursors != null) {
            for (Map.Entry<String, ManagedLedgerInfo.CursorInfo> c : i.cursors.entrySet()) {
                if (c.getValue().cursorsLedgerId >= 0) {
                    refs.add(new LedgerReference(c.getValue().cursorsLedgerId, LedgerKind.CURSOR,
                            name + "/" + c.getKey()));
                }
                Map<String, Long> props = c.getValue().properties;
                if (props != null && !c.getKey().equals(DEDUPLICATION_CURSOR)) {
                    for (Map.Entry<String, Long> p : props.entrySet()) {
                        if (p.getValue() == null || p.getValue() < 0
                                || p.getKey().equals(REPLICATED_SUBSCRIPTION_PROPERTY)) {
                            continue;
                        }
                        // a property Pulsar does not document may name a ledger: taken as a reference, so that
                        // cleanup never deletes it (the checks that must not be pinned by a mere number skip them)
                        LedgerKind kind = p.getKey().equals(Compactor.COMPACTED_TOPIC_LEDGER_PROPERTY)
                                ? LedgerKind.COMPACTION : LedgerKind.OTHER;
                        refs.add(new LedgerReference(p.getValue(), kind, name + "/" + c.getKey() + "#"
                                + p.getKey()));
                    }
                }
            }
        }
        return refs;
    }

    private static List<LedgerReference> schema(String schemaId, byte[] data) {
        List<LedgerReference> refs = new ArrayList<>();
        for (long id : LineSchemaLocators.parse(data).ledgerIds()) {
            refs.add(new LedgerReference(id, LedgerKind.SCHEMA, schemaId));
        }
        return refs;
    }

    /** Where Pulsar keeps namespace policies: a v2 namespace's node holds them (a v1 cluster's node holds none). */
    private static final String POLICIES = "/admin/policies";
    private static final String PERSISTENT_DOMAIN = "persistent";

    /**
     * The references of every managed ledger below {@code path}. The children of a v2 namespace's
     * {@code <tenant>/<namespace>/persistent} node are its topics' managed ledgers, each read through the factory
     * at once (one read of its node fewer than asking the node first whether it holds data); any other node is
     * walked as {@link #dataNodes} walks, which also finds v1 namespaces' ({@code <tenant>/<cluster>/<namespace>}).
     * A namespace counts as v2 only if its policies node holds data: a v1 namespace named {@code persistent}, or
     * a namespace deleted while managed ledgers are left, is walked node by node, never misread.
     */
    private CompletableFuture<List<LedgerReference>> managedLedgersBelow(String path, AtomicInteger count) {
        String[] segments = path.length() > MANAGED_LEDGERS.length()
                ? path.substring(MANAGED_LEDGERS.length() + 1).split("/") : new String[0];
        if (segments.length == 3 && segments[2].equals(PERSISTENT_DOMAIN)) {
            return reads.submit(() -> configuration.get().get(POLICIES + "/" + segments[0] + "/" + segments[1]))
                    .thenCompose(policies -> policies.isPresent() && policies.get().getValue().length > 0
                            ? topicsOf(path, count) : nodesBelow(path, count));
        }
        return nodesBelow(path, count);
    }

    /** Every child of a v2 namespace's domain node read as a managed ledger. */
    private CompletableFuture<List<LedgerReference>> topicsOf(String domain, AtomicInteger count) {
        return reads.submit(() -> store.getChildren(domain)).thenCompose(names -> {
            List<CompletableFuture<List<LedgerReference>>> each = new ArrayList<>(names.size());
            for (String n : names) {
                count.incrementAndGet();
                each.add(managedLedger((domain + "/" + n).substring(MANAGED_LEDGERS.length() + 1)));
            }
            return flatten(each);
        });
    }

    /** Each child of {@code path}: a managed ledger when it holds data, else walked further. */
    private CompletableFuture<List<LedgerReference>> nodesBelow(String path, AtomicInteger count) {
        return childNodes(path, (child, value) -> {
            count.incrementAndGet();
            return managedLedger(child.substring(MANAGED_LEDGERS.length() + 1));
        }, child -> managedLedgersBelow(child, count));
    }

    /**
     * {@code onNode} applied to every node below {@code root} that holds data (with its path and value), not
     * descending below such nodes; the results of all of them.
     */
    private CompletableFuture<List<LedgerReference>> dataNodes(
            String root, BiFunction<String, byte[], CompletableFuture<List<LedgerReference>>> onNode) {
        return childNodes(root, onNode, child -> dataNodes(child, onNode));
    }

    /** Each child of {@code path}: {@code onNode} when it holds data, else {@code walkBelow}; all their results. */
    private CompletableFuture<List<LedgerReference>> childNodes(
            String path, BiFunction<String, byte[], CompletableFuture<List<LedgerReference>>> onNode,
            java.util.function.Function<String, CompletableFuture<List<LedgerReference>>> walkBelow) {
        return reads.submit(() -> store.getChildren(path)).thenCompose(names -> {
            List<CompletableFuture<List<LedgerReference>>> each = new ArrayList<>(names.size());
            for (String n : names) {
                String child = path + "/" + n;
                each.add(reads.submit(() -> store.get(child)).thenCompose(r -> r.isPresent()
                        && r.get().getValue().length > 0
                        ? onNode.apply(child, r.get().getValue()) : walkBelow.apply(child)));
            }
            return flatten(each);
        });
    }

    private static <T> CompletableFuture<List<T>> flatten(List<CompletableFuture<List<T>>> parts) {
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<T> out = new ArrayList<>();
            parts.forEach(p -> out.addAll(p.join()));
            return out;
        });
    }
}
