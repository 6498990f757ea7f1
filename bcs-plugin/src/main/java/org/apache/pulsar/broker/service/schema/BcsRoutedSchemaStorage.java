package org.apache.pulsar.broker.service.schema;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.commons.lang3.tuple.Pair;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.common.protocol.schema.SchemaVersion;
import org.apache.pulsar.common.protocol.schema.StoredSchema;
import org.apache.pulsar.common.schema.LongSchemaVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pulsar's own BookKeeper schema storage, with one difference: it uses the plugin's routing
 * BookKeeper client instead of building its own client to the broker's configured bookie cluster.
 *
 * <p>Why a subclass, in this package: the broker casts its schema storage to
 * {@link BookkeeperSchemaStorage} (schema admin endpoints, topic internal stats), so a wrapper would
 * break them; the class's constructor is package-private and its client is a private field that
 * {@code start()} fills from {@code pulsar.getBookKeeperClientFactory()}, which a plugin cannot
 * replace. So this class overrides only {@code start()} and sets that field to a routing client; every
 * schema read, write and delete is then Pulsar's unchanged code. The routing client given here is a
 * dedicated one (its own per-cluster clients), so the {@code close()} inherited from Pulsar, which
 * closes the field's client, closes nothing else.
 *
 * <p>Second difference: schema payloads this broker has read or written are kept in memory, keyed by
 * their position (schema ledger id, entry id), and answer a read of that position that fails. Pulsar
 * reads a topic's stored schemas from their ledgers every time a client with a schema connects; when
 * the bookie cluster holding those ledgers is down (the disaster switch), producers and consumers with a
 * schema could otherwise not reconnect at all, whichever cluster is active. Positions are never reused
 * (ledger ids are unique, a schema ledger is closed after its one write), so a cached payload is
 * never stale; which positions a topic's schema has is still always read from the metadata store.
 * The cache is used only after a read failed, so routing and errors are otherwise unchanged.
 */
public class BcsRoutedSchemaStorage extends BookkeeperSchemaStorage {
    private static final Logger log = LoggerFactory.getLogger(BcsRoutedSchemaStorage.class);
    /** Schemas are small (kilobytes); this bounds memory if a broker serves very many topics. */
    private static final long CACHE_MAX_BYTES = 64L * 1024 * 1024;

    private record Position(long ledgerId, long entryId) {
    }

    private final Supplier<BookKeeper> routingClient;
    private final Cache<Position, byte[]> payloads = Caffeine.newBuilder()
            .maximumWeight(CACHE_MAX_BYTES)
            .<Position, byte[]>weigher((k, v) -> v.length + 32)
            .build();

    public BcsRoutedSchemaStorage(PulsarService pulsar, Supplier<BookKeeper> routingClient) {
        super(pulsar);
        this.routingClient = routingClient;
    }

    @Override
    public CompletableFuture<StoredSchema> get(String key, SchemaVersion version) {
        return getLocator(key).thenCompose(locator -> super.get(key, version)
                .thenApply(stored -> remember(locator, stored))
                .exceptionallyCompose(error -> {
                    long wanted = version instanceof LongSchemaVersion v ? v.getVersion()
                            : locator.map(l -> l.locator.getInfo().getVersion()).orElse(-1L);
                    return fromCache(key, locator, wanted, error);
                }));
    }

    @Override
    public CompletableFuture<List<CompletableFuture<StoredSchema>>> getAll(String key) {
        return getLocator(key).thenCompose(locator -> super.getAll(key)
                .thenApply(list -> withCache(key, locator, list)));
    }

    @Override
    public CompletableFuture<SchemaVersion> put(String key,
            Function<CompletableFuture<List<CompletableFuture<StoredSchema>>>,
                    CompletableFuture<Pair<byte[], byte[]>>> fn) {
        AtomicReference<byte[]> written = new AtomicReference<>();
        // the list handed to fn was built from the locator Pulsar just read; re-reading it here (a
        // cached metadata read) gives the same index unless another broker changed it meanwhile, in
        // which case withCache sees a different size and leaves the list alone
        return super.put(key, schemas -> getLocator(key)
                .thenCompose(locator -> fn.apply(schemas.thenApply(list -> withCache(key, locator, list))))
                .thenApply(pair -> {
                    written.set(pair == null ? null : pair.getLeft());
                    return pair;
                }))
                .thenCompose(version -> rememberWritten(key, version, written.get()));
    }

    @Override
    public CompletableFuture<SchemaVersion> put(String key, byte[] value, byte[] hash) {
        return super.put(key, value, hash).thenCompose(version -> rememberWritten(key, version, value));
    }

    private CompletableFuture<SchemaVersion> rememberWritten(String key, SchemaVersion version, byte[] data) {
        if (!(version instanceof LongSchemaVersion v) || data == null) {
            return CompletableFuture.completedFuture(version);
        }
        return getLocator(key).handle((locator, e) -> {
            if (e == null) {
                position(locator, v.getVersion()).ifPresent(p -> payloads.put(p, data));
            }
            return version;
        });
    }

    private List<CompletableFuture<StoredSchema>> withCache(String key, Optional<LocatorEntry> locator,
                                                             List<CompletableFuture<StoredSchema>> list) {
        List<io.bcswitch.adapter.SchemaIndex.Entry> index = locator.map(LineSchemaLocators::of)
                .map(io.bcswitch.adapter.SchemaIndex::index).orElse(List.of());
        if (locator.isEmpty() || index.size() != list.size()) {
            return list;
        }
        List<CompletableFuture<StoredSchema>> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            long version = index.get(i).version();
            out.add(list.get(i).thenApply(stored -> remember(locator, stored))
                    .exceptionallyCompose(error -> fromCache(key, locator, version, error)));
        }
        return out;
    }

    private StoredSchema remember(Optional<LocatorEntry> locator, StoredSchema stored) {
        if (stored != null && stored.version instanceof LongSchemaVersion v) {
            position(locator, v.getVersion()).ifPresent(p -> payloads.put(p, stored.data));
        }
        return stored;
    }

    private CompletableFuture<StoredSchema> fromCache(String key, Optional<LocatorEntry> locator, long version,
                                                      Throwable error) {
        Optional<Position> position = position(locator, version);
        byte[] data = position.map(payloads::getIfPresent).orElse(null);
        if (data == null) {
            return CompletableFuture.failedFuture(error);
        }
        log.warn("[{}] schema version {} read from ledger {} failed ({}); answered from this broker's copy",
                key, version, position.get().ledgerId(), error.toString());
        return CompletableFuture.completedFuture(new StoredSchema(data, new LongSchemaVersion(version)));
    }

    /** Where a version's payload is, per the locator: the latest entry or one of the index entries. */
    private static Optional<Position> position(Optional<LocatorEntry> locator, long version) {
        return locator.map(LineSchemaLocators::of).flatMap(index -> index.find(version))
                .map(e -> new Position(e.ledgerId(), e.entryId()));
    }

    @Override
    public void start() throws IOException {
        Field field;
        try {
            field = BookkeeperSchemaStorage.class.getDeclaredField("bookKeeper");
            field.setAccessible(true);
        } catch (NoSuchFieldException | RuntimeException e) {
            throw new IOException("this Pulsar version's BookkeeperSchemaStorage has no 'bookKeeper' field; "
                    + "the bookie-cluster-switch schema storage does not support it", e);
        }
        try {
            field.set(this, routingClient.get());
        } catch (IllegalAccessException e) {
            throw new IOException("cannot give schema storage the routing BookKeeper client", e);
        }
    }
}
