package io.bcswitch.adapter;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A read handle (what managed ledgers open data ledgers with) that logs failed reads with the bookie
 * cluster and the ledger. When a cluster is down, BookKeeper's own read errors ("Bookie handle is not
 * available") and the managed ledger's ("Error reading entries at 7:0") name neither the cluster nor,
 * in the managed-ledger case, why; an operator needs both to know what is unreadable and which cluster
 * to bring back. Everything else is passed through unchanged, including the result or error itself.
 *
 * <p>A dynamic proxy over the {@link ReadHandle} interface, so read methods added to the interface in
 * later BookKeeper releases are passed through as well. Repeated failures of one handle are logged at
 * most once per {@link #LOG_INTERVAL_NANOS}, with a count of the ones left out, because a dispatcher
 * retries a failing read many times a second.
 */
final class ClusterNamedReadHandle implements InvocationHandler {
    private static final Logger log = LoggerFactory.getLogger(ClusterNamedReadHandle.class);
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final ReadHandle delegate;
    private final String cluster;
    private final Runnable onClose;
    /** Milliseconds a read may take now (0: BookKeeper's own timeouts); asked at each read. */
    private final LongSupplier readTimeout;
    private final AtomicLong lastLogged = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);
    private final AtomicLong suppressed = new AtomicLong();

    private ClusterNamedReadHandle(ReadHandle delegate, String cluster, Runnable onClose, LongSupplier readTimeout) {
        this.readTimeout = readTimeout;
        this.delegate = delegate;
        this.cluster = cluster;
        this.onClose = onClose;
    }

    /** {@code handle} with failed reads named; {@code onClose} runs when it is closed (close or closeAsync). */
    static ReadHandle wrap(ReadHandle handle, String cluster, Runnable onClose) {
        return wrap(handle, cluster, onClose, () -> 0);
    }

    /**
     * ... and each read failed with BookKeeper's timeout error once it took longer than {@code readTimeout} says at
     * its start (0: no bound of ours), so readers of a cluster that no longer answers fail fast.
     */
    static ReadHandle wrap(ReadHandle handle, String cluster, Runnable onClose, LongSupplier readTimeout) {
        if (handle == null || Proxy.isProxyClass(handle.getClass())
                && Proxy.getInvocationHandler(handle) instanceof ClusterNamedReadHandle) {
            return handle; // wrapped already
        }
        return (ReadHandle) Proxy.newProxyInstance(ClusterNamedReadHandle.class.getClassLoader(),
                new Class<?>[] {ReadHandle.class}, new ClusterNamedReadHandle(handle, cluster, onClose, readTimeout));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (ProxyIdentity.handles(method)) {
            return ProxyIdentity.invoke(proxy, method, args,
                    () -> "ReadHandle[bookie-cluster=" + cluster + " ledger=" + delegate.getId() + "]");
        }
        if (method.getName().equals("close") || method.getName().equals("closeAsync")) {
            onClose.run();
        }
        Object result;
        try {
            result = method.invoke(delegate, args);
        } catch (InvocationTargetException e) {
            if (isRead(method)) {
                failed(method, args, e.getCause());
            }
            throw e.getCause();
        }
        if (result instanceof CompletableFuture<?> future && isRead(method)) {
            long timeout = readTimeout.getAsLong();
            CompletableFuture<?> answered = timeout > 0 ? bounded(future, timeout) : future;
            answered.whenComplete((r, e) -> {
                if (e != null) {
                    failed(method, args, e);
                }
            });
            return answered;
        }
        return result;
    }

    /**
     * The read's outcome, or BookKeeper's timeout error after {@code timeoutMillis}; the read itself is left to
     * finish (its future is BookKeeper's, not ours to complete).
     */
    private <T> CompletableFuture<T> bounded(CompletableFuture<T> read, long timeoutMillis) {
        CompletableFuture<T> answer = new CompletableFuture<>();
        read.whenComplete((r, e) -> {
            if (e != null) {
                answer.completeExceptionally(e);
            } else {
                answer.complete(r);
            }
        });
        // orTimeout drops its timer as soon as the read answers
        return answer.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).exceptionallyCompose(e -> {
            Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (t instanceof TimeoutException && !read.isDone()) {
                log.warn("bookie-cluster={} ledger={} read took longer than {} ms (oldLedgerReadTimeoutMs: the "
                        + "cluster is not the active one); failed", cluster, delegate.getId(), timeoutMillis);
                return CompletableFuture.failedFuture(BKException.create(BKException.Code.TimeoutException));
            }
            return CompletableFuture.failedFuture(t);
        });
    }

    private static boolean isRead(Method method) {
        String name = method.getName();
        return name.startsWith("read") || name.startsWith("batchRead") || name.startsWith("tryRead");
    }

    private void failed(Method method, Object[] args, Throwable error) {
        long now = System.nanoTime();
        long last = lastLogged.get();
        if (now - last < LOG_INTERVAL_NANOS || !lastLogged.compareAndSet(last, now)) {
            suppressed.incrementAndGet();
            return;
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        long more = suppressed.getAndSet(0);
        log.warn("bookie-cluster={} ledger={} {}{} failed: {}{}", cluster, delegate.getId(), method.getName(),
                args == null ? "" : Arrays.toString(args), cause.toString(),
                more > 0 ? " (" + more + " more failed reads of this ledger not logged)" : "");
    }
}
