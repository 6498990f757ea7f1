package io.bcswitch.concurrent;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Helpers for the failures futures complete with. */
public final class Failures {
    private Failures() {
    }

    /** The failure inside the {@link CompletionException}s and {@link ExecutionException}s that wrap it. */
    public static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
