package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bcswitch.routing.LedgerRouter;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.CreateBuilder;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.Test;

/**
 * The create listener (ledger attribution) hears of every managed-ledger data ledger, whichever API created it:
 * Pulsar 5.0's managed ledgers create theirs with the builder, earlier lines with the callback API.
 */
class RoutingBookKeeperCreateListenerTest {
    private static final String ML = "tenant/ns/persistent/topic";

    /** A cluster's client whose builder creates hand out ledger 42 (nothing is written anywhere). */
    private static BookKeeper clusterClient() {
        return new org.apache.bookkeeper.client.BcsForwardingBookKeeper() {
            @Override
            public CreateBuilder newCreateLedgerOp() {
                Object[] self = new Object[1];
                self[0] = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {CreateBuilder.class},
                        (proxy, m, args) -> m.getName().equals("execute")
                                ? CompletableFuture.completedFuture(Proxy.newProxyInstance(getClass().getClassLoader(),
                                        new Class<?>[] {WriteHandle.class}, (p, hm, ha) -> switch (hm.getName()) {
                                            case "getId" -> 42L;
                                            case "hashCode" -> 1;
                                            case "equals" -> p == ha[0];
                                            default -> null;
                                        }))
                                : self[0]);
                return (CreateBuilder) self[0];
            }
        };
    }

    private static List<String> createWith(Map<String, byte[]> customMetadata) throws Exception {
        BookKeeper b = clusterClient();
        LedgerRouter router = new LedgerRouter() {
            @Override
            public CompletableFuture<Target> forCreate() {
                return CompletableFuture.completedFuture(new Target("cluster-b", b));
            }

            @Override
            public CompletableFuture<Target> forLedger(long ledgerId) {
                return CompletableFuture.completedFuture(new Target("cluster-b", b));
            }
        };
        List<String> heard = new ArrayList<>();
        RoutingBookKeeper routing = new LineRoutingBookKeeper(router, null, () -> { },
                (ml, id, cluster) -> heard.add(ml + " " + id + " " + cluster), new LedgerHandleTracker());
        CreateBuilder create = routing.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1)
                .withAckQuorumSize(1).withPassword(new byte[0]);
        if (customMetadata != null) {
            create = create.withCustomMetadata(customMetadata);
        }
        assertEquals(42L, create.execute().get(10, TimeUnit.SECONDS).getId());
        return heard;
    }

    @Test
    void aDataLedgerCreatedWithTheBuilderIsHeardOf() throws Exception {
        assertEquals(List.of(ML + " 42 cluster-b"), createWith(Map.of(
                RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, ML.getBytes(StandardCharsets.UTF_8))));
    }

    @Test
    void cursorAndOtherLedgersAreNot() throws Exception {
        assertEquals(List.of(), createWith(Map.of(
                RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, ML.getBytes(StandardCharsets.UTF_8),
                RoutingBookKeeper.CURSOR_NAME_PROPERTY, "sub".getBytes(StandardCharsets.UTF_8))));
        assertEquals(List.of(), createWith(Map.of("application", "x".getBytes(StandardCharsets.UTF_8))));
        assertEquals(List.of(), createWith(null));
    }
}
