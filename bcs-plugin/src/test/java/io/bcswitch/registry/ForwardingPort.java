package io.bcswitch.registry;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** A metadata port that passes every call on; tests override the calls they interfere with. */
public class ForwardingPort implements MetadataPort {
    private final MetadataPort to;

    public ForwardingPort(MetadataPort to) {
        this.to = to;
    }

    @Override
    public CompletableFuture<Optional<Node>> get(String path) {
        return to.get(path);
    }

    @Override
    public CompletableFuture<List<String>> children(String path) {
        return to.children(path);
    }

    @Override
    public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean ephemeral) {
        return to.put(path, value, expected, ephemeral);
    }

    @Override
    public CompletableFuture<Void> delete(String path, Optional<Long> expected) {
        return to.delete(path, expected);
    }

    @Override
    public void onChange(Consumer<String> listener) {
        to.onChange(listener);
    }

    @Override
    public void onSessionChange(Consumer<SessionChange> listener) {
        to.onSessionChange(listener);
    }

    @Override
    public void close() {
        to.close();
    }
}
