package io.bcswitch.registry;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * An in-memory metadata port a test steers: change notifications can be muted (a broker cut off from them while
 * its session lives on), any session change can be told, reads or writes of chosen paths can fail, reads and writes
 * of chosen paths can be held until released.
 */
public final class ScriptedPort extends ForwardingPort {
    private final InMemoryMetadataPort memory;
    private final List<Consumer<SessionChange>> sessionListeners = new CopyOnWriteArrayList<>();
    private volatile boolean muted;
    private volatile Predicate<String> failing = p -> false;
    private volatile Predicate<String> failingWrites = p -> false;
    private volatile Predicate<String> failingDeletes = p -> false;
    private volatile Predicate<String> held = p -> false;
    private volatile CompletableFuture<Void> release = CompletableFuture.completedFuture(null);
    private volatile CompletableFuture<String> heldOne = new CompletableFuture<>();
    private final java.util.concurrent.atomic.AtomicInteger readsFailed = new java.util.concurrent.atomic.AtomicInteger();

    public ScriptedPort() {
        this(new InMemoryMetadataPort());
    }

    private ScriptedPort(InMemoryMetadataPort memory) {
        super(memory);
        this.memory = memory;
    }

    public InMemoryMetadataPort memory() {
        return memory;
    }

    /** While muted, no change notification reaches the listeners (the changes themselves are made). */
    public void mute(boolean muted) {
        this.muted = muted;
    }

    /** Reads of the paths {@code which} accepts fail from now on. */
    public void failReads(Predicate<String> which) {
        this.failing = which;
    }

    /** How many reads {@link #failReads} has failed so far: a test waits for the failure it scripted to happen. */
    public int readsFailed() {
        return readsFailed.get();
    }

    /** Writes and deletes of the paths {@code which} accepts fail from now on. */
    public void failWrites(Predicate<String> which) {
        this.failingWrites = which;
    }

    /** Deletes of the paths {@code which} accepts fail from now on (tested once per delete). */
    public void failDeletes(Predicate<String> which) {
        this.failingDeletes = which;
    }

    /** Reads and writes of the paths {@code which} accepts wait (made then) until {@link #release()}. */
    public void hold(Predicate<String> which) {
        release = new CompletableFuture<>();
        heldOne = new CompletableFuture<>();
        held = which;
    }

    /** Completes with the path of the first call held since {@link #hold}. */
    public CompletableFuture<String> held() {
        return heldOne;
    }

    public void release() {
        held = p -> false;
        release.complete(null);
    }

    /** Tells every session listener {@code change}, as the store would. */
    public void tell(SessionChange change) {
        sessionListeners.forEach(l -> l.accept(change));
    }

    @Override
    public CompletableFuture<Optional<Node>> get(String path) {
        if (failing.test(path)) {
            readsFailed.incrementAndGet();
            return CompletableFuture.failedFuture(new IllegalStateException("read of " + path + " failed"));
        }
        if (held.test(path)) {
            heldOne.complete(path);
            return release.thenCompose(v -> super.get(path));
        }
        return super.get(path);
    }

    @Override
    public CompletableFuture<Long> put(String path, byte[] value, Optional<Long> expected, boolean ephemeral) {
        if (failingWrites.test(path)) {
            return CompletableFuture.failedFuture(new IllegalStateException("write of " + path + " failed"));
        }
        if (held.test(path)) {
            heldOne.complete(path);
            return release.thenCompose(v -> super.put(path, value, expected, ephemeral));
        }
        return super.put(path, value, expected, ephemeral);
    }

    @Override
    public CompletableFuture<Void> delete(String path, Optional<Long> expected) {
        if (failingWrites.test(path) || failingDeletes.test(path)) {
            return CompletableFuture.failedFuture(new IllegalStateException("delete of " + path + " failed"));
        }
        return super.delete(path, expected);
    }

    @Override
    public void onChange(Consumer<String> listener) {
        super.onChange(path -> {
            if (!muted) {
                listener.accept(path);
            }
        });
    }

    @Override
    public void onSessionChange(Consumer<SessionChange> listener) {
        sessionListeners.add(listener);
        super.onSessionChange(listener);
    }
}
