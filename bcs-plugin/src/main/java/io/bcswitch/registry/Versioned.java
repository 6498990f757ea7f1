package io.bcswitch.registry;

/** A value read from the metadata store with the version it had; version -1 means absent. */
public record Versioned<T>(T value, long version) {
    public static <T> Versioned<T> absent() {
        return new Versioned<>(null, -1L);
    }

    public boolean present() {
        return value != null;
    }
}
