package org.apache.pulsar.broker.service.schema;

import java.io.IOException;
import java.lang.reflect.Field;
import java.util.function.Supplier;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.pulsar.broker.PulsarService;

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
 */
public class BcsRoutedSchemaStorage extends BookkeeperSchemaStorage {
    private final Supplier<BookKeeper> routingClient;

    public BcsRoutedSchemaStorage(PulsarService pulsar, Supplier<BookKeeper> routingClient) {
        super(pulsar);
        this.routingClient = routingClient;
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
