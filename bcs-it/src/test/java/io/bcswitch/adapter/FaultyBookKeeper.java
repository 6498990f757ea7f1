package io.bcswitch.adapter;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.CreateBuilder;
import org.apache.bookkeeper.client.api.DeleteBuilder;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.OpenBuilder;
import org.apache.bookkeeper.client.api.WriteAdvHandle;

/**
 * A real BookKeeper client whose ledger operations (the ones the ledger copier uses: create, write, close, open and
 * read, metadata, delete) are passed through, except one step chosen by the test, which fails or writes something
 * other than it was given: the way an offloader's tests fail one upload step at a time, against real bookies.
 */
final class FaultyBookKeeper extends org.apache.bookkeeper.client.BcsForwardingBookKeeper {
    /** What goes wrong; armed faults stay armed until {@link #heal}. */
    enum Fault {
        /** creating the copy fails */
        CREATE_FAILS,
        /**
         * the write of entry {@link #FAULTY_ENTRY} fails, and every later write of the handle with it (as BookKeeper
         * fails the writes pending behind a failed one)
         */
        WRITE_FAILS,
        /**
         * as {@link #WRITE_FAILS}, with the error BookKeeper gives when the bookies do not answer (a cluster that
         * cannot be reached for now): entries before it are written
         */
        WRITE_UNREACHABLE,
        /** entry {@link #FAULTY_ENTRY} is written with other bytes of the same length */
        WRITE_CORRUPTED,
        /** the write of the last entry is answered as done but never made: the copy is one entry short */
        LAST_WRITE_DROPPED,
        /** an entry beyond the source's last one is written before the copy is closed */
        EXTRA_ENTRY,
        /** closing the copy fails */
        CLOSE_FAILS,
        /** reading the copy back (to verify it) fails */
        READ_BACK_FAILS,
        /** deleting a ledger fails */
        DELETE_FAILS
    }

    static final long FAULTY_ENTRY = 5;

    private final BookKeeper real;
    private final java.util.Set<Fault> armed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Set by the test to the source's last entry id, for {@link Fault#LAST_WRITE_DROPPED}. */
    private final AtomicLong lastEntry = new AtomicLong(-1);

    FaultyBookKeeper(BookKeeper real) {
        this.real = real;
    }

    /** Arms {@code faults}; {@code sourceLastEntry} is the last entry id of the ledger about to be copied. */
    void arm(long sourceLastEntry, Fault... faults) {
        lastEntry.set(sourceLastEntry);
        armed.addAll(java.util.List.of(faults));
    }

    void heal() {
        armed.clear();
    }

    private boolean armed(Fault f) {
        return armed.contains(f);
    }

    private static <T> CompletableFuture<T> injected(Fault f) {
        return CompletableFuture.failedFuture(new java.io.IOException("injected fault: " + f));
    }

    @Override
    public CreateBuilder newCreateLedgerOp() {
        return proxy(CreateBuilder.class, real.newCreateLedgerOp());
    }

    @Override
    public OpenBuilder newOpenLedgerOp() {
        return proxy(OpenBuilder.class, real.newOpenLedgerOp());
    }

    @Override
    public DeleteBuilder newDeleteLedgerOp() {
        return proxy(DeleteBuilder.class, real.newDeleteLedgerOp());
    }

    @Override
    public CompletableFuture<LedgerMetadata> getLedgerMetadata(long ledgerId) {
        return real.getLedgerMetadata(ledgerId);
    }

    /**
     * {@code target} seen through {@code type}: fluent builder calls stay wrapped, and what {@code execute()} yields
     * passes through {@link #executed}.
     */
    @SuppressWarnings("unchecked")
    private <T> T proxy(Class<T> type, Object target) {
        InvocationHandler h = (p, m, args) -> {
            if (m.getDeclaringClass() == Object.class) {
                return m.invoke(target, args);
            }
            if (m.getName().equals("execute")) {
                return executed(type, () -> call(target, m, args));
            }
            Object r = call(target, m, args);
            return r != null && m.getReturnType().isInterface() && m.getReturnType().getName()
                    .startsWith("org.apache.bookkeeper.client.api.") ? proxy(m.getReturnType(), r) : r;
        };
        return (T) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, h);
    }

    private CompletableFuture<?> executed(Class<?> builder, ThrowingSupplier<Object> execute) throws Throwable {
        String name = builder.getSimpleName();
        if (name.startsWith("Create") && armed(Fault.CREATE_FAILS)) {
            return injected(Fault.CREATE_FAILS);
        }
        if (name.startsWith("Delete") && armed(Fault.DELETE_FAILS)) {
            return injected(Fault.DELETE_FAILS);
        }
        if (name.startsWith("Open") && armed(Fault.READ_BACK_FAILS)) {
            return injected(Fault.READ_BACK_FAILS);
        }
        CompletableFuture<?> f = (CompletableFuture<?>) execute.get();
        if (name.startsWith("Create")) {
            return f.thenApply(w -> w instanceof WriteAdvHandle adv ? writer(adv) : w);
        }
        return f;
    }

    /** The copy's write handle, with the armed write or close fault. */
    private WriteAdvHandle writer(WriteAdvHandle w) {
        java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean();
        InvocationHandler h = (p, m, args) -> {
            if (m.getName().equals("writeAsync") && args.length == 2 && args[0] instanceof Long entry
                    && args[1] instanceof ByteBuf data) {
                if (armed(Fault.WRITE_FAILS) && (entry == FAULTY_ENTRY || broken.get())) {
                    broken.set(true);
                    data.release();
                    return injected(Fault.WRITE_FAILS);
                }
                if (armed(Fault.WRITE_UNREACHABLE) && (entry == FAULTY_ENTRY || broken.get())) {
                    broken.set(true);
                    data.release();
                    return CompletableFuture.failedFuture(org.apache.bookkeeper.client.BKException.create(
                            org.apache.bookkeeper.client.BKException.Code.BookieHandleNotAvailableException));
                }
                if (entry == FAULTY_ENTRY && armed(Fault.WRITE_CORRUPTED)) {
                    byte[] other = new byte[data.readableBytes()];
                    java.util.Arrays.fill(other, (byte) 'x');
                    data.release();
                    return w.writeAsync(entry, Unpooled.wrappedBuffer(other));
                }
                if (entry == lastEntry.get() && armed(Fault.LAST_WRITE_DROPPED)) {
                    data.release();
                    return CompletableFuture.completedFuture(entry);
                }
            }
            if (m.getName().equals("closeAsync")) {
                if (armed(Fault.CLOSE_FAILS)) {
                    w.closeAsync(); // the handle is let go; the caller is told the close failed
                    return injected(Fault.CLOSE_FAILS);
                }
                if (armed(Fault.EXTRA_ENTRY)) {
                    return w.writeAsync(lastEntry.get() + 1, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}))
                            .thenCompose(x -> w.closeAsync());
                }
            }
            return call(w, m, args);
        };
        return (WriteAdvHandle) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {WriteAdvHandle.class}, h);
    }

    private static Object call(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @FunctionalInterface
    private interface ThrowingSupplier<T> {
        T get() throws Throwable;
    }
}
