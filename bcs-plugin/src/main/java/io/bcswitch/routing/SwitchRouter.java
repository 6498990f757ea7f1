package io.bcswitch.routing;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.bookkeeper.client.api.BKException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LedgerRouter} over this broker's {@link Ownership} view and a {@link ClusterClientPool}.
 *
 * <p>Another broker may already have created ledgers in a range this broker has not heard of yet (the switch
 * directive reaches brokers one by one, and a broker that was cut off from the metadata store may have missed
 * several). For an id that may be in such a range the router first asks {@code refresh} for the latest ranges;
 * when they cannot be read the operation fails with a retryable error. It never sends an id to a cluster it only
 * guesses owns it: a wrong cluster answers "no such ledger", and the managed ledger drops a ledger it is told
 * does not exist.
 */
public final class SwitchRouter implements LedgerRouter {
    private static final Logger log = LoggerFactory.getLogger(SwitchRouter.class);

    private final Supplier<Ownership> ownership;
    private final Supplier<CompletableFuture<Ownership>> refresh;
    private final ClusterClientPool pool;

    private final long oldLedgerReadTimeoutMillis;

    public SwitchRouter(Supplier<Ownership> ownership, Supplier<CompletableFuture<Ownership>> refresh,
                        ClusterClientPool pool) {
        this(ownership, refresh, pool, 0);
    }

    /**
     * @param oldLedgerReadTimeoutMillis how long a read of a ledger on a cluster that is not the active one may take
     *                                   (0: BookKeeper's timeouts only): readers of an old cluster that is down fail
     *                                   fast
     */
    public SwitchRouter(Supplier<Ownership> ownership, Supplier<CompletableFuture<Ownership>> refresh,
                        ClusterClientPool pool, long oldLedgerReadTimeoutMillis) {
        this.oldLedgerReadTimeoutMillis = oldLedgerReadTimeoutMillis;
        this.ownership = ownership;
        this.refresh = refresh;
        this.pool = pool;
    }

    @Override
    public long readTimeoutMillis(String cluster) {
        Ownership o = ownership.get();
        return o == null || cluster.equals(o.activeCluster()) ? 0 : oldLedgerReadTimeoutMillis;
    }

    @Override
    public CompletableFuture<Target> forCreate() {
        String active = ownership.get().activeCluster();
        return pool.forCreate(active).handle((client, e) -> {
            if (e != null) {
                throw new java.util.concurrent.CompletionException(new UnroutableLedgerException(
                        BKException.Code.MetaStoreException,
                        "bookie-cluster=" + active + " (active) has no usable BookKeeper client: " + e));
            }
            return new Target(active, client);
        });
    }

    @Override
    public CompletableFuture<Target> forLedger(long ledgerId) {
        Ownership o = ownership.get();
        if (o.mayBeInUnknownRange(ledgerId)) {
            return refresh.get().handle((latest, e) -> {
                if (e != null) {
                    String msg = "ledger " + ledgerId + " may be in an id range this broker does not know yet, and "
                            + "the range table cannot be read now (" + e + "); retry later";
                    log.warn(msg);
                    throw new java.util.concurrent.CompletionException(
                            new UnroutableLedgerException(BKException.Code.MetaStoreException, msg));
                }
                return latest;
            }).thenCompose(latest -> route(latest, ledgerId));
        }
        return route(o, ledgerId);
    }

    @Override
    public CompletableFuture<Optional<Target>> originalOf(long ledgerId) {
        Ownership o = ownership.get();
        String home = o.relocations().get(ledgerId);
        Optional<String> issuer = o.ranges().owner(ledgerId);
        if (home == null || issuer.isEmpty() || issuer.get().equals(home) || o.retired().contains(issuer.get())) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return pool.get(issuer.get()).handle((client, e) -> e != null ? Optional.<Target>empty()
                : Optional.of(new Target(issuer.get(), client)));
    }

    @Override
    public CompletableFuture<java.util.List<Target>> copyHoldersOf(long ledgerId) {
        Ownership o = ownership.get();
        String home = o.relocations().get(ledgerId);
        if (home == null) {
            return CompletableFuture.completedFuture(java.util.List.of());
        }
        Optional<String> issuer = o.ranges().owner(ledgerId);
        java.util.List<CompletableFuture<Optional<Target>>> each = o.ranges().ranges().stream()
                .map(io.bcswitch.registry.IdRange::cluster).distinct()
                .filter(c -> !c.equals(home) && !issuer.map(c::equals).orElse(false) && !o.retired().contains(c))
                .map(c -> pool.get(c).handle((client, e) -> e != null ? Optional.<Target>empty()
                        : Optional.of(new Target(c, client))))
                .toList();
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                .map(CompletableFuture::join).flatMap(Optional::stream).toList());
    }

    private CompletableFuture<Target> route(Ownership o, long ledgerId) {
        Optional<String> owner = o.owner(ledgerId);
        if (owner.isEmpty()) {
            String msg = "ledger " + ledgerId + " is not in the id range of any registered bookie cluster";
            log.warn(msg);
            return CompletableFuture.failedFuture(
                    new UnroutableLedgerException(BKException.Code.IllegalOpException, msg));
        }
        String cluster = owner.get();
        return pool.get(cluster).handle((client, e) -> {
            if (e != null) {
                String msg = "ledger " + ledgerId + " is on bookie-cluster=" + cluster
                        + ", which has no usable BookKeeper client: " + e;
                log.warn(msg);
                throw new java.util.concurrent.CompletionException(
                        new UnroutableLedgerException(BKException.Code.MetaStoreException, msg));
            }
            return new Target(cluster, client);
        });
    }
}
