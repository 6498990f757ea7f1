package io.bcswitch.registry;

import io.bcswitch.concurrent.Failures;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MetadataPort} whose reads are made again, with a growing pause, while the store does not answer
 * ({@link StoreFailure.Unavailable}): a lost connection or an expired session ends with the store reconnecting by
 * itself, and a read is always safe to repeat, so a request served at that moment gets its answer a little later
 * instead of an error. Writes are not repeated (whether one that failed so was applied is not known); every other
 * call goes straight to the port.
 */
final class PatientReads implements MetadataPort {
    // the registry's logger: an operator reading its lines finds these beside them
    private static final Logger log = LoggerFactory.getLogger(RegistryStore.class);
    /**
     * Reads give up on a store that does not answer after this many attempts (about 6 s of pauses in all, plus each
     * attempt's own wait: ZooKeeper fails one at once while disconnected, an etcd store only at its deadline).
     */
    static final int ATTEMPTS = 7;

    private final MetadataPort port;
    private final long firstPauseMillis;

    /** @param firstPauseMillis the first pause before a read is made again (doubling after each attempt) */
    PatientReads(MetadataPort port, long firstPauseMillis) {
        this.port = port;
        this.firstPauseMillis = firstPauseMillis;
    }

    @Override
    public CompletableFuture<Optional<Node>> get(String path) {
        return patiently(path, () -> port.get(path), 1, firstPauseMillis);
    }

    @Override
    public CompletableFuture<List<String>> children(String path) {
        return patiently(path, () -> port.children(path), 1, firstPauseMillis);
    }

    private <T> CompletableFuture<T> patiently(String path, Supplier<CompletableFuture<T>> read, int attempt,
                                               long pauseMillis) {
        return read.get().exceptionallyCompose(e -> {
            if (!(Failures.unwrap(e) instanceof StoreFailure.Unavailable) || attempt >= ATTEMPTS) {
                return CompletableFuture.failedFuture(e);
            }
            log.debug("path={} attempt={} metadata store did not answer, reading again in {} ms: {}", path, attempt,
                    pauseMillis, e.toString());
            return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(pauseMillis,
                    TimeUnit.MILLISECONDS)).thenCompose(v -> patiently(path, read, attempt + 1, pauseMillis * 2));
        });
    }

    @Override
    public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expectedVersion, boolean ephemeral) {
        return port.put(path, value, expectedVersion, ephemeral);
    }

    @Override
    public CompletableFuture<Void> delete(String path, Optional<Long> expectedVersion) {
        return port.delete(path, expectedVersion);
    }

    @Override
    public void onChange(Consumer<String> listener) {
        port.onChange(listener);
    }

    @Override
    public void onSessionChange(Consumer<SessionChange> listener) {
        port.onSessionChange(listener);
    }

    @Override
    public void close() {
        port.close();
    }
}
