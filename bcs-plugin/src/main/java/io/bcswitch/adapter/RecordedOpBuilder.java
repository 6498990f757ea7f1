package io.bcswitch.adapter;

import io.bcswitch.routing.LedgerRouter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.CreateBuilder;
import org.apache.bookkeeper.client.api.DeleteBuilder;
import org.apache.bookkeeper.client.api.OpBuilder;
import org.apache.bookkeeper.client.api.OpenBuilder;
import org.apache.bookkeeper.client.api.ReadHandle;

/**
 * Builder-API support for the routing client. Callers set the ledger id after {@code newXxxOp()}, so the
 * cluster can only be chosen in {@code execute()}: the returned builder records every setter call and,
 * on {@code execute()}, picks the target client, replays the calls on that client's own builder and
 * returns its result (the real handle). Works for every setter of the BookKeeper builder interfaces,
 * including ones added in later releases, because it records calls by interface method.
 */
final class RecordedOpBuilder implements InvocationHandler {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RecordedOpBuilder.class);

    private record Call(Method method, Object[] args) {
    }

    private final List<Call> calls = new ArrayList<>();
    private final Function<RecordedOpBuilder, CompletableFuture<LedgerRouter.Target>> route;
    private final Function<BookKeeper, Object> newRealBuilder;

    private final String op;
    private final LedgerRouter router;
    private final LedgerHandleTracker tracker;
    private final Created created;

    private RecordedOpBuilder(String op, LedgerRouter router, LedgerHandleTracker tracker,
                              Function<RecordedOpBuilder, CompletableFuture<LedgerRouter.Target>> route,
                              Function<BookKeeper, Object> newRealBuilder, Created created) {
        this.op = op;
        this.created = created;
        this.router = router;
        this.tracker = tracker;
        this.route = route;
        this.newRealBuilder = newRealBuilder;
    }

    /** Told about each ledger a recorded create made: its cluster, the custom metadata it was given, its id. */
    @FunctionalInterface
    interface Created {
        void created(String cluster, java.util.Map<String, byte[]> customMetadata, long ledgerId);
    }

    private static final Created NOT_CREATED = (cluster, customMetadata, ledgerId) -> { };

    static CreateBuilder create(LedgerRouter router, LedgerHandleTracker tracker, Created created) {
        return proxy(CreateBuilder.class, new RecordedOpBuilder("create", router, tracker, b -> router.forCreate(),
                BookKeeper::newCreateLedgerOp, created));
    }

    static OpenBuilder open(LedgerRouter router, LedgerHandleTracker tracker) {
        return proxy(OpenBuilder.class, new RecordedOpBuilder("open", router, tracker,
                b -> router.forLedger(b.ledgerId()), BookKeeper::newOpenLedgerOp, NOT_CREATED));
    }

    static DeleteBuilder delete(LedgerRouter router, LedgerHandleTracker tracker) {
        return proxy(DeleteBuilder.class, new RecordedOpBuilder("delete", router, tracker,
                b -> router.forLedger(b.ledgerId()), BookKeeper::newDeleteLedgerOp, NOT_CREATED));
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, RecordedOpBuilder handler) {
        return (T) Proxy.newProxyInstance(RecordedOpBuilder.class.getClassLoader(), new Class<?>[] {type}, handler);
    }

    /** The custom metadata last given with {@code withCustomMetadata}; null when none was. */
    @SuppressWarnings("unchecked")
    private java.util.Map<String, byte[]> customMetadata() {
        java.util.Map<String, byte[]> metadata = null;
        for (Call c : calls) {
            if (c.method().getName().equals("withCustomMetadata") && c.args() != null && c.args().length == 1) {
                metadata = (java.util.Map<String, byte[]>) c.args()[0];
            }
        }
        return metadata;
    }

    /** Last ledger id set with {@code withLedgerId}; -1 when none was set. */
    long ledgerId() {
        long id = -1L;
        for (Call c : calls) {
            if (c.method().getName().equals("withLedgerId") && c.args() != null && c.args().length == 1) {
                id = ((Number) c.args()[0]).longValue();
            }
        }
        return id;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (ProxyIdentity.handles(method)) {
            return ProxyIdentity.invoke(proxy, method, args, () -> "RecordedOpBuilder" + calls);
        }
        if (method.getName().equals("execute") && method.getParameterCount() == 0) {
            boolean create = op.equals("create");
            return route.apply(this).thenCompose(target -> {
                if (create) {
                    tracker.createStarted(target.cluster());
                }
                return replay(target.client()).whenComplete((r, e) -> {
                    if (create) {
                        tracker.createDone(target.cluster());
                    }
                    if (e != null) {
                        // name the cluster and ledger: BookKeeper's own errors say neither
                        log.warn("bookie-cluster={} ledger={} {} failed: {}", target.cluster(),
                                ledgerId() >= 0 ? ledgerId() : "(new)", op, e.toString());
                    }
                }).thenApply(result -> {
                    if (op.equals("delete")) {
                        RoutedDeletes.deleted(router, tracker, target.cluster(), ledgerId());
                    }
                    if (create && result instanceof org.apache.bookkeeper.client.api.Handle h) {
                        created.created(target.cluster(), customMetadata(), h.getId());
                    }
                    return track(target, result);
                });
            });
        }
        calls.add(new Call(method, args));
        Class<?> ret = method.getReturnType();
        if (ret.isInstance(proxy)) {
            return proxy;
        }
        if (ret.isInterface()) {
            // e.g. CreateBuilder.makeAdv() -> CreateAdvBuilder: keep recording under the new type
            return Proxy.newProxyInstance(RecordedOpBuilder.class.getClassLoader(), new Class<?>[] {ret}, this);
        }
        throw new UnsupportedOperationException("routing client cannot record " + method);
    }

    /**
     * The handle {@code execute()} returned, tracked. An opened read handle is wrapped: its read failures are
     * logged with the cluster, and its close is seen.
     */
    private Object track(LedgerRouter.Target target, Object handle) {
        String cluster = target.cluster();
        if (handle instanceof ReadHandle read && op.equals("open")) {
            LedgerHandleTracker.Tracked[] tracked = new LedgerHandleTracker.Tracked[1];
            ReadHandle wrapped = ClusterNamedReadHandle.wrap(read, cluster, () -> tracked[0].closed.set(true),
                    () -> router.readTimeoutMillis(cluster));
            tracked[0] = tracker.opened(cluster, target.client(), read.getId(), wrapped, false, false);
            return wrapped;
        }
        if (handle instanceof org.apache.bookkeeper.client.api.WriteHandle w && op.equals("create")) {
            tracker.opened(cluster, target.client(), w.getId(), w, true, false);
        }
        return handle;
    }

    private CompletableFuture<Object> replay(BookKeeper client) {
        try {
            Object current = newRealBuilder.apply(client);
            for (Call c : calls) {
                current = c.method().invoke(current, c.args());
            }
            Method execute = OpBuilder.class.getMethod("execute");
            @SuppressWarnings("unchecked")
            CompletableFuture<Object> result = (CompletableFuture<Object>) execute.invoke(current);
            return result;
        } catch (InvocationTargetException e) {
            return CompletableFuture.failedFuture(e.getCause());
        } catch (ReflectiveOperationException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
